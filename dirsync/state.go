package dirsync

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
)

// stateVersion is the format of the state file.
const stateVersion = 1

// state is the content of the state file: which store the directory is
// synced with, and the base of each path, the content_sha256 both sides
// last agreed on.
type state struct {
	Version int               `json:"version"`
	StoreID string            `json:"memory_store_id"`
	Base    map[string]string `json:"base"` // memory path → content_sha256
}

// loadState reads the state file; a missing one is a first sync.
func loadState(root *os.Root, storeID string) (*state, error) {
	st := &state{Version: stateVersion, StoreID: storeID, Base: map[string]string{}}
	if root == nil {
		return st, nil
	}
	data, err := root.ReadFile(StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, localErr("read "+StateFile, err)
	}
	var got state
	if err := json.Unmarshal(data, &got); err != nil || got.Version != stateVersion || got.StoreID == "" {
		return nil, localErr("read "+StateFile, fmt.Errorf("not a sync state of version %d; remove it to sync afresh (no deletion propagates on that first sync)", stateVersion))
	}
	if got.StoreID != storeID {
		return nil, fmt.Errorf("%w: the directory is synced with store %s, not %s; remove %s to sync it with %s",
			ErrOtherStore, got.StoreID, storeID, StateFile, storeID)
	}
	for p, sha := range got.Base {
		if memstore.ValidatePath(p) != nil || len(sha) != 64 {
			return nil, localErr("read "+StateFile, fmt.Errorf("bad entry for %q; remove the file to sync afresh", p))
		}
	}
	if got.Base == nil {
		got.Base = map[string]string{}
	}
	return &got, nil
}

// save writes the state file atomically: a synced temporary file renamed
// over it.
func (st *state) save(root *os.Root) error {
	out := state{Version: stateVersion, StoreID: st.StoreID, Base: maps.Clone(st.Base)}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return localErr("write "+StateFile, err)
	}
	data = append(data, '\n')
	if err := private.WriteFileIn(root, StateFile, data, ownTemp); err != nil {
		return localErr("write "+StateFile, err)
	}
	return nil
}

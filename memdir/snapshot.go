package memdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
	"github.com/memstore/memstore/internal/private"
)

// A snapshot is a copy of a memory directory's top-level files that a
// project commits (or publishes to a store) so that everyone on it starts
// with the same memory, in Claude Code's layout
// (docs/memory-directory.md, Snapshots): the files, plus snapshot.json
// saying when it was made. A memory directory initialized or replaced
// from a snapshot records which one in .snapshot-synced.json.
const (
	SnapshotMetaName = "snapshot.json"
	SyncedMetaName   = ".snapshot-synced.json"
)

// The limits on a snapshot, which comes from a repository and so is
// untrusted when applied: its files, and each file's size (a memory's).
const (
	MaxSnapshotFiles     = 1000
	MaxSnapshotFileBytes = memstore.MaxContentBytes
)

// snapshotTimeLayout is how a snapshot's time is written: JavaScript's
// Date.toISOString, as Claude Code writes it.
const snapshotTimeLayout = "2006-01-02T15:04:05.000Z"

// snapshotMeta is snapshot.json.
type snapshotMeta struct {
	UpdatedAt string `json:"updatedAt"`
}

// syncedMeta is .snapshot-synced.json.
type syncedMeta struct {
	SyncedFrom string `json:"syncedFrom"`
}

// SnapshotDir is where the project in o's working directory keeps the
// snapshot of the agent named agent (Claude Code's
// .claude/agent-memory-snapshots/<agent>/), or, with agent "", of the
// project's own memory directory (.claude/memory-snapshot/).
func SnapshotDir(o Options, agent string) (string, error) {
	r, err := newResolver(o)
	if err != nil {
		return "", err
	}
	elems := []string{".claude", "memory-snapshot"}
	if agent != "" {
		elems = []string{".claude", "agent-memory-snapshots", agentDirName(agent)}
	}
	dir, err := checkoutDir(r.workDir, elems...)
	if err != nil {
		return "", err
	}
	return dir + string(filepath.Separator), nil
}

// The actions CheckSnapshot suggests, Claude Code's.
const (
	SnapshotNone         = "none"          // no snapshot, or the one applied is the newest
	SnapshotInitialize   = "initialize"    // the directory has no memory: apply it
	SnapshotPromptUpdate = "prompt-update" // a newer snapshot than the one applied: ask first
)

// SnapshotState is how a memory directory stands against a snapshot.
type SnapshotState struct {
	// Action is one of SnapshotNone, SnapshotInitialize, SnapshotPromptUpdate.
	Action string `json:"action"`
	// Snapshot is the snapshot's time ("" when there is none); Applied,
	// the time of the snapshot the directory was last initialized or
	// replaced from ("" when never).
	Snapshot string `json:"snapshot"`
	Applied  string `json:"applied"`
	// HasMemory reports whether the directory holds a memory (a
	// top-level .md file).
	HasMemory bool `json:"has_memory"`
	// Files is the number of files in the snapshot.
	Files int `json:"files"`
}

// CreateSnapshot writes the top-level files of the memory directory dir
// (MEMORY.md and the topic files; not logs/, team/ or hidden files) to the
// snapshot directory snap, replacing what was there, stamped with now. It
// refuses, writing nothing, when a file looks like it holds a credential:
// a snapshot is meant to be committed or published.
func CreateSnapshot(dir, snap string, now time.Time) (SnapshotState, error) {
	files, err := snapshotFiles(dir, false)
	if err != nil {
		return SnapshotState{}, err
	}
	if len(files) == 0 {
		return SnapshotState{}, fmt.Errorf("%s holds no memory to snapshot (no top-level .md file)", dir)
	}
	stamp := now.UTC().Format(snapshotTimeLayout)
	meta, err := json.Marshal(snapshotMeta{UpdatedAt: stamp})
	if err != nil {
		return SnapshotState{}, err
	}
	files[SnapshotMetaName] = append(meta, '\n')
	if err := replaceDir(snap, files); err != nil {
		return SnapshotState{}, err
	}
	return SnapshotState{Action: SnapshotNone, Snapshot: stamp, HasMemory: true, Files: len(files) - 1}, nil
}

// CheckSnapshot says what to do with the snapshot in snap for the memory
// directory dir: initialize a directory without memory, prompt before
// replacing memory with a newer snapshot than the one applied (or when
// none was recorded), else nothing.
func CheckSnapshot(dir, snap string) (SnapshotState, error) {
	var st SnapshotState
	stamp, err := readSnapshotTime(snap)
	if err != nil || stamp == "" {
		st.Action = SnapshotNone
		return st, err
	}
	st.Snapshot = stamp
	files, err := snapshotFiles(snap, true)
	if err != nil {
		return st, err
	}
	st.Files = len(files)
	if st.HasMemory, err = hasMemory(dir); err != nil {
		return st, err
	}
	st.Applied = readSyncedTime(dir)
	switch {
	case !st.HasMemory:
		st.Action = SnapshotInitialize
	case st.Applied == "" || newerStamp(stamp, st.Applied):
		st.Action = SnapshotPromptUpdate
	default:
		st.Action = SnapshotNone
	}
	return st, nil
}

// ApplySnapshot makes the memory directory dir the snapshot in snap: its
// top-level .md files that the snapshot does not have are removed, the
// snapshot's files written (each replaced atomically), and the
// snapshot's time recorded in .snapshot-synced.json. logs/, team/ and
// hidden files are left alone. The snapshot is checked whole before
// anything is written: a name that is not a plain file name, a file too
// large, not text, or that looks like it holds a credential refuses it.
func ApplySnapshot(dir, snap string) (SnapshotState, error) {
	stamp, err := readSnapshotTime(snap)
	if err != nil {
		return SnapshotState{}, err
	}
	if stamp == "" {
		return SnapshotState{}, fmt.Errorf("%s is not a snapshot: it has no %s", snap, SnapshotMetaName)
	}
	files, err := snapshotFiles(snap, true)
	if err != nil {
		return SnapshotState{}, err
	}
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		return SnapshotState{}, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return SnapshotState{}, err
	}
	defer root.Close()
	// A name the directory holds as a directory (or another non-file)
	// cannot take the snapshot's file: refused before anything changes.
	for _, name := range sortedKeys(files) {
		fi, err := root.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return SnapshotState{}, err
		case !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
			return SnapshotState{}, fmt.Errorf("the snapshot's file %s would replace %s, which is not a file; nothing was applied: move it, or fix the snapshot", name, filepath.Join(dir, name))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return SnapshotState{}, err
	}
	for _, e := range entries {
		name := e.Name()
		if _, keep := files[name]; keep || !isMemoryFile(e) {
			continue
		}
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return SnapshotState{}, err
		}
	}
	for _, name := range sortedKeys(files) {
		if err := private.WriteFileIn(root, name, files[name]); err != nil {
			return SnapshotState{}, err
		}
	}
	meta, err := json.Marshal(syncedMeta{SyncedFrom: stamp})
	if err != nil {
		return SnapshotState{}, err
	}
	if err := private.WriteFileIn(root, SyncedMetaName, append(meta, '\n')); err != nil {
		return SnapshotState{}, err
	}
	return SnapshotState{Action: SnapshotNone, Snapshot: stamp, Applied: stamp, HasMemory: true, Files: len(files)}, nil
}

// snapshotFiles reads the top-level regular, non-hidden files of dir (a
// missing dir has none), without snapshot.json when snapshot is set.
// Symbolic links are skipped: a link to a file elsewhere must not carry
// that file into a snapshot. Every file must be text, within
// MaxSnapshotFileBytes, with a name that may hold a memory and content
// that holds no credential.
func snapshotFiles(dir string, snapshot bool) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || localfile.Hidden(name) || snapshot && name == SnapshotMetaName {
			continue
		}
		if len(files) == MaxSnapshotFiles {
			return nil, fmt.Errorf("%s has more than %d files; a snapshot holds at most %d", dir, MaxSnapshotFiles, MaxSnapshotFiles)
		}
		if why := localfile.CredentialName(name); why != "" {
			return nil, fmt.Errorf("%s: %s", filepath.Join(dir, name), why)
		}
		b, err := localfile.ReadAtMost(filepath.Join(dir, name), MaxSnapshotFileBytes)
		if err != nil {
			return nil, err
		}
		if !localfile.Text(b) {
			return nil, fmt.Errorf("%s is %s", filepath.Join(dir, name), localfile.NotText)
		}
		if kind, found := memstore.FindCredential(string(b)); found {
			return nil, fmt.Errorf("%s looks like it holds a credential (%s): take it out, then run again", filepath.Join(dir, name), kind)
		}
		files[name] = b
	}
	return files, nil
}

// hasMemory reports whether dir has a top-level .md file, which is what
// Claude Code counts as memory being there.
func hasMemory(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if isMemoryFile(e) {
			return true, nil
		}
	}
	return false, nil
}

// isMemoryFile reports whether e, a top-level entry of a memory
// directory, is a memory: a regular, non-hidden .md file.
func isMemoryFile(e fs.DirEntry) bool {
	return e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && !localfile.Hidden(e.Name())
}

// readSnapshotTime is the time in snap's snapshot.json, "" when there is
// no such file. A file that does not parse, or whose time is not one, is
// an error: the snapshot is broken and should be fixed, not ignored.
func readSnapshotTime(snap string) (string, error) {
	b, err := os.ReadFile(filepath.Join(snap, SnapshotMetaName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var m snapshotMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%s: %v", filepath.Join(snap, SnapshotMetaName), err)
	}
	if _, err := time.Parse(time.RFC3339Nano, m.UpdatedAt); err != nil {
		return "", fmt.Errorf("%s: updatedAt %q is not a time (want RFC 3339, as 2026-01-02T15:04:05.000Z)", filepath.Join(snap, SnapshotMetaName), m.UpdatedAt)
	}
	return m.UpdatedAt, nil
}

// readSyncedTime is the time of the snapshot dir was last made from, ""
// when none is recorded or the record does not parse (then the next newer
// snapshot prompts, as with none).
func readSyncedTime(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, SyncedMetaName))
	if err != nil {
		return ""
	}
	var m syncedMeta
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.SyncedFrom
}

// newerStamp reports whether the snapshot time a is after b; a b that is
// not a time counts as older.
func newerStamp(a, b string) bool {
	ta, err := time.Parse(time.RFC3339Nano, a)
	if err != nil {
		return false
	}
	tb, err := time.Parse(time.RFC3339Nano, b)
	return err != nil || ta.After(tb)
}

// replaceDir makes dir hold exactly files: they are written to a new
// directory beside it, which then takes dir's place, so a reader sees the
// old snapshot or the new one, never a mix.
func replaceDir(dir string, files map[string][]byte) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range sortedKeys(files) {
		if err := private.WriteFile(filepath.Join(tmp, name), files[name]); err != nil {
			return err
		}
	}
	old := tmp + ".old"
	switch err := os.Rename(dir, old); {
	case errors.Is(err, fs.ErrNotExist):
		old = ""
	case err != nil:
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

package memstore

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Reviewing a dream: a create_new dream leaves its input store alone and
// writes a copy, its output store. Its proposed changes are the paths
// where the output store now differs from the copy it started from (the
// base: the output store's versions made at or before the dream's
// start, by the copy); a person chooses some, and they are applied to
// the input store, each one conditional on the input's memory at that
// path being still as the copy found it. A memory of the input changed
// since the dream began is a conflict: shown, never overwritten.

// ChangeKind is what happened to a path from one state of a store to
// another (package storediff compares two stores with the same kinds).
type ChangeKind string

// The kinds of change.
const (
	ChangeAdded   ChangeKind = "added"   // the path is new
	ChangeRemoved ChangeKind = "removed" // the path is gone
	ChangeChanged ChangeKind = "changed" // the path's content differs
)

// ChangeState is where a dream's proposed change stands against its
// input store.
type ChangeState string

// The states of a proposed change, and of an applied one.
const (
	// ChangeReady: the input's memory at the path is as the dream found
	// it; the change can be applied.
	ChangeReady ChangeState = "ready"
	// ChangeConflict: the input's memory at the path changed since the
	// dream began (or appeared, or went); the change is not applied.
	ChangeConflict ChangeState = "conflict"
	// ChangeApplied: the input already holds what the dream proposes
	// (applied before, or made alike by someone else).
	ChangeApplied ChangeState = "applied"
)

// A ProposedChange is one path that a dream changed in its output store.
// The memories are without their content.
type ProposedChange struct {
	Path string
	Kind ChangeKind // from the base to the output store
	// BaseSHA256 is the content hash of the copy the dream started from
	// at Path, "" when the dream created the path.
	BaseSHA256 string
	// Output is the output store's memory at Path, nil when the dream
	// removed it; Input the input store's memory at Path now, nil when
	// it has none.
	Output, Input *Memory
	State         ChangeState
}

// An AppliedChange is the outcome of applying one proposed change:
// ChangeApplied (a new version of the input store, by the caller, or
// nothing to do), or ChangeConflict with a Message saying why.
type AppliedChange struct {
	Path    string
	State   ChangeState
	Message string
}

// MaxApplyPaths bounds the paths of one apply: the changes a store can
// hold (its memories before and after), at the default limit.
const MaxApplyPaths = 2 * DefaultMaxMemoriesPerStore

// DreamReviewService reviews and applies a create_new dream's changes.
// Core implements it; the console calls it.
type DreamReviewService interface {
	// DreamChanges returns dream id and its proposed changes, by path,
	// each with its state against the input store now. The caller must
	// be able to read dreams and both stores. EInvalid for a dream that
	// has no output store of its own (update_existing: its changes are
	// versions of the input) or has not started.
	DreamChanges(ctx context.Context, c *Caller, id string) (*Dream, []ProposedChange, error)
	// ApplyDreamChanges applies the proposed changes at paths to the
	// input store of dream id, as the caller (each one a new version,
	// conditional on the input's memory being as the dream found it), and
	// says for each what became of it. The dream must be completed,
	// failed or canceled (EInvalid while it runs). A path the dream did
	// not change is EInvalid, before anything is applied. An error of a
	// write other than a conflict (the input store archived or full)
	// stops there, returning what was done before it.
	ApplyDreamChanges(ctx context.Context, c *Caller, id string, paths []string) ([]AppliedChange, error)
}

var _ DreamReviewService = (*Core)(nil)

// DreamChanges implements DreamReviewService.
func (co *Core) DreamChanges(ctx context.Context, c *Caller, id string) (*Dream, []ProposedChange, error) {
	d, err := co.Dream(ctx, c, id)
	if err != nil {
		return nil, nil, err
	}
	if err := reviewable(d); err != nil {
		return nil, nil, err
	}
	changes, err := co.proposedChanges(ctx, c, d.InputStoreID, d.OutputStoreID, *d.StartedAt)
	return d, changes, err
}

// reviewable refuses a dream whose changes cannot be reviewed apart from
// its input.
func reviewable(d *Dream) error {
	switch {
	case d.OutputBehavior != OutputCreateNew || d.OutputStoreID == d.InputStoreID:
		return Errorf(EInvalid, "dream %s wrote to its input store itself (output_behavior %s): its changes are already versions of memory store %s; see them in its history", d.ID, d.OutputBehavior, d.InputStoreID)
	case d.StartedAt == nil || d.OutputStoreID == "":
		return Errorf(EInvalid, "dream %s is %s and has not started: it has no changes yet", d.ID, d.Status)
	}
	return nil
}

// ApplyDreamChanges implements DreamReviewService.
func (co *Core) ApplyDreamChanges(ctx context.Context, c *Caller, id string, paths []string) ([]AppliedChange, error) {
	if err := c.CanDream(true); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, Errorf(EInvalid, "no change chosen: give the path of at least one proposed change")
	}
	if len(paths) > MaxApplyPaths {
		return nil, Errorf(EInvalid, "%d paths were given; one apply takes at most %d (MaxApplyPaths): apply them in parts", len(paths), MaxApplyPaths)
	}
	d, changes, err := co.DreamChanges(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if !d.Status.Final() {
		return nil, Errorf(EInvalid, "dream %s is %s: its changes can be applied once it has stopped; wait for it, or cancel it", d.ID, d.Status)
	}
	byPath := make(map[string]*ProposedChange, len(changes))
	for i := range changes {
		byPath[changes[i].Path] = &changes[i]
	}
	chosen := make([]*ProposedChange, 0, len(paths))
	for _, p := range paths {
		ch := byPath[p]
		if ch == nil {
			return nil, Errorf(EInvalid, "dream %s proposes no change at %q; choose among its proposed changes", d.ID, shortName(p))
		}
		if !slices.Contains(chosen, ch) {
			chosen = append(chosen, ch)
		}
	}
	out := make([]AppliedChange, 0, len(chosen))
	for _, ch := range chosen {
		a, err := co.applyChange(ctx, c, d, ch)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// applyChange applies one proposed change to the input store, as c,
// conditional on the input's memory at the path being the base.
func (co *Core) applyChange(ctx context.Context, c *Caller, d *Dream, ch *ProposedChange) (AppliedChange, error) {
	a := AppliedChange{Path: ch.Path, State: ch.State}
	switch ch.State {
	case ChangeApplied:
		return a, nil
	case ChangeConflict:
		a.Message = conflictMessage(ch)
		return a, nil
	}
	var err error
	switch {
	case ch.Output == nil: // the dream removed the path
		err = co.DeleteMemory(ctx, c, d.InputStoreID, ch.Input.ID, ch.BaseSHA256)
	default:
		var m *Memory
		if m, err = co.Memory(ctx, c, d.OutputStoreID, ch.Output.ID); err != nil {
			if ErrorCode(err) == ENotFound {
				err = Errorf(EInvalid, "the memory at %q of the dream's output store was deleted meanwhile; review the dream again", shortName(ch.Path))
			}
			return a, err
		}
		switch {
		case ch.Input == nil: // the dream added the path: only if it is still free
			_, err = co.CreateMemory(ctx, c, d.InputStoreID, MemoryCreate{Path: ch.Path, Content: m.Content, IfNotExists: true})
		case ch.BaseSHA256 == "": // never unconditional: no base, no overwrite
			err = Errorf(EPreconditionFailed, "the input store has a memory at %q that the dream did not start from", shortName(ch.Path))
		default:
			_, err = co.UpdateMemory(ctx, c, d.InputStoreID, ch.Input.ID, MemoryUpdate{Content: &m.Content, IfSHA256: ch.BaseSHA256})
		}
	}
	switch ErrorCode(err) {
	case "":
		a.State = ChangeApplied
		return a, nil
	case EPreconditionFailed, ENotFound, EPathConflict:
		// Changed between the review and the write: the same conflict.
		a.State, a.Message = ChangeConflict, "the input store's memory at this path changed while the change was applied: "+ErrorMessage(err)
		return a, nil
	}
	return a, err
}

// conflictMessage says why a proposed change is a conflict.
func conflictMessage(ch *ProposedChange) string {
	switch {
	case ch.BaseSHA256 == "" && ch.Input != nil:
		return "the dream created this path, and the input store has a memory there now, made since the dream began"
	case ch.Input == nil:
		return "the input store's memory at this path was deleted (or moved) since the dream began"
	}
	return "the input store's memory at this path was changed since the dream began (version " + ch.Input.VersionID + ")"
}

// proposedChanges compares the output store now with its base, the
// versions made at or before since, and each change with the input
// store now. It holds the three stores' listings, without content.
func (co *Core) proposedChanges(ctx context.Context, c *Caller, inputID, outputID string, since time.Time) ([]ProposedChange, error) {
	if err := c.CanRead(inputID); err != nil {
		return nil, err
	}
	if err := c.CanRead(outputID); err != nil {
		return nil, err
	}
	base := map[string]string{} // path → content hash of the copy
	f := VersionFilter{Operation: OpCreated, CreatedAtLTE: &since, Limit: MaxPageSize}
	for {
		page, err := co.b.Versions(ctx, c.WorkspaceID, outputID, f)
		if err != nil {
			return nil, err
		}
		for _, v := range page.Items {
			// A redacted version names no path: its path counts as
			// created by the dream, so a memory at it in the input is
			// a conflict, never overwritten.
			if v.Path != "" && v.HasContent {
				base[v.Path] = v.ContentSHA256
			}
		}
		if f.Page = page.Next; f.Page == "" {
			break
		}
	}
	output, err := co.liveMemories(ctx, c.WorkspaceID, outputID)
	if err != nil {
		return nil, err
	}
	input, err := co.liveMemories(ctx, c.WorkspaceID, inputID)
	if err != nil {
		return nil, err
	}
	var changes []ProposedChange
	add := func(path string) {
		sum, had := base[path]
		out := output[path]
		ch := ProposedChange{Path: path, BaseSHA256: sum, Output: out, Input: input[path]}
		switch {
		case !had && out == nil:
			return
		case !had:
			ch.Kind = ChangeAdded
		case out == nil:
			ch.Kind = ChangeRemoved
		case out.ContentSHA256 == sum:
			return // the dream left it as it was
		default:
			ch.Kind = ChangeChanged
		}
		in := ch.Input
		switch {
		case sameContent(in, out):
			ch.State = ChangeApplied
		case sameContent(in, &Memory{ContentSHA256: sum}) && had || in == nil && !had:
			ch.State = ChangeReady
		default:
			ch.State = ChangeConflict
		}
		changes = append(changes, ch)
	}
	for p := range base {
		add(p)
	}
	for p := range output {
		if _, ok := base[p]; !ok {
			add(p)
		}
	}
	slices.SortFunc(changes, func(a, b ProposedChange) int { return strings.Compare(a.Path, b.Path) })
	return changes, nil
}

// sameContent reports whether two memories (nil: none) hold the same
// content, or are both none.
func sameContent(a, b *Memory) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ContentSHA256 == b.ContentSHA256
}

// liveMemories is a store's live memories by path, without content,
// read page by page (trusted: the caller's access is checked).
func (co *Core) liveMemories(ctx context.Context, workspaceID, storeID string) (map[string]*Memory, error) {
	mems := map[string]*Memory{}
	f := MemoryFilter{Limit: MaxPageSize}
	for {
		page, err := co.b.Memories(ctx, workspaceID, storeID, f)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if it.Memory != nil {
				mems[it.Memory.Path] = it.Memory
			}
		}
		if f.Page = page.Next; f.Page == "" {
			return mems, nil
		}
	}
}

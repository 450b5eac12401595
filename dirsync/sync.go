package dirsync

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
)

// listPageSize is the largest page of a content-free listing: a pass with
// nothing to do costs one request per hundred memories.
const listPageSize = 100

// workers is how many paths a pass works on at once: enough to hide the
// round trips of a first sync, few enough to be gentle with a server.
const workers = 8

// syncer is one run of Sync.
type syncer struct {
	o     Options
	tree  *localTree
	st    *state
	stamp string // UTC time in conflict copies' names
	// withContent says that this pass's listing holds the memories'
	// content (a full export), which pulls then write without a request.
	withContent bool

	mu  sync.Mutex // guards st.Base and rep while a pass runs its tasks
	rep *Report
}

func newSyncer(o Options) (*syncer, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &syncer{o: o}, nil
}

// run opens the directory, locks it and plans and executes passes until
// one completes without another writer moving under it, or maxPasses.
func (s *syncer) run(ctx context.Context) (*Report, error) {
	s.rep = &Report{StoreID: s.o.StoreID, Dir: s.o.Dir, Scope: s.o.Scope, DryRun: s.o.DryRun,
		Changes: []Change{}, Conflicts: []Conflict{}, Skipped: []Skip{}}
	root, err := openDir(&s.o)
	if err != nil {
		return s.rep, err
	}
	if root != nil {
		defer root.Close()
	}
	s.tree = &localTree{root: root}
	if !s.o.DryRun {
		unlock, err := lock(root)
		if err != nil {
			return s.rep, err
		}
		defer unlock()
	}
	if s.st, err = loadState(root, s.o.StoreID); err != nil {
		return s.rep, err
	}
	s.stamp = s.o.Now().UTC().Format(conflictTimeFormat)
	for pass := 1; ; pass++ {
		s.rep.Passes = pass
		raced, err := s.pass(ctx)
		if !s.o.DryRun {
			// Saved after a failed pass too: what was done is agreed.
			if serr := s.st.save(root); err == nil {
				err = serr
			}
		}
		if err != nil {
			return s.rep, err
		}
		if len(raced) == 0 || s.o.DryRun {
			break
		}
		if pass == maxPasses {
			for _, p := range raced {
				s.rep.Skipped = append(s.rep.Skipped, Skip{Path: p, Side: "remote",
					Reason: "changed again during the sync; the next sync takes it up"})
			}
			break
		}
	}
	sortReport(s.rep)
	return s.rep, nil
}

// task is what a pass decided for one path.
type task struct {
	path   string
	op     string // an Op*, or opConflict
	local  string // sha256 of the file when planned, "" for none
	base   string
	remote *memstore.Memory // as listed, without content; nil for none
	note   string
}

// opConflict is a task for a file changed on both sides (not an index).
const opConflict = "conflict"

// pass plans every path and carries out the plan. It returns the paths
// where another writer moved between the plan and the change, for the
// next pass.
func (s *syncer) pass(ctx context.Context) ([]string, error) {
	s.rep.Skipped = s.rep.Skipped[:0] // each pass finds them afresh
	// The listing waits on the network and the scan on the disk: both
	// at once.
	var (
		remote  map[string]*memstore.Memory
		listErr error
		listed  = make(chan struct{})
	)
	go func() {
		defer close(listed)
		remote, listErr = s.list(ctx)
	}()
	sc, err := s.tree.scan(s)
	<-listed
	if err != nil {
		return nil, err
	}
	if listErr != nil {
		return nil, listErr
	}
	s.rep.Skipped = append(s.rep.Skipped, sc.skipped...)

	// Paths neither side may touch: refused remote paths and paths the
	// local side blocks. Their base stays as it is.
	excluded := map[string]bool{}
	for p := range remote {
		if why := s.pathProblem(p); why != "" {
			s.skip(Skip{Path: p, Side: "remote", Reason: "not written here: " + why})
			excluded[p] = true
		} else if why := sc.isBlocked(p); why != "" {
			if _, self := sc.blocked[p]; !self {
				s.skip(Skip{Path: p, Side: "remote", Reason: "not written here: a directory above it is " + why})
			}
			excluded[p] = true
		}
	}
	for p := range s.st.Base {
		if sc.isBlocked(p) != "" {
			excluded[p] = true
		}
	}

	tasks, unchanged := s.plan(sc.files, remote, excluded)
	s.rep.Unchanged = unchanged
	if s.o.DryRun {
		s.report(tasks)
		return nil, nil
	}
	return s.execute(ctx, tasks)
}

// list lists the store: through the export stream when the service has
// one (one request, one snapshot), else page by page without content. A
// first sync, which has no base, exports the full view: a new mount
// pulls most of the store, and its memories then come with their
// content (s.withContent), held until written, instead of one request
// each. Other syncs export the basic view and read the few memories they
// pull one by one.
func (s *syncer) list(ctx context.Context) (map[string]*memstore.Memory, error) {
	out := map[string]*memstore.Memory{}
	if es, ok := s.o.Memories.(memstore.ExportService); ok {
		full := len(s.st.Base) == 0
		err := es.ExportMemories(ctx, s.o.Caller, s.o.StoreID, full, memstore.ExportFunc(func(m *memstore.Memory) error {
			out[m.Path] = m
			return nil
		}))
		if err == nil {
			s.withContent = full
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, remoteErr("export store "+s.o.StoreID, err)
		}
		// A server without the export stream, or too busy for one now:
		// the list does.
		clear(out)
	}
	s.withContent = false
	f := memstore.MemoryFilter{Limit: listPageSize}
	for {
		page, err := s.o.Memories.Memories(ctx, s.o.Caller, s.o.StoreID, f)
		if err != nil {
			return nil, remoteErr("list store "+s.o.StoreID, err)
		}
		for _, it := range page.Items {
			if it.Memory != nil {
				out[it.Memory.Path] = it.Memory
			}
		}
		if page.Next == "" || page.Next == f.Page {
			return out, nil
		}
		f.Page = page.Next
	}
}

// plan decides every path three ways (base, local, remote) and returns
// the tasks, in path order, and how many paths were already in step.
func (s *syncer) plan(local map[string]string, remote map[string]*memstore.Memory, excluded map[string]bool) ([]task, int) {
	paths := make([]string, 0, len(local)+len(remote)+len(s.st.Base))
	for p := range local {
		paths = append(paths, p)
	}
	for p := range remote {
		paths = append(paths, p)
	}
	for p := range s.st.Base {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)

	var tasks []task
	unchanged := 0
	for _, p := range paths {
		if excluded[p] {
			continue
		}
		t := task{path: p, local: local[p], base: s.st.Base[p], remote: remote[p]}
		r := ""
		if t.remote != nil {
			r = t.remote.ContentSHA256
		}
		l, b := t.local, t.base
		switch {
		case l == r:
			// In step; the base follows (a first sync, or both sides made
			// the same change).
			if l == "" {
				delete(s.st.Base, p)
			} else {
				s.st.Base[p] = l
				unchanged++
			}
			continue
		case l == b && r != "":
			t.op = OpPull
		case l == b:
			t.op = OpDeleteLocal
		case r == b && l != "" && r != "":
			t.op = OpPush
		case r == b && l != "":
			t.op = OpCreate
		case r == b:
			t.op = OpDeleteRemote
		// Both changed.
		case l == "":
			t.op, t.note = OpPull, "restored" // an edit beats a deletion
		case r == "":
			t.op, t.note = OpCreate, "re-created"
		case path.Base(p) == indexName:
			t.op = OpMerge
		default:
			t.op = opConflict
		}
		tasks = append(tasks, t)
	}
	return tasks, unchanged
}

// report records the tasks of a dry run as if done, a file that would
// not be uploaded for its content as skipped, as a sync would.
func (s *syncer) report(tasks []task) {
	for _, t := range tasks {
		uploads := t.op == OpPush || t.op == OpCreate || t.op == opConflict && s.o.Prefer == PreferLocal
		if uploads {
			if data, err := s.tree.read(t.path[1:]); err == nil && data != nil && !s.secretFree(t, string(data)) {
				continue
			}
		}
		if t.op == opConflict {
			s.rep.Conflicts = append(s.rep.Conflicts, Conflict{Path: t.path, Winner: s.o.Prefer,
				Kept: conflictCopyName(t.path[1:], s.o.Device, s.stamp, 1)})
			continue
		}
		s.rep.Changes = append(s.rep.Changes, Change{Path: t.path, Op: t.op, Note: t.note})
	}
}

// outcome is how a task ended, short of a failure of the whole pass.
type outcome int

const (
	done    outcome = iota
	raced           // another writer moved: plan it again
	skipped         // reported; left as it is
)

// execute runs the tasks, a few at a time, and returns the paths that
// raced. The first failure of the directory or the store stops it.
func (s *syncer) execute(ctx context.Context, tasks []task) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		next     = make(chan task)
		errMu    sync.Mutex
		firstErr error
		racedMu  sync.Mutex
		racedOut []string
	)
	for range min(workers, len(tasks)) {
		wg.Go(func() {
			for t := range next {
				o, err := s.do(ctx, t)
				switch {
				case err != nil:
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					errMu.Unlock()
				case o == raced:
					racedMu.Lock()
					racedOut = append(racedOut, t.path)
					racedMu.Unlock()
				}
			}
		})
	}
feed:
	for _, t := range tasks {
		select {
		case next <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = remoteErr("sync", ctx.Err())
	}
	slices.Sort(racedOut)
	return racedOut, firstErr
}

// do carries out one task.
func (s *syncer) do(ctx context.Context, t task) (outcome, error) {
	switch t.op {
	case OpPull:
		return s.pull(ctx, t)
	case OpDeleteLocal:
		return s.deleteLocal(t)
	case OpPush, OpCreate:
		return s.push(ctx, t)
	case OpDeleteRemote:
		return s.deleteRemote(ctx, t)
	case OpMerge:
		return s.merge(ctx, t)
	case opConflict:
		return s.conflict(ctx, t)
	}
	return skipped, fmt.Errorf("dirsync: unknown task %q", t.op)
}

// agree records a path's new base and the change made.
func (s *syncer) agree(p, sha string, c *Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sha == "" {
		delete(s.st.Base, p)
	} else {
		s.st.Base[p] = sha
	}
	if c != nil {
		s.rep.Changes = append(s.rep.Changes, *c)
	}
}

func (s *syncer) skip(k Skip) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Skipped = append(s.rep.Skipped, k)
}

// fetch reads a listed memory with its content, checking that the content
// is what its hash says and that it is still at the path.
func (s *syncer) fetch(ctx context.Context, t task) (*memstore.Memory, outcome, error) {
	m := t.remote // listed with its content
	if !s.withContent {
		var err error
		m, err = s.o.Memories.Memory(ctx, s.o.Caller, s.o.StoreID, t.remote.ID)
		if memstore.ErrorCode(err) == memstore.ENotFound {
			return nil, raced, nil // deleted since the listing
		}
		if err != nil {
			return nil, skipped, remoteErr("read "+t.path, err)
		}
		if m.Path != t.path {
			return nil, raced, nil // renamed since the listing
		}
	}
	if sha256Hex([]byte(m.Content)) != m.ContentSHA256 {
		return nil, skipped, remoteErr("read "+t.path, errors.New("the content does not match its content_sha256"))
	}
	if !localfile.Text([]byte(m.Content)) {
		// Written here, it would come back as a binary file, skipped.
		s.skip(Skip{Path: t.path, Side: "remote", Reason: "not written here: " + localfile.NotText})
		return nil, skipped, nil
	}
	return m, done, nil
}

// localOutcome sorts a failure to change a file: changed meanwhile (plan
// again), blocked (skipped), or a failure of the directory.
func (s *syncer) localOutcome(t task, op string, err error) (outcome, error) {
	switch {
	case errors.Is(err, errChanged):
		return raced, nil
	case errors.Is(err, errSymlink), errors.Is(err, errNotDir), errors.Is(err, errNotRegular):
		s.skip(Skip{Path: t.path, Side: "local", Reason: "not written here: " + err.Error()})
		return skipped, nil
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EILSEQ):
		// A name this file system refuses, which the checks of names
		// did not foresee: that path is skipped, never the whole sync.
		s.skip(Skip{Path: t.path, Side: "local", Reason: "not written here: the file system refuses the name: " + err.Error()})
		return skipped, nil
	}
	return skipped, localErr(op+" "+t.path, err)
}

// remoteOutcome sorts a refused write to the store: another writer moved
// (plan again), a refusal of this content or path (skipped), or a failure
// of the whole store.
func (s *syncer) remoteOutcome(t task, op string, err error) (outcome, error) {
	var me *memstore.Error
	if !errors.As(err, &me) {
		return skipped, remoteErr(op+" "+t.path, err)
	}
	switch me.Code {
	case memstore.EPreconditionFailed, memstore.ENotFound:
		return raced, nil
	case memstore.EConflict:
		if me.Retry {
			return raced, nil
		}
		s.skip(Skip{Path: t.path, Side: "remote", Reason: "the store refused it: " + me.Error()})
		return skipped, nil
	case memstore.EInvalid, memstore.EPermission:
		// EPermission here, after a listing that worked: a store attached
		// read-only to the session whose token this is. Pulls go on.
		s.skip(Skip{Path: t.path, Side: "remote", Reason: "the store refused it: " + me.Error()})
		return skipped, nil
	case memstore.EPathConflict:
		if me.ConflictingPath != "" && me.ConflictingPath != t.path {
			s.skip(Skip{Path: t.path, Side: "remote", Reason: "overlaps " + me.ConflictingPath + " in the store"})
			return skipped, nil
		}
		return raced, nil
	}
	return skipped, remoteErr(op+" "+t.path, err)
}

// readLocal reads the file of a task, which must still be as planned.
func (s *syncer) readLocal(t task) ([]byte, outcome, error) {
	data, err := s.tree.read(t.path[1:])
	if err != nil {
		o, err := s.localOutcome(t, "read", err)
		return nil, o, err
	}
	if data == nil || sha256Hex(data) != t.local {
		return nil, raced, nil
	}
	return data, done, nil
}

// secretFree reports whether content may go to the store: not when it
// holds a private key or another credential, in either scope, since the
// directory may be one that holds keys (~/.ssh) and a store is shared
// with other devices and people. A refusal is reported by the kind of
// credential, never its text.
func (s *syncer) secretFree(t task, content string) bool {
	kind, found := memstore.FindCredential(content)
	if !found {
		return true
	}
	s.skip(Skip{Path: t.path, Side: "local", Reason: "holds a credential, which a sync never uploads", Rule: ruleID(kind)})
	return false
}

// ruleID is a credential kind as an identifier: "GitHub token" →
// "github-token".
func ruleID(kind string) string {
	return strings.ReplaceAll(strings.ToLower(kind), " ", "-")
}

// pull writes the memory's content over the file (or where none is).
func (s *syncer) pull(ctx context.Context, t task) (outcome, error) {
	m, o, err := s.fetch(ctx, t)
	if m == nil {
		return o, err
	}
	if err := s.tree.write(t.path[1:], []byte(m.Content), t.local); err != nil {
		return s.localOutcome(t, "write", err)
	}
	s.agree(t.path, m.ContentSHA256, &Change{Path: t.path, Op: OpPull, Note: t.note})
	return done, nil
}

// deleteLocal deletes a file whose memory was deleted, unless it changed.
func (s *syncer) deleteLocal(t task) (outcome, error) {
	if err := s.tree.remove(t.path[1:], t.local); err != nil {
		return s.localOutcome(t, "delete", err)
	}
	s.agree(t.path, "", &Change{Path: t.path, Op: OpDeleteLocal})
	return done, nil
}

// push updates the memory from the file, on the condition that it still
// holds what was listed, or creates it.
func (s *syncer) push(ctx context.Context, t task) (outcome, error) {
	data, o, err := s.readLocal(t)
	if data == nil {
		return o, err
	}
	content := string(data)
	if !s.secretFree(t, content) {
		return skipped, nil
	}
	var m *memstore.Memory
	if t.op == OpPush {
		m, err = s.o.Memories.UpdateMemory(ctx, s.o.Caller, s.o.StoreID, t.remote.ID,
			memstore.MemoryUpdate{Content: &content, IfSHA256: t.remote.ContentSHA256})
	} else {
		m, err = s.o.Memories.CreateMemory(ctx, s.o.Caller, s.o.StoreID,
			memstore.MemoryCreate{Path: t.path, Content: content})
		if memstore.ErrorCode(err) == memstore.EPathConflict {
			// Someone created the path meanwhile; with these very bytes
			// (another device, a retried request), it is agreed already.
			if found, ferr := memstore.FindMemory(ctx, s.o.Memories, s.o.Caller, s.o.StoreID, t.path); ferr == nil && found.ContentSHA256 == t.local {
				s.agree(t.path, t.local, nil)
				return done, nil
			}
		}
	}
	if err != nil {
		return s.remoteOutcome(t, t.op, err)
	}
	s.agree(t.path, m.ContentSHA256, &Change{Path: t.path, Op: t.op, Note: t.note})
	return done, nil
}

// deleteRemote deletes the memory of a deleted file, on the condition
// that it still holds the base: an edit in the store beats the deletion.
func (s *syncer) deleteRemote(ctx context.Context, t task) (outcome, error) {
	// The file may be back since the scan.
	if cur, err := s.tree.hash(t.path[1:]); err != nil || cur != "" {
		return raced, nil
	}
	err := s.o.Memories.DeleteMemory(ctx, s.o.Caller, s.o.StoreID, t.remote.ID, t.base)
	if err != nil && memstore.ErrorCode(err) != memstore.ENotFound {
		return s.remoteOutcome(t, "delete", err)
	}
	s.agree(t.path, "", &Change{Path: t.path, Op: OpDeleteRemote})
	return done, nil
}

// bothSides fetches the memory and reads the file of a path changed on
// both sides. The memory is nil when either cannot be had, with the
// outcome to report.
func (s *syncer) bothSides(ctx context.Context, t task) (*memstore.Memory, []byte, outcome, error) {
	m, o, err := s.fetch(ctx, t)
	if m == nil {
		return nil, nil, o, err
	}
	data, o, err := s.readLocal(t)
	if data == nil {
		return nil, nil, o, err
	}
	return m, data, o, nil
}

// merge merges an index changed on both sides, pushes the result and
// writes it here.
func (s *syncer) merge(ctx context.Context, t task) (outcome, error) {
	m, data, o, err := s.bothSides(ctx, t)
	if m == nil {
		return o, err
	}
	merged := MergeLines(string(data), m.Content)
	sha := m.ContentSHA256
	if merged != m.Content {
		if !s.secretFree(t, merged) {
			return skipped, nil
		}
		up, err := s.o.Memories.UpdateMemory(ctx, s.o.Caller, s.o.StoreID, m.ID,
			memstore.MemoryUpdate{Content: &merged, IfSHA256: m.ContentSHA256})
		if err != nil {
			return s.remoteOutcome(t, "merge", err)
		}
		sha = up.ContentSHA256
	}
	if merged != string(data) {
		if err := s.tree.write(t.path[1:], []byte(merged), t.local); err != nil {
			if errors.Is(err, errChanged) {
				// The store has the merge, the file a newer edit: with the
				// old base both count as changed, and the next sync merges
				// them again rather than push the edit over the merge.
				s.mu.Lock()
				s.rep.Changes = append(s.rep.Changes, Change{Path: t.path, Op: OpMerge})
				s.mu.Unlock()
				return raced, nil
			}
			return s.localOutcome(t, "write", err)
		}
	}
	s.agree(t.path, sha, &Change{Path: t.path, Op: OpMerge})
	return done, nil
}

// conflict settles a file changed on both sides: the preferred side keeps
// the path, the other is kept beside it.
func (s *syncer) conflict(ctx context.Context, t task) (outcome, error) {
	m, data, o, err := s.bothSides(ctx, t)
	if m == nil {
		return o, err
	}
	rel := t.path[1:]
	if s.o.Prefer == PreferLocal {
		content := string(data)
		if !s.secretFree(t, content) {
			return skipped, nil
		}
		kept, err := s.tree.keep(rel, []byte(m.Content), s.o.Device, s.stamp)
		if err != nil {
			return s.localOutcome(t, "keep a copy of", err)
		}
		up, err := s.o.Memories.UpdateMemory(ctx, s.o.Caller, s.o.StoreID, m.ID,
			memstore.MemoryUpdate{Content: &content, IfSHA256: m.ContentSHA256})
		if err != nil {
			s.tree.root.Remove(kept) // the store still has that version at the path
			return s.remoteOutcome(t, "push", err)
		}
		s.settled(t.path, up.ContentSHA256, Conflict{Path: t.path, Winner: PreferLocal, Kept: kept})
		return done, nil
	}
	kept, err := s.tree.keep(rel, data, s.o.Device, s.stamp)
	if err != nil {
		return s.localOutcome(t, "keep a copy of", err)
	}
	if err := s.tree.write(rel, []byte(m.Content), t.local); err != nil {
		// Edited again meanwhile: the file itself still holds the local
		// side, so the copy is not needed.
		s.tree.root.Remove(kept)
		return s.localOutcome(t, "write", err)
	}
	s.settled(t.path, m.ContentSHA256, Conflict{Path: t.path, Winner: PreferRemote, Kept: kept})
	return done, nil
}

// settled records a conflict and the path's new base.
func (s *syncer) settled(p, sha string, c Conflict) {
	s.agree(p, sha, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Conflicts = append(s.rep.Conflicts, c)
}

// sortReport orders each list of the report by path, for a stable output.
func sortReport(r *Report) {
	slices.SortStableFunc(r.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(r.Conflicts, func(a, b Conflict) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(r.Skipped, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
}

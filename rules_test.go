package memstore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// memTx is a MemoryTx over a map, enough to run the rules alone: it
// records every change, so that a test can tell a refusal made before
// any change from one made after.
type memTx struct {
	archived bool
	byID     map[string]*Memory
	changes  []string
	n        int
}

func newMemTx(archived bool, ms ...*Memory) *memTx {
	tx := &memTx{archived: archived, byID: map[string]*Memory{}}
	for _, m := range ms {
		tx.byID[m.ID] = m
	}
	return tx
}

func (tx *memTx) Archived() bool { return tx.archived }

func (tx *memTx) Memory(id string) (*Memory, error) {
	if m, ok := tx.byID[id]; ok {
		c := *m
		return &c, nil
	}
	return nil, Errorf(ENotFound, "memory %s not found", id)
}

func (tx *memTx) MemoryAt(path string) (*Memory, error) {
	for _, m := range tx.byID {
		if m.Path == path {
			c := *m
			return &c, nil
		}
	}
	return nil, nil
}

func (tx *memTx) Overlapping(path, self string) (*Memory, error) {
	for _, m := range tx.byID {
		if m.ID != self && PathsOverlap(m.Path, path) {
			return m, nil
		}
	}
	return nil, nil
}

func (tx *memTx) CheckQuota(q Quota) error { return q.Check(len(tx.byID)) }

func (tx *memTx) Put(m *Memory, e EventType, by Actor) error {
	op := e.Operation()
	if op == OpCreated {
		tx.n++
		m.ID = "mem_" + strings.Repeat("n", tx.n)
	}
	what := string(op)
	if e == EventMemoryRenamed {
		what = "renamed" // a "modified" version whose event is a rename
	}
	tx.changes = append(tx.changes, what+" "+m.Path)
	c := *m
	tx.byID[m.ID] = &c
	return nil
}

func (tx *memTx) Delete(m *Memory, by Actor) error {
	tx.changes = append(tx.changes, "deleted "+m.Path)
	delete(tx.byID, m.ID)
	return nil
}

func mem(id, path, content string) *Memory {
	return &Memory{ID: id, Path: path, Content: content, ContentSHA256: ContentSHA256(content), ContentSize: int64(len(content))}
}

func wantRule(t *testing.T, name string, err error, code string, tx *memTx, changes ...string) {
	t.Helper()
	if got := ErrorCode(err); got != code {
		t.Errorf("%s: error %v, want code %q", name, err, code)
	}
	if strings.Join(tx.changes, "; ") != strings.Join(changes, "; ") {
		t.Errorf("%s: changes %q, want %q", name, tx.changes, changes)
	}
}

// TestMemoryRules runs the rules of memory writes over a map: each
// refusal comes before any change, and an update that changes nothing
// changes nothing.
func TestMemoryRules(t *testing.T) {
	by := Actor{Type: ActorAPIKey, ID: "apikey_x"}
	a := func() *Memory { return mem("mem_a", "/notes/a.md", "alpha") }
	create := func(tx *memTx, mc MemoryCreate, max int) error {
		_, err := createMemory(tx, "memstore_s", mc, ContentSHA256(mc.Content), by, memoryQuota("memstore_s", max))
		return err
	}
	update := func(tx *memTx, u MemoryUpdate) (*Memory, error) {
		sum := ""
		if u.Content != nil {
			sum = ContentSHA256(*u.Content)
		}
		return updateMemory(tx, "memstore_s", "mem_a", u, sum, by, ContentRules{})
	}
	ptr := func(s string) *string { return &s }

	tx := newMemTx(true)
	wantRule(t, "create in an archived store", create(tx, MemoryCreate{Path: "/x", Content: "x"}, 0), EInvalid, tx)
	tx = newMemTx(false, a())
	wantRule(t, "create at a taken path", create(tx, MemoryCreate{Path: "/notes/a.md"}, 0), EPathConflict, tx)
	tx = newMemTx(false, a())
	wantRule(t, "create under a memory", create(tx, MemoryCreate{Path: "/notes/a.md/b"}, 0), EPathConflict, tx)
	tx = newMemTx(false, a())
	wantRule(t, "create above a memory", create(tx, MemoryCreate{Path: "/notes"}, 0), EPathConflict, tx)
	tx = newMemTx(false, a())
	err := create(tx, MemoryCreate{Path: "/notes/a.md/b", IfNotExists: true}, 0)
	wantRule(t, "create if not exists", err, EPreconditionFailed, tx)
	if e, _ := err.(*Error); e == nil || e.ConflictingMemoryID != "mem_a" || e.ConflictingPath != "/notes/a.md" {
		t.Errorf("create if not exists: %#v, want the memory in the way named", err)
	}
	tx = newMemTx(false, a())
	wantRule(t, "upsert with the same content", create(tx, MemoryCreate{Path: "/notes/a.md", Content: "alpha", Upsert: true}, 0), "", tx)
	tx = newMemTx(false, a())
	wantRule(t, "upsert", create(tx, MemoryCreate{Path: "/notes/a.md", Content: "beta", Upsert: true}, 0), "", tx, "modified /notes/a.md")
	tx = newMemTx(false, a())
	wantRule(t, "upsert if not exists", create(tx, MemoryCreate{Path: "/notes/a.md", Content: "beta", Upsert: true, IfNotExists: true}, 0), EPreconditionFailed, tx)
	tx = newMemTx(false, a())
	wantRule(t, "create at the limit", create(tx, MemoryCreate{Path: "/b"}, 1), EInvalid, tx)
	tx = newMemTx(false, a())
	wantRule(t, "create below the limit", create(tx, MemoryCreate{Path: "/b"}, 2), "", tx, "created /b")

	tx = newMemTx(false)
	_, err = update(tx, MemoryUpdate{Content: ptr("x")})
	wantRule(t, "update a missing memory", err, ENotFound, tx)
	tx = newMemTx(true, a())
	_, err = update(tx, MemoryUpdate{Content: ptr("alpha")})
	wantRule(t, "update in an archived store, even to no change", err, EInvalid, tx)
	if !IsArchived(err) {
		t.Errorf("update in an archived store: %v, want %q first", err, ArchivedMessage)
	}
	tx = newMemTx(false, a())
	_, err = update(tx, MemoryUpdate{Path: ptr(IndexPath), Content: ptr(strings.Repeat("- x\n", MaxIndexLines+1))})
	wantRule(t, "rename to an oversized index", err, EInvalid, tx)
	tx = newMemTx(false, mem("mem_a", "/notes/a.md", strings.Repeat("- x\n", MaxIndexLines+1)))
	_, err = update(tx, MemoryUpdate{Path: ptr(IndexPath)})
	wantRule(t, "rename of oversized content to the index", err, EInvalid, tx)
	tx = newMemTx(false, mem("mem_a", "/notes/a.md", strings.Repeat("- x\n", MaxIndexLines+1)))
	_, err = update(tx, MemoryUpdate{Path: ptr("/notes/MEMORY.md")})
	wantRule(t, "rename of oversized content to a MEMORY.md below the root", err, "", tx, "renamed /notes/MEMORY.md")
	tx = newMemTx(false, a())
	m, err := update(tx, MemoryUpdate{Content: ptr("alpha"), IfSHA256: "stale"})
	wantRule(t, "update to no change with a stale precondition", err, "", tx)
	if m == nil || m.Content != "alpha" {
		t.Errorf("a no-op update returned %+v, want the memory", m)
	}
	tx = newMemTx(false, a())
	_, err = update(tx, MemoryUpdate{Content: ptr("beta"), IfSHA256: "stale"})
	wantRule(t, "update with a stale precondition", err, EPreconditionFailed, tx)
	tx = newMemTx(false, a())
	_, err = update(tx, MemoryUpdate{Content: ptr("beta"), IfSHA256: strings.ToUpper(ContentSHA256("alpha"))})
	wantRule(t, "update with a precondition in capitals", err, "", tx, "modified /notes/a.md")
	tx = newMemTx(false, a(), mem("mem_b", "/b", "b"))
	_, err = update(tx, MemoryUpdate{Path: ptr("/b/c")})
	wantRule(t, "rename under a memory", err, EPathConflict, tx)
	tx = newMemTx(false, a(), mem("mem_b", "/b", "b"))
	m, err = update(tx, MemoryUpdate{Path: ptr("/b"), RenameIfFree: true})
	wantRule(t, "rename onto a taken path if free", err, "", tx)
	if m == nil || m.Path != "/notes/a.md" {
		t.Errorf("a rename refused as a no-op returned %+v, want the memory where it was", m)
	}
	tx = newMemTx(false, a())
	_, err = update(tx, MemoryUpdate{Path: ptr("/notes")})
	wantRule(t, "rename onto its own ancestor", err, "", tx, "renamed /notes")
	tx = newMemTx(false, a())
	_, err = update(tx, MemoryUpdate{Path: ptr("/c.md"), Content: ptr("gamma")})
	wantRule(t, "rename with new content", err, "", tx, "renamed /c.md")

	tx = newMemTx(false, a())
	wantRule(t, "delete with a stale precondition", deleteMemory(tx, "memstore_s", "mem_a", "stale", by), EPreconditionFailed, tx)
	tx = newMemTx(false)
	wantRule(t, "delete a missing memory", deleteMemory(tx, "memstore_s", "mem_a", "", by), ENotFound, tx)
	tx = newMemTx(true, a())
	wantRule(t, "delete in an archived store", deleteMemory(tx, "memstore_s", "mem_a", ContentSHA256("alpha"), by), EInvalid, tx)
}

// TestMemoryRuleErrors: a failing read is returned as it is, and nothing
// is changed.
func TestMemoryRuleErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	tx := &failingTx{memTx: newMemTx(false, mem("mem_a", "/a", "a")), err: boom}
	if _, err := createMemory(tx, "memstore_s", MemoryCreate{Path: "/b"}, "", Actor{}, memoryQuota("memstore_s", 10)); !errors.Is(err, boom) {
		t.Errorf("create: %v, want the read's error", err)
	}
	if len(tx.changes) != 0 {
		t.Errorf("changes %q after a failed read", tx.changes)
	}
}

type failingTx struct {
	*memTx
	err error
}

func (f *failingTx) Overlapping(string, string) (*Memory, error) { return nil, f.err }

func TestStoreUpdateApply(t *testing.T) {
	ptr := func(s string) *string { return &s }
	now := time.Now()
	base := func() *Store {
		return &Store{ID: "memstore_s", Name: "n", Description: "d", Metadata: map[string]string{"k": "v"}}
	}
	s := base()
	if changed, err := (StoreUpdate{Name: ptr("n"), Metadata: map[string]*string{"k": ptr("v")}}).Apply(s); changed || err != nil {
		t.Errorf("an update to the same values: changed %v, error %v; want neither", changed, err)
	}
	s = base()
	if changed, err := (StoreUpdate{Metadata: map[string]*string{"k": nil, "j": ptr("w")}}).Apply(s); !changed || err != nil || s.Metadata["j"] != "w" || len(s.Metadata) != 1 {
		t.Errorf("a metadata patch: changed %v, error %v, metadata %v", changed, err, s.Metadata)
	}
	s = base()
	s.ArchivedAt = &now
	if _, err := (StoreUpdate{Name: ptr("m")}).Apply(s); !IsArchived(err) || s.Name != "n" {
		t.Errorf("an archived store's update: %v, name %q", err, s.Name)
	}
	s, patch := base(), map[string]*string{}
	for i := range MaxMetadataPairs {
		patch[strings.Repeat("x", i+1)] = ptr("v")
	}
	if _, err := (StoreUpdate{Metadata: patch}).Apply(s); ErrorCode(err) != EInvalid || len(s.Metadata) != 1 {
		t.Errorf("a patch beyond %d pairs: %v, metadata %v", MaxMetadataPairs, err, s.Metadata)
	}
}

func TestCheckToken(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	live := &Session{ID: "sesn_a"}
	archived := &Session{ID: "sesn_a", ArchivedAt: &past}
	for _, tc := range []struct {
		name string
		tok  SessionToken
		s    *Session
		want string // in the message; "" when the token is good
	}{
		{"good", SessionToken{ID: "tok"}, live, ""},
		{"good until later", SessionToken{ID: "tok", ExpiresAt: &future}, live, ""},
		{"expired now", SessionToken{ID: "tok", ExpiresAt: &now}, live, "expired"},
		{"revoked", SessionToken{ID: "tok", RevokedAt: &past}, live, "revoked"},
		{"revoked before its session was archived", SessionToken{ID: "tok", RevokedAt: &past}, archived, "revoked"},
		{"archived session", SessionToken{ID: "tok"}, archived, "archived"},
	} {
		err := checkToken(&tc.tok, tc.s, now)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (ErrorCode(err) != EUnauthenticated || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want unauthenticated, %s", tc.name, err, tc.want)
		}
	}
	if err := archived.takesTokens(); ErrorCode(err) != EConflict {
		t.Errorf("an archived session takes tokens: %v", err)
	}
	if err := live.takesTokens(); err != nil {
		t.Errorf("a live session takes no tokens: %v", err)
	}
}

func TestSnapshotAttachments(t *testing.T) {
	now := time.Now()
	stores := map[string]*Store{
		"memstore_a": {ID: "memstore_a", Name: "Notes", Description: "what we learnt"},
		"memstore_b": {ID: "memstore_b", Name: "Notes"},
		"memstore_x": {ID: "memstore_x", Name: "Old", ArchivedAt: &now},
	}
	lookup := func(id string) (*Store, error) { return stores[id], nil }
	atts, err := snapshotAttachments([]AttachmentCreate{{StoreID: "memstore_a"}, {StoreID: "memstore_b", Access: AccessReadOnly, Instructions: "look"}}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if a := atts[0]; a.Access != AccessReadWrite || a.Name != "Notes" || a.Description != "what we learnt" || a.MountPath == "" {
		t.Errorf("first attachment %+v", a)
	}
	if b := atts[1]; b.Access != AccessReadOnly || b.Instructions != "look" || b.MountPath == atts[0].MountPath {
		t.Errorf("second attachment %+v: same mount path as the first, or lost fields", b)
	}
	for _, tc := range []struct{ id, want string }{
		{"memstore_nope", "resources[1]: memory store memstore_nope was not found"},
		{"memstore_x", "resources[1]: memory store memstore_x is archived"},
	} {
		_, err := snapshotAttachments([]AttachmentCreate{{StoreID: "memstore_a"}, {StoreID: tc.id}}, lookup)
		if ErrorCode(err) != EInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("attach %s: %v, want %q", tc.id, err, tc.want)
		}
	}
}

func TestNewSession(t *testing.T) {
	now := time.Unix(1700000000, 5).UTC()
	c := SessionCreate{Title: "t", Metadata: map[string]string{"k": "v"}, Fields: map[string]json.RawMessage{"agent": json.RawMessage(`1`)}}
	s := newSession("wrkspc_1", c, now)
	c.Metadata["k"], c.Fields["agent"] = "changed", json.RawMessage(`2`)
	if s.WorkspaceID != "wrkspc_1" || s.Title != "t" || !s.CreatedAt.Equal(now) || !s.UpdatedAt.Equal(now) {
		t.Errorf("newSession = %+v", s)
	}
	if s.Metadata["k"] != "v" || string(s.Fields["agent"]) != "1" {
		t.Errorf("the session shares its maps with the request: %v, %s", s.Metadata, s.Fields["agent"])
	}
	if e := newSession("wrkspc_1", SessionCreate{}, now); e.Metadata == nil || e.Fields == nil {
		t.Errorf("no metadata or fields: %v, %v; want empty maps", e.Metadata, e.Fields)
	}
}

func TestPageSize(t *testing.T) {
	for _, tc := range []struct {
		limit int
		full  bool
		want  int // -1 for EInvalid
	}{
		{0, false, DefaultPageSize}, {1, false, 1}, {MaxPageSize, false, MaxPageSize}, {MaxPageSize, true, MaxFullPageSize},
		{0, true, min(DefaultPageSize, MaxFullPageSize)}, {-1, false, -1}, {MaxPageSize + 1, true, -1},
	} {
		n, err := PageSize(tc.limit, tc.full)
		if tc.want < 0 && ErrorCode(err) != EInvalid || tc.want >= 0 && (err != nil || n != tc.want) {
			t.Errorf("PageSize(%d, %v) = %d, %v; want %d", tc.limit, tc.full, n, err, tc.want)
		}
	}
}

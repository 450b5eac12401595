package memstore

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// sessTx is a SessionTx over maps, enough to run the rules of sessions
// alone: it records every change, and the revocations announced.
type sessTx struct {
	sessions  map[string]*Session
	stores    map[string]*Store
	tokens    map[string]*SessionToken
	live      int // what LiveSessions and LiveTokens count
	changes   []string
	announced []Revocation
}

func newSessTx() *sessTx {
	return &sessTx{
		sessions: map[string]*Session{},
		stores:   map[string]*Store{"memstore_a": {ID: "memstore_a", Name: "A"}, "memstore_b": {ID: "memstore_b", Name: "B"}},
		tokens:   map[string]*SessionToken{},
	}
}

func (tx *sessTx) Session(id string) (*Session, error) {
	if s, ok := tx.sessions[id]; ok {
		c := *s
		c.Attachments = slices.Clone(s.Attachments)
		return &c, nil
	}
	return nil, Errorf(ENotFound, "session %s not found", id)
}

func (tx *sessTx) Store(id string) (*Store, error)                { return tx.stores[id], nil }
func (tx *sessTx) LiveSessions(max int) (int, error)              { return min(tx.live, max), nil }
func (tx *sessTx) LiveTokens(string, time.Time, int) (int, error) { return tx.live, nil }
func (tx *sessTx) Announce(r Revocation) error                    { tx.announced = append(tx.announced, r); return nil }
func (tx *sessTx) LastEventSeq(string) (int64, error)             { return 0, nil }
func (tx *sessTx) AppendEvent(*SessionEvent) error                { return nil }
func (tx *sessTx) ToolUseEvent(string, string) (string, error)    { return "", nil }
func (tx *sessTx) change(what string, id string)                  { tx.changes = append(tx.changes, what+" "+id) }
func (tx *sessTx) keep(s *Session)                                { c := *s; tx.sessions[s.ID] = &c }
func (tx *sessTx) UpdateSession(s *Session, attachments bool) error {
	tx.keep(s)
	tx.change("update", s.ID)
	return nil
}

func (tx *sessTx) CreateSession(s *Session) error {
	s.ID = "sesn_" + strings.Repeat("n", len(tx.sessions)+1)
	tx.keep(s)
	tx.change("create", s.ID)
	return nil
}

func (tx *sessTx) DeleteSession(id string) error {
	if _, ok := tx.sessions[id]; !ok {
		return Errorf(ENotFound, "session %s not found", id)
	}
	delete(tx.sessions, id)
	tx.change("delete", id)
	return nil
}

func (tx *sessTx) CreateToken(t *SessionToken, secretHash string) error {
	t.ID = "sesntok_" + strings.Repeat("n", len(tx.tokens)+1)
	c := *t
	tx.tokens[t.ID] = &c
	tx.change("token", t.ID)
	return nil
}

func (tx *sessTx) RevokeToken(id string, at time.Time) (*SessionToken, error) {
	t, ok := tx.tokens[id]
	if !ok {
		return nil, Errorf(ENotFound, "session token %s not found", id)
	}
	if t.RevokedAt == nil {
		t.RevokedAt = &at
	}
	c := *t
	return &c, nil
}

// TestSessionRulesAnnounce: the rules decide which revocation each change
// of a session announces, and announce none for a change that stops no
// caller nor changes what one reaches.
func TestSessionRulesAnnounce(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ptr := func(s string) *string { return &s }
	tx := newSessTx()
	s, tok, secret, err := createSession(tx, "wrkspc_1", SessionCreate{Stores: []AttachmentCreate{{StoreID: "memstore_a"}}, TokenTTL: time.Hour}, Quota{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, SessionTokenPrefix) || tok.SessionID != s.ID || tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Errorf("first token %+v, secret %q", tok, secret)
	}
	if len(tx.announced) != 0 {
		t.Errorf("a new session announced %+v", tx.announced)
	}
	for _, tc := range []struct {
		what   string
		change sessionChange
		want   []Revocation
	}{
		{"a new title", func(s *Session, _ func(string) (*Store, error)) (bool, error) {
			return SessionUpdate{Title: ptr("t")}.Apply(s)
		}, nil},
		{"a store attached", func(s *Session, store func(string) (*Store, error)) (bool, error) {
			return true, attachStore(s, AttachmentCreate{StoreID: "memstore_b"}, store)
		}, []Revocation{{SessionID: s.ID, Refresh: true}}},
		{"an access changed", func(s *Session, _ func(string) (*Store, error)) (bool, error) {
			ro := AccessReadOnly
			return updateAttachment(s, "memstore_b", AttachmentUpdate{Access: &ro})
		}, []Revocation{{SessionID: s.ID, Refresh: true}}},
		{"nothing changed", func(s *Session, _ func(string) (*Store, error)) (bool, error) {
			return SessionUpdate{Title: ptr("t")}.Apply(s)
		}, nil},
	} {
		tx.announced = nil
		if _, err := changeSession(tx, s.ID, now, tc.change); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if !slices.Equal(tx.announced, tc.want) {
			t.Errorf("%s announced %+v, want %+v", tc.what, tx.announced, tc.want)
		}
	}

	tx.announced = nil
	if _, err := revokeSessionToken(tx, tok.ID, now); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Minute)
	a, err := archiveSession(tx, s.ID, later)
	if err != nil || a.ArchivedAt == nil || !a.ArchivedAt.Equal(later) || !a.UpdatedAt.Equal(later) {
		t.Fatalf("archived %+v, %v", a, err)
	}
	tx.changes = nil
	if again, err := archiveSession(tx, s.ID, later.Add(time.Minute)); err != nil || !again.ArchivedAt.Equal(later) || len(tx.changes) != 0 {
		t.Errorf("archived again: %+v, %v, changes %v; want nothing changed", again, err, tx.changes)
	}
	if err := deleteSession(tx, s.ID); err != nil {
		t.Fatal(err)
	}
	want := []Revocation{{SessionID: s.ID, TokenID: tok.ID}, {SessionID: s.ID}, {SessionID: s.ID}, {SessionID: s.ID}}
	if !slices.Equal(tx.announced, want) {
		t.Errorf("announced %+v, want %+v", tx.announced, want)
	}
}

// TestSessionRulesRefuseBeforeChanging: a session or token beyond its
// quota, a token for an archived session, a store not in the workspace,
// and a change of an archived session are refused before any change.
func TestSessionRulesRefuseBeforeChanging(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tx := newSessTx()
	tx.live = 2
	_, _, _, err := createSession(tx, "wrkspc_1", SessionCreate{}, sessionQuota("wrkspc_1", 2), now)
	if ErrorCode(err) != EInvalid || !strings.Contains(err.Error(), "limit of 2 live sessions") {
		t.Errorf("a session beyond the quota: %v", err)
	}
	_, _, _, err = createSession(tx, "wrkspc_1", SessionCreate{Stores: []AttachmentCreate{{StoreID: "memstore_nope"}}}, Quota{}, now)
	if ErrorCode(err) != EInvalid {
		t.Errorf("a session of an unknown store: %v", err)
	}
	if len(tx.changes) != 0 || len(tx.announced) != 0 {
		t.Fatalf("refused creates changed %v, announced %+v", tx.changes, tx.announced)
	}
	tx.live = 0
	s, _, _, err := createSession(tx, "wrkspc_1", SessionCreate{}, Quota{}, now)
	if err != nil {
		t.Fatal(err)
	}
	tx.live, tx.changes = 5, nil
	if _, _, err := createSessionToken(tx, s.ID, 0, tokenQuota(s.ID, 5), now); ErrorCode(err) != EInvalid {
		t.Errorf("a token beyond the quota: %v", err)
	}
	if _, err := archiveSession(tx, s.ID, now); err != nil {
		t.Fatal(err)
	}
	tx.changes = nil
	if _, _, err := createSessionToken(tx, s.ID, 0, Quota{}, now); ErrorCode(err) != EConflict {
		t.Errorf("a token for an archived session: %v", err)
	}
	title := "x"
	rename := func(s *Session, _ func(string) (*Store, error)) (bool, error) {
		return SessionUpdate{Title: &title}.Apply(s)
	}
	if _, err := changeSession(tx, s.ID, now, rename); ErrorCode(err) != EConflict {
		t.Errorf("a change of an archived session: %v", err)
	}
	if len(tx.changes) != 0 {
		t.Errorf("refused changes made %v", tx.changes)
	}
}

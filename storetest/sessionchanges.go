package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// The tests of changes to live sessions: updates, deletion, and stores
// attached, changed and detached after creation, and of the session
// list's filters.

func testUpdateSession(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{
		Title: "before", Metadata: map[string]string{"keep": "1", "drop": "2"},
		Fields: map[string]json.RawMessage{"agent": json.RawMessage(`"agent_1"`), "budget": json.RawMessage(`{"max":1}`)},
	})
	e.clock.Advance(time.Second)
	title, v := "after", "3"
	got, err := e.b.UpdateSession(ctx, e.ws, s.ID, memstore.SessionUpdate{
		Title:    &title,
		Metadata: map[string]*string{"drop": nil, "new": &v},
		Fields:   map[string]json.RawMessage{"budget": nil, "environment_id": json.RawMessage(`"env_2"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := *s
	want.Title, want.Metadata = "after", map[string]string{"keep": "1", "new": "3"}
	want.Fields = map[string]json.RawMessage{"agent": json.RawMessage(`"agent_1"`), "environment_id": json.RawMessage(`"env_2"`)}
	want.UpdatedAt = e.clock.Now()
	checkSession(t, got, &want, "updated")
	checkSession(t, e.session(t, e.ws, s.ID), &want, "read after the update")

	// An update that changes nothing leaves UpdatedAt alone.
	e.clock.Advance(time.Second)
	if got, err := e.b.UpdateSession(ctx, e.ws, s.ID, memstore.SessionUpdate{Title: &title}); err != nil || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("an update to the same title: %+v, %v; want UpdatedAt unchanged", got, err)
	}

	// What the patches make must be valid, and nothing changes otherwise.
	many := map[string]*string{}
	for i := range memstore.MaxMetadataPairs {
		many[fmt.Sprintf("k%d", i)] = &v
	}
	_, err = e.b.UpdateSession(ctx, e.ws, s.ID, memstore.SessionUpdate{Metadata: many})
	wantCode(t, err, memstore.EInvalid, "metadata over the limit once patched")
	checkSession(t, e.session(t, e.ws, s.ID), &want, "after a refused update")

	_, err = e.b.UpdateSession(ctx, e.ws2, s.ID, memstore.SessionUpdate{Title: &title})
	wantCode(t, err, memstore.ENotFound, "update from another workspace")
	if _, err := e.b.ArchiveSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	other := "other"
	_, err = e.b.UpdateSession(ctx, e.ws, s.ID, memstore.SessionUpdate{Title: &other})
	wantCode(t, err, memstore.EConflict, "update of an archived session")
}

func testDeleteSession(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	st := e.store(t, e.ws, "notes", "")
	s, tok, secret := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	_, secret2 := e.newToken(t, e.ws, s.ID, 0)
	keep, _, keepSecret := e.create(t, e.ws, memstore.SessionCreate{})

	wantCode(t, e.b.DeleteSession(ctx, e.ws2, s.ID), memstore.ENotFound, "delete from another workspace")
	e.authenticate(t, secret, s, "after a delete from another workspace")
	if err := e.b.DeleteSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	e.refused(t, secret, "first token of a deleted session")
	e.refused(t, secret2, "second token of a deleted session")
	_, err := e.b.Session(ctx, e.ws, s.ID)
	wantCode(t, err, memstore.ENotFound, "a deleted session")
	_, err = e.b.SessionToken(ctx, e.ws, tok.ID)
	wantCode(t, err, memstore.ENotFound, "a deleted session's token")
	_, err = e.b.SessionTokens(ctx, e.ws, s.ID, memstore.SessionTokenFilter{})
	wantCode(t, err, memstore.ENotFound, "a deleted session's tokens")
	if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{StoreID: st.ID, IncludeArchived: true}); len(got) != 0 {
		t.Errorf("sessions of the store after the delete: %v", sessionIDs(got))
	}
	wantCode(t, e.b.DeleteSession(ctx, e.ws, s.ID), memstore.ENotFound, "delete again")
	e.authenticate(t, keepSecret, keep, "another session's token")
}

func testSessionResources(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	notes := e.store(t, e.ws, "Notes", "what happened")
	prefs := e.store(t, e.ws, "Prefs", "")
	s, _, secret := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: notes.ID}}})

	// Attach: snapshotted as at creation, after the others, with a mount
	// path of its own; the tokens reach it at once.
	e.clock.Advance(time.Second)
	twin := e.store(t, e.ws, "notes", "")
	got, err := e.b.AttachStore(ctx, e.ws, s.ID, memstore.AttachmentCreate{StoreID: twin.ID, Access: memstore.AccessReadOnly, Instructions: "look"})
	if err != nil {
		t.Fatal(err)
	}
	want := *s
	want.Attachments = []memstore.Attachment{
		s.Attachments[0],
		{StoreID: twin.ID, Access: memstore.AccessReadOnly, Instructions: "look", Name: "notes", MountPath: "/mnt/memory/notes-2"},
	}
	want.UpdatedAt = e.clock.Now()
	checkSession(t, got, &want, "after attaching")
	e.authenticate(t, secret, &want, "a token after attaching")

	// Update: access and instructions, nothing else.
	rw, none := memstore.AccessReadWrite, ""
	if got, err = e.b.UpdateAttachment(ctx, e.ws, s.ID, twin.ID, memstore.AttachmentUpdate{Access: &rw, Instructions: &none}); err != nil {
		t.Fatal(err)
	}
	want.Attachments[1].Access, want.Attachments[1].Instructions = rw, ""
	checkSession(t, got, &want, "after updating")
	e.authenticate(t, secret, &want, "a token after updating")

	// Detach: the others keep their order and mount paths.
	if got, err = e.b.DetachStore(ctx, e.ws, s.ID, notes.ID); err != nil {
		t.Fatal(err)
	}
	want.Attachments = want.Attachments[1:]
	checkSession(t, got, &want, "after detaching")
	e.authenticate(t, secret, &want, "a token after detaching")
	if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{StoreID: notes.ID}); len(got) != 0 {
		t.Errorf("sessions of the detached store: %v", sessionIDs(got))
	}
	if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{StoreID: twin.ID}); !slices.Equal(sessionIDs(got), []string{s.ID}) {
		t.Errorf("sessions of the attached store: %v, want %s", sessionIDs(got), s.ID)
	}

	// The rules of creation, and the limit.
	archived := e.store(t, e.ws, "old", "")
	if _, err := e.b.ArchiveStore(ctx, e.ws, archived.ID, reader); err != nil {
		t.Fatal(err)
	}
	elsewhere := e.store(t, e.ws2, "theirs", "")
	for _, tc := range []struct {
		what string
		a    memstore.AttachmentCreate
		code string
	}{
		{"an archived store", memstore.AttachmentCreate{StoreID: archived.ID}, memstore.EInvalid},
		{"another workspace's store", memstore.AttachmentCreate{StoreID: elsewhere.ID}, memstore.EInvalid},
		{"a store attached already", memstore.AttachmentCreate{StoreID: twin.ID}, memstore.EConflict},
	} {
		_, err := e.b.AttachStore(ctx, e.ws, s.ID, tc.a)
		wantCode(t, err, tc.code, "attach "+tc.what)
	}
	for i := len(want.Attachments); i < memstore.MaxSessionStores; i++ {
		st := e.store(t, e.ws, fmt.Sprintf("s%d", i), "")
		if _, err := e.b.AttachStore(ctx, e.ws, s.ID, memstore.AttachmentCreate{StoreID: st.ID}); err != nil {
			t.Fatalf("attach store %d: %v", i, err)
		}
	}
	_, err = e.b.AttachStore(ctx, e.ws, s.ID, memstore.AttachmentCreate{StoreID: prefs.ID})
	wantCode(t, err, memstore.EInvalid, "attach beyond the limit")
	if n := len(e.session(t, e.ws, s.ID).Attachments); n != memstore.MaxSessionStores {
		t.Errorf("%d stores attached, want %d", n, memstore.MaxSessionStores)
	}
	_, err = e.b.UpdateAttachment(ctx, e.ws, s.ID, prefs.ID, memstore.AttachmentUpdate{Access: &rw})
	wantCode(t, err, memstore.ENotFound, "update a store not attached")
	_, err = e.b.DetachStore(ctx, e.ws, s.ID, prefs.ID)
	wantCode(t, err, memstore.ENotFound, "detach a store not attached")
	_, err = e.b.DetachStore(ctx, e.ws2, s.ID, twin.ID)
	wantCode(t, err, memstore.ENotFound, "detach from another workspace")

	if _, err := e.b.ArchiveSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.b.DetachStore(ctx, e.ws, s.ID, twin.ID)
	wantCode(t, err, memstore.EConflict, "detach from an archived session")
	_, err = e.b.AttachStore(ctx, e.ws, s.ID, memstore.AttachmentCreate{StoreID: prefs.ID})
	wantCode(t, err, memstore.EConflict, "attach to an archived session")
}

func testSessionListFilters(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	var all []*memstore.Session // oldest first
	agents := []string{`"agent_a"`, `{"type":"agent","id":"agent_b","version":2}`, `{"id":"agent_a"}`, `7`, ``}
	for i := range 10 {
		e.clock.Advance(time.Second)
		c := memstore.SessionCreate{Title: fmt.Sprint(i)}
		if a := agents[i%len(agents)]; a != "" {
			c.Fields = map[string]json.RawMessage{"agent": json.RawMessage(a)}
		}
		s, _, _ := e.create(t, e.ws, c)
		all = append(all, s)
	}
	for _, i := range []int{2, 7} {
		if _, err := e.b.ArchiveSession(ctx, e.ws, all[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(idx ...int) []string {
		out := []string{}
		for _, i := range idx {
			out = append(out, all[i].ID)
		}
		return out
	}
	at := func(i int) *time.Time { t := all[i].CreatedAt; return &t }
	for _, tc := range []struct {
		what string
		f    memstore.SessionFilter
		want []string
	}{
		{"oldest first", memstore.SessionFilter{Ascending: true, Limit: 3}, ids(0, 1, 3, 4, 5, 6, 8, 9)},
		{"with the archived, oldest first", memstore.SessionFilter{Ascending: true, IncludeArchived: true, Limit: 4}, ids(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"after and up to", memstore.SessionFilter{CreatedAtGT: at(1), CreatedAtLTE: at(5)}, ids(5, 4, 3)},
		{"from and before", memstore.SessionFilter{CreatedAtGTE: at(1), CreatedAtLT: at(5), IncludeArchived: true, Limit: 1}, ids(4, 3, 2, 1)},
		{"terminated", memstore.SessionFilter{Statuses: []memstore.SessionStatus{memstore.StatusTerminated}}, ids(7, 2)},
		{"idle", memstore.SessionFilter{Statuses: []memstore.SessionStatus{memstore.StatusIdle}, IncludeArchived: true}, ids(9, 8, 6, 5, 4, 3, 1, 0)},
		{"idle and terminated", memstore.SessionFilter{Statuses: []memstore.SessionStatus{memstore.StatusIdle, memstore.StatusTerminated}}, ids(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)},
		{"running", memstore.SessionFilter{Statuses: []memstore.SessionStatus{memstore.StatusRunning}}, ids()},
		{"agent_a, string or object", memstore.SessionFilter{AgentID: "agent_a", IncludeArchived: true}, ids(7, 5, 2, 0)},
		{"agent_b", memstore.SessionFilter{AgentID: "agent_b"}, ids(6, 1)},
		{"an agent nobody has", memstore.SessionFilter{AgentID: "7"}, ids()},
	} {
		got, _ := allSessions(t, e.b, e.ws, tc.f)
		if !slices.Equal(sessionIDs(got), tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, sessionIDs(got), tc.want)
		}
	}
	for i, s := range all {
		if want := map[int]string{0: "agent_a", 1: "agent_b", 2: "agent_a", 5: "agent_a", 6: "agent_b", 7: "agent_a"}[i]; memstore.SessionAgentID(s.Fields) != want {
			t.Errorf("SessionAgentID of session %d: %q, want %q", i, memstore.SessionAgentID(s.Fields), want)
		}
	}
	// A cursor of one order is not one of the other.
	page, err := e.b.Sessions(ctx, e.ws, memstore.SessionFilter{Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	_, err = e.b.Sessions(ctx, e.ws, memstore.SessionFilter{Limit: 1, Ascending: true, Page: page.Next})
	wantCode(t, err, memstore.EInvalid, "a newest-first cursor, oldest first")
	_, err = e.b.Sessions(ctx, e.ws, memstore.SessionFilter{Statuses: []memstore.SessionStatus{"archived"}})
	wantCode(t, err, memstore.EInvalid, "an unknown status")
}

// testRefreshNotices checks the notices of changed attachments: told
// once per change of attachments, never for an update of other fields,
// and stopping no caller, only making it stale.
func testRefreshNotices(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	st := e.store(t, e.ws, "notes", "")
	s, _, secret := e.create(t, e.ws, memstore.SessionCreate{})
	c, err := e.b.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	listener := e.listenRevocations(t)
	heard := func(what string, want ...memstore.Revocation) {
		t.Helper()
		if got := listener.take(); !slices.Equal(got, want) {
			t.Errorf("%s: heard %+v, want %+v", what, got, want)
		}
	}
	refresh := memstore.Revocation{SessionID: s.ID, Refresh: true}
	if refresh.Stops(c) || !refresh.Stale(c) {
		t.Errorf("a refresh stops the caller or leaves it fresh")
	}
	title := "t"
	if _, err := e.b.UpdateSession(ctx, e.ws, s.ID, memstore.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	heard("title updated")
	if _, err := e.b.AttachStore(ctx, e.ws, s.ID, memstore.AttachmentCreate{StoreID: st.ID}); err != nil {
		t.Fatal(err)
	}
	heard("store attached", refresh)
	ro := memstore.AccessReadOnly
	for range 2 {
		if _, err := e.b.UpdateAttachment(ctx, e.ws, s.ID, st.ID, memstore.AttachmentUpdate{Access: &ro}); err != nil {
			t.Fatal(err)
		}
	}
	heard("access changed, then set again", refresh)
	if _, err := e.b.DetachStore(ctx, e.ws, s.ID, st.ID); err != nil {
		t.Fatal(err)
	}
	heard("store detached", refresh)
	_, err = e.b.DetachStore(ctx, e.ws, s.ID, st.ID)
	wantCode(t, err, memstore.ENotFound, "detach again")
	heard("a refused detach")
	if err := e.b.DeleteSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	heard("session deleted", memstore.Revocation{SessionID: s.ID})
}

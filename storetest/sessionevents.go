package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// eventsLimit is the cap on a session's events in the tests of
// transcripts: small, so that reaching it is cheap.
const eventsLimit = 8

// runSessionEvents runs the tests of memstore.EventService (docs/api.md,
// Session transcripts). open returns fresh, empty services whose core
// caps a session's events at eventsLimit, with clock now.
func runSessionEvents(t *testing.T, open func(t *testing.T, now func() time.Time) Services) {
	runWithClock(t, []clockTest[*eventsEnv]{
		{"Transcript", testTranscript},
		{"Pages", testTranscriptPages},
		{"Bounds", testTranscriptBounds},
		{"Access", testTranscriptAccess},
		{"Erasure", testTranscriptErasure},
		{"Concurrent", testTranscriptConcurrent},
		{"ResultsOfEarlierTurns", testResultsOfEarlierTurns},
	}, func(t *testing.T, c *Clock) *eventsEnv {
		raw := open(t, c.Now)
		e := &eventsEnv{sessionEnv: sessionEnv{b: &asKeys{stores: raw, sessions: raw, KeyService: raw}, raw: raw, clock: c}, ev: raw}
		e.ws = e.workspace(t, "one")
		e.ws2 = e.workspace(t, "two")
		return e
	})
}

type eventsEnv struct {
	sessionEnv
	ev memstore.EventService
}

// key is the caller of an API key of workspace ws.
func (e *eventsEnv) key(ws string) *memstore.Caller { return keyCaller(ws, reader) }

// events lists all of a session's events, oldest first, page by page.
func (e *eventsEnv) events(t *testing.T, c *memstore.Caller, sessionID string, f memstore.SessionEventFilter) []memstore.SessionEvent {
	t.Helper()
	all, _ := allPages(t, "ListSessionEvents", effectiveLimit(f.Limit, false), "", func(page string) (memstore.Page[memstore.SessionEvent], error) {
		f.Page = page
		return e.ev.ListSessionEvents(t.Context(), c, sessionID, f)
	})
	return all
}

func eventTypes(events []memstore.SessionEvent) []string {
	types := make([]string, len(events))
	for i, ev := range events {
		types[i] = ev.Type
	}
	return types
}

// field reads one field of an event's body.
func field(t *testing.T, ev memstore.SessionEvent, name string, v any) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(ev.Body, &fields); err != nil {
		t.Fatalf("event %s: body %s: %v", ev.ID, ev.Body, err)
	}
	if err := json.Unmarshal(fields[name], v); err != nil {
		t.Fatalf("event %s: %s in %s: %v", ev.ID, name, ev.Body, err)
	}
}

// aTurn is a turn of a harness's loop: the user asks, the assistant
// thinks, says something and calls a tool, the tool answers, the
// assistant concludes.
var aTurn = memstore.Turn{Messages: []memstore.TurnMessage{
	{Role: "user", Content: json.RawMessage(`"what is in my notes?"`)},
	{Role: "assistant", Content: json.RawMessage(`[{"type":"thinking","thinking":"look","signature":"x"},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_01","name":"memory_list","input":{"path":"/"}}]`)},
	{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","tool_use_id":"toolu_01","content":"notes.md","is_error":false}]`)},
	{Role: "assistant", Content: json.RawMessage(`[{"type":"text","text":"You have notes.md."}]`)},
}}

// aTurnTypes are the events aTurn makes.
var aTurnTypes = []string{"user.message", "agent.thinking", "agent.message", "agent.tool_use", "agent.tool_result", "agent.message"}

func testTranscript(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	key := e.key(e.ws)
	if got := e.events(t, key, s.ID, memstore.SessionEventFilter{}); len(got) != 0 {
		t.Fatalf("a new session has events: %v", eventTypes(got))
	}
	e.clock.Advance(time.Second)
	sentAt := e.clock.Now()
	sent, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{
		json.RawMessage(`{"type":"user.message","content":[{"type":"text","text":"hello"}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].Type != "user.message" {
		t.Fatalf("Send returned %v", eventTypes(sent))
	}
	wantPrefix(t, sent[0].ID, memstore.SessionEventIDPrefix, "a sent event's ID")
	wantTime(t, sent[0].ProcessedAt, sentAt, "a sent event's time")

	e.clock.Advance(time.Second)
	turn, err := e.ev.AppendSessionTurn(ctx, key, s.ID, aTurn)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(turn); !slices.Equal(got, aTurnTypes) {
		t.Fatalf("the turn made %v, want %v", got, aTurnTypes)
	}

	all := e.events(t, key, s.ID, memstore.SessionEventFilter{})
	want := append([]string{"user.message"}, aTurnTypes...)
	if got := eventTypes(all); !slices.Equal(got, want) {
		t.Fatalf("the transcript is %v, want %v", got, want)
	}
	for i, ev := range all {
		wantPrefix(t, ev.ID, memstore.SessionEventIDPrefix, "an event's ID")
		if ev.SessionID != s.ID {
			t.Errorf("event %d is of session %q, want %s", i, ev.SessionID, s.ID)
		}
		if ev.Seq != 0 && ev.Seq != int64(i+1) { // the HTTP API carries no number
			t.Errorf("event %d has number %d, want %d", i, ev.Seq, i+1)
		}
		if i > 0 && ev.ID == all[i-1].ID {
			t.Errorf("events %d and %d share ID %s", i-1, i, ev.ID)
		}
		var typ string
		field(t, ev, "type", &typ)
		if typ != ev.Type {
			t.Errorf("event %d: body's type %q, event's %q", i, typ, ev.Type)
		}
	}
	if all[0].ID != sent[0].ID || all[1].ID != turn[0].ID {
		t.Errorf("the list's IDs are not those the appends returned")
	}
	var text []struct{ Type, Text string }
	field(t, all[1], "content", &text)
	if len(text) != 1 || text[0].Text != "what is in my notes?" {
		t.Errorf("a string content became %+v, want one text block", text)
	}
	var name string
	var input map[string]string
	field(t, all[4], "name", &name)
	field(t, all[4], "input", &input)
	if name != "memory_list" || input["path"] != "/" {
		t.Errorf("the tool_use event has name %q, input %v", name, input)
	}
	// A result names the event of its tool use, as the SDKs' do.
	var useID string
	field(t, all[5], "tool_use_id", &useID)
	if useID != all[4].ID {
		t.Errorf("the tool_result's tool_use_id is %q, want the tool_use event's ID %s", useID, all[4].ID)
	}
	var result []struct{ Type, Text string }
	field(t, all[5], "content", &result)
	if len(result) != 1 || result[0].Text != "notes.md" {
		t.Errorf("the tool result's content is %+v", result)
	}
	obj := all[5].Object()
	var wire map[string]any
	if err := json.Unmarshal(obj, &wire); err != nil || wire["id"] != all[5].ID || wire["type"] != "agent.tool_result" || wire["processed_at"] == nil {
		t.Errorf("the wire object %s lacks its id, type or processed_at (%v)", obj, err)
	}

	// Filters: types, and times.
	uses := e.events(t, key, s.ID, memstore.SessionEventFilter{Types: []string{"agent.tool_use", "agent.tool_result"}})
	if got := eventTypes(uses); !slices.Equal(got, []string{"agent.tool_use", "agent.tool_result"}) {
		t.Errorf("types filter: %v", got)
	}
	after := e.events(t, key, s.ID, memstore.SessionEventFilter{CreatedAtGT: &sentAt})
	if len(after) != len(aTurnTypes) {
		t.Errorf("created_at[gt] the send: %d events, want the turn's %d", len(after), len(aTurnTypes))
	}
	upTo := e.events(t, key, s.ID, memstore.SessionEventFilter{CreatedAtLTE: &sentAt})
	if len(upTo) != 1 || upTo[0].ID != sent[0].ID {
		t.Errorf("created_at[lte] the send: %v", eventTypes(upTo))
	}
}

func testTranscriptPages(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	key := e.key(e.ws)
	var ids []string
	for i := range 7 {
		e.clock.Advance(time.Millisecond)
		out, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"type":"user.message","content":[{"type":"text","text":"m%d"}]}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out[0].ID)
	}
	got := e.events(t, key, s.ID, memstore.SessionEventFilter{Limit: 3})
	if gotIDs := eventIDs(got); !slices.Equal(gotIDs, ids) {
		t.Errorf("oldest first, by pages of 3: %v, want %v", gotIDs, ids)
	}
	desc := e.events(t, key, s.ID, memstore.SessionEventFilter{Limit: 2, Descending: true})
	slices.Reverse(ids)
	if gotIDs := eventIDs(desc); !slices.Equal(gotIDs, ids) {
		t.Errorf("newest first, by pages of 2: %v, want %v", gotIDs, ids)
	}
	// A cursor is of one session's list.
	other, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	page, err := e.ev.ListSessionEvents(ctx, key, s.ID, memstore.SessionEventFilter{Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("a first page of 1: %v, next %q", err, page.Next)
	}
	_, err = e.ev.ListSessionEvents(ctx, key, other.ID, memstore.SessionEventFilter{Limit: 1, Page: page.Next})
	wantCode(t, err, memstore.EInvalid, "another session's cursor")
	_, err = e.ev.ListSessionEvents(ctx, key, s.ID, memstore.SessionEventFilter{Limit: 1, Page: page.Next, Descending: true})
	wantCode(t, err, memstore.EInvalid, "an ascending cursor for a descending list")
	_, err = e.ev.ListSessionEvents(ctx, key, s.ID, memstore.SessionEventFilter{Limit: memstore.MaxPageSize + 1})
	wantCode(t, err, memstore.EInvalid, "a page too large")
}

func eventIDs(events []memstore.SessionEvent) []string {
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
	}
	return ids
}

func testTranscriptBounds(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	key := e.key(e.ws)
	msg := func(text string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": "user.message", "content": []any{map[string]string{"type": "text", "text": text}}})
		return b
	}
	count := func() int { return len(e.events(t, key, s.ID, memstore.SessionEventFilter{})) }
	if _, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{msg("one")}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		what   string
		events []json.RawMessage
		words  string
	}{
		{"an event too big", []json.RawMessage{msg("ok"), msg(strings.Repeat("x", memstore.MaxSessionEventBytes))}, "limit is 262144 bytes"},
		{"an agent event", []json.RawMessage{json.RawMessage(`{"type":"agent.message","content":[]}`)}, "cannot be sent"},
		{"an event with its own ID", []json.RawMessage{json.RawMessage(`{"type":"user.interrupt","id":"sevt_x"}`)}, "given by the server"},
		{"no type", []json.RawMessage{json.RawMessage(`{"content":[]}`)}, "type is required"},
		{"not an object", []json.RawMessage{json.RawMessage(`"hello"`)}, "JSON object"},
		{"no events", nil, "at least one"},
	} {
		_, err := e.ev.SendSessionEvents(ctx, key, s.ID, tc.events)
		if wantCode(t, err, memstore.EInvalid, tc.what) && !strings.Contains(memstore.ErrorMessage(err), tc.words) {
			t.Errorf("%s: %q does not say %q", tc.what, memstore.ErrorMessage(err), tc.words)
		}
	}
	for _, tc := range []struct {
		what  string
		turn  memstore.Turn
		words string
	}{
		{"a turn's block too big", memstore.Turn{Messages: []memstore.TurnMessage{{Role: "user", Content: json.RawMessage(`"` + strings.Repeat("y", memstore.MaxSessionEventBytes) + `"`)}}}, "limit is 262144 bytes"},
		{"a bad role", memstore.Turn{Messages: []memstore.TurnMessage{{Role: "system", Content: json.RawMessage(`"x"`)}}}, "user or assistant"},
		{"a tool_use in a user message", memstore.Turn{Messages: []memstore.TurnMessage{{Role: "user", Content: json.RawMessage(`[{"type":"tool_use","id":"t","name":"n","input":{}}]`)}}}, "is not kept in a user message"},
		{"no messages", memstore.Turn{}, "at least one"},
	} {
		_, err := e.ev.AppendSessionTurn(ctx, key, s.ID, tc.turn)
		if wantCode(t, err, memstore.EInvalid, tc.what) && !strings.Contains(memstore.ErrorMessage(err), tc.words) {
			t.Errorf("%s: %q does not say %q", tc.what, memstore.ErrorMessage(err), tc.words)
		}
	}
	if n := count(); n != 1 {
		t.Fatalf("refused appends left %d events, want the 1 sent before", n)
	}

	// The cap on a session's events: an append that would pass it is
	// refused whole.
	var fill []json.RawMessage
	for range eventsLimit - 2 {
		fill = append(fill, msg("fill"))
	}
	if _, err := e.ev.SendSessionEvents(ctx, key, s.ID, fill); err != nil {
		t.Fatal(err)
	}
	_, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{msg("a"), msg("b")})
	if wantCode(t, err, memstore.EInvalid, "an append past the cap") && !strings.Contains(memstore.ErrorMessage(err), fmt.Sprintf("holds %d events; 2 more would pass its limit of %d events: send at most 1", eventsLimit-1, eventsLimit)) {
		t.Errorf("the refusal %q does not name the limit", memstore.ErrorMessage(err))
	}
	if n := count(); n != eventsLimit-1 {
		t.Fatalf("after a refusal at the cap: %d events, want %d", n, eventsLimit-1)
	}
	if _, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{msg("last")}); err != nil {
		t.Fatalf("the last event within the cap: %v", err)
	}
	_, err = e.ev.AppendSessionTurn(ctx, key, s.ID, aTurn)
	if wantCode(t, err, memstore.EInvalid, "a turn at the cap") && !strings.Contains(memstore.ErrorMessage(err), fmt.Sprintf("is at its limit of %d events", eventsLimit)) {
		t.Errorf("the refusal at the cap %q does not say so", memstore.ErrorMessage(err))
	}
	// Another session has its own.
	other, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	if _, err := e.ev.AppendSessionTurn(ctx, key, other.ID, aTurn); err != nil {
		t.Errorf("another session's turn: %v", err)
	}
}

func testTranscriptAccess(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	key := e.key(e.ws)
	s, _, secret := e.create(t, e.ws, memstore.SessionCreate{})
	other, _, otherSecret := e.create(t, e.ws, memstore.SessionCreate{})
	if _, err := e.ev.AppendSessionTurn(ctx, key, s.ID, aTurn); err != nil {
		t.Fatal(err)
	}

	// Another workspace sees nothing of it.
	key2 := e.key(e.ws2)
	_, err := e.ev.ListSessionEvents(ctx, key2, s.ID, memstore.SessionEventFilter{})
	wantCode(t, err, memstore.ENotFound, "another workspace's list")
	_, err = e.ev.AppendSessionTurn(ctx, key2, s.ID, aTurn)
	wantCode(t, err, memstore.ENotFound, "another workspace's turn")
	_, err = e.ev.SendSessionEvents(ctx, key2, s.ID, []json.RawMessage{json.RawMessage(`{"type":"user.interrupt"}`)})
	wantCode(t, err, memstore.ENotFound, "another workspace's send")
	_, err = e.ev.ListSessionEvents(ctx, key, "sesn_missing", memstore.SessionEventFilter{})
	wantCode(t, err, memstore.ENotFound, "a session that does not exist")

	// A session token reaches its own session alone.
	self, err := e.b.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ev.SendSessionEvents(ctx, self, s.ID, []json.RawMessage{json.RawMessage(`{"type":"user.interrupt"}`)}); err != nil {
		t.Errorf("a token's send to its own session: %v", err)
	}
	if got := e.events(t, self, s.ID, memstore.SessionEventFilter{}); len(got) != len(aTurnTypes)+1 {
		t.Errorf("a token lists %d events of its own session, want %d", len(got), len(aTurnTypes)+1)
	}
	_, err = e.ev.ListSessionEvents(ctx, self, other.ID, memstore.SessionEventFilter{})
	wantCode(t, err, memstore.EPermission, "a token's list of another session")
	_, err = e.ev.AppendSessionTurn(ctx, self, other.ID, aTurn)
	wantCode(t, err, memstore.EPermission, "a token's turn in another session")
	otherCaller, err := e.b.AuthenticateSession(ctx, otherSecret)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ev.ListSessionEvents(ctx, otherCaller, s.ID, memstore.SessionEventFilter{})
	wantCode(t, err, memstore.EPermission, "the other token's list of the first session")
	if got := e.events(t, key, other.ID, memstore.SessionEventFilter{}); len(got) != 0 {
		t.Errorf("refused appends wrote %d events", len(got))
	}

	// An archived session's transcript is closed, and still read.
	if _, err := e.b.ArchiveSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ev.AppendSessionTurn(ctx, key, s.ID, aTurn)
	wantCode(t, err, memstore.EConflict, "a turn in an archived session")
	if got := e.events(t, key, s.ID, memstore.SessionEventFilter{}); len(got) != len(aTurnTypes)+1 {
		t.Errorf("an archived session lists %d events, want %d", len(got), len(aTurnTypes)+1)
	}
}

func testTranscriptErasure(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	key := e.key(e.ws)
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	keep, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	for _, id := range []string{s.ID, keep.ID} {
		if _, err := e.ev.AppendSessionTurn(ctx, key, id, aTurn); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.b.DeleteSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.ev.ListSessionEvents(ctx, key, s.ID, memstore.SessionEventFilter{})
	wantCode(t, err, memstore.ENotFound, "a deleted session's events")
	if got := e.events(t, key, keep.ID, memstore.SessionEventFilter{}); len(got) != len(aTurnTypes) {
		t.Errorf("another session keeps %d events, want %d", len(got), len(aTurnTypes))
	}
}

// testTranscriptConcurrent: appends to one session at once all succeed,
// each whole and in one piece, every event numbered once.
func testTranscriptConcurrent(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	key := e.key(e.ws)
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	const writers = eventsLimit / 2
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.ev.SendSessionEvents(ctx, key, s.ID, []json.RawMessage{
				json.RawMessage(fmt.Sprintf(`{"type":"user.message","content":[{"type":"text","text":"w%d a"}]}`, i)),
				json.RawMessage(fmt.Sprintf(`{"type":"user.message","content":[{"type":"text","text":"w%d b"}]}`, i)),
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a concurrent append: %v", err)
		}
	}
	all := e.events(t, key, s.ID, memstore.SessionEventFilter{})
	if len(all) != writers*2 {
		t.Fatalf("%d events, want %d", len(all), writers*2)
	}
	seen := map[string]bool{}
	for i := 0; i < len(all); i += 2 {
		var a, b []struct{ Text string }
		field(t, all[i], "content", &a)
		field(t, all[i+1], "content", &b)
		w, ok := strings.CutSuffix(a[0].Text, " a")
		if !ok || b[0].Text != w+" b" || seen[w] {
			t.Errorf("events %d and %d are %q and %q: an append was split or repeated", i, i+1, a[0].Text, b[0].Text)
		}
		seen[w] = true
		if all[i].Seq != 0 && (all[i].Seq != int64(i+1) || all[i+1].Seq != int64(i+2)) {
			t.Errorf("events %d and %d are numbered %d and %d", i, i+1, all[i].Seq, all[i+1].Seq)
		}
	}
}

// testResultsOfEarlierTurns: a harness that appends a tool call in one
// turn and its result in the next still gets a result naming the call's
// event; a result that answers no call of the session keeps its ID, and
// a session never finds another's calls.
func testResultsOfEarlierTurns(t *testing.T, e *eventsEnv) {
	ctx := t.Context()
	key := e.key(e.ws)
	s, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	other, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	call := memstore.Turn{Messages: []memstore.TurnMessage{{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"toolu_x","name":"memory_list","input":{}}]`)}}}
	result := memstore.Turn{Messages: []memstore.TurnMessage{{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","tool_use_id":"toolu_x","content":"ok"}]`)}}}
	calls, err := e.ev.AppendSessionTurn(ctx, key, s.ID, call)
	if err != nil {
		t.Fatal(err)
	}
	answered, err := e.ev.AppendSessionTurn(ctx, key, s.ID, result)
	if err != nil {
		t.Fatal(err)
	}
	var useID string
	field(t, answered[0], "tool_use_id", &useID)
	if useID != calls[0].ID {
		t.Errorf("a result of an earlier turn names %q, want the call's event %s", useID, calls[0].ID)
	}
	if !strings.Contains(string(calls[0].Object()), `"name":"memory_list"`) || strings.Contains(string(calls[0].Object()), "toolu_x") {
		t.Errorf("the call's event shows its block ID: %s", calls[0].Object())
	}
	// The same call ID again: a result answers the latest.
	again, err := e.ev.AppendSessionTurn(ctx, key, s.ID, call)
	if err != nil {
		t.Fatal(err)
	}
	answered, err = e.ev.AppendSessionTurn(ctx, key, s.ID, result)
	if err != nil {
		t.Fatal(err)
	}
	if field(t, answered[0], "tool_use_id", &useID); useID != again[0].ID {
		t.Errorf("a result names %q, want the latest call's event %s", useID, again[0].ID)
	}
	// Another session has no such call.
	lone, err := e.ev.AppendSessionTurn(ctx, key, other.ID, result)
	if err != nil {
		t.Fatal(err)
	}
	if field(t, lone[0], "tool_use_id", &useID); useID != "toolu_x" {
		t.Errorf("a result that answers no call of its session names %q, want the ID it was given", useID)
	}
}

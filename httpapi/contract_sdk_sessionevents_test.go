package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// sdkText is a user.message of one text block, as the SDK sends it.
func sdkText(text string) anthropic.BetaManagedAgentsEventParamsUnion {
	return anthropic.BetaManagedAgentsEventParamsOfUserMessage([]anthropic.BetaManagedAgentsUserMessageEventParamsContentUnion{
		{OfText: &anthropic.BetaManagedAgentsTextBlockParam{Text: text, Type: "text"}},
	})
}

// sdkTurn is a turn of a harness's own loop: a tool call and its result,
// then the answer.
var sdkTurn = memstore.Turn{Messages: []memstore.TurnMessage{
	{Role: "assistant", Content: json.RawMessage(`[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_9","name":"memory_read","input":{"path":"/notes.md"}}]`)},
	{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"text","text":"buy milk"}]}]`)},
	{Role: "assistant", Content: json.RawMessage(`"You noted: buy milk."`)},
}}

// TestSDKSessionEvents drives a session's transcript with the Go SDK's
// Beta.Sessions.Events: StreamEvents opened first sees what Send and the
// turn extension append, in order; List and ListAutoPaging read them
// back oldest first as the SDK's event types, the tool result naming its
// tool use's event; the bounds are clear 400s that keep nothing; another
// workspace sees nothing, a session token its own session alone; a
// deleted session's events are gone.
func TestSDKSessionEvents(t *testing.T) { onEachSDKEnv(t, testSDKSessionEvents) }

func testSDKSessionEvents(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sessions := &e.sdk.Beta.Sessions
	newSession := func() *anthropic.BetaManagedAgentsSession {
		t.Helper()
		s, err := sessions.New(ctx, anthropic.BetaSessionNewParams{
			Agent: anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")}, EnvironmentID: "env_01",
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sess, other := newSession(), newSession()

	// The stream first, as the SDKs advise.
	stream := sessions.Events.StreamEvents(ctx, sess.ID, anthropic.BetaSessionEventStreamParams{})
	defer stream.Close()
	streamed := make(chan anthropic.BetaManagedAgentsStreamSessionEventsUnion, 16)
	go func() {
		for stream.Next() {
			streamed <- stream.Current()
		}
		close(streamed)
	}()

	sent, err := sessions.Events.Send(ctx, sess.ID, anthropic.BetaSessionEventSendParams{
		Events: []anthropic.BetaManagedAgentsEventParamsUnion{sdkText("remember that I like tea")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Data) != 1 || sent.Data[0].Type != "user.message" || !strings.HasPrefix(sent.Data[0].ID, memstore.SessionEventIDPrefix) || sent.Data[0].ProcessedAt.IsZero() {
		t.Fatalf("Send answered %s", sent.RawJSON())
	}
	if m := sent.Data[0].AsUserMessage(); len(m.Content) != 1 || m.Content[0].Text != "remember that I like tea" {
		t.Errorf("the sent message reads %s", sent.Data[0].RawJSON())
	}
	turn, err := e.h.client(e.secret).AppendSessionTurn(ctx, nil, sess.ID, sdkTurn)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"user.message", "agent.message", "agent.tool_use", "agent.tool_result", "agent.message"}
	if len(turn) != len(wantTypes)-1 {
		t.Fatalf("the turn made %d events", len(turn))
	}

	// List, oldest first, as the SDK's types.
	page, err := sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != len(wantTypes) {
		t.Fatalf("List: %d events, want %d: %s", len(page.Data), len(wantTypes), page.RawJSON())
	}
	for i, ev := range page.Data {
		if ev.Type != wantTypes[i] {
			t.Errorf("event %d is %s, want %s", i, ev.Type, wantTypes[i])
		}
	}
	if page.Data[0].ID != sent.Data[0].ID {
		t.Errorf("the first event is %s, the sent one %s", page.Data[0].ID, sent.Data[0].ID)
	}
	if m := page.Data[1].AsAgentMessage(); len(m.Content) != 1 || m.Content[0].Text != "Looking." {
		t.Errorf("agent.message: %s", page.Data[1].RawJSON())
	}
	use := page.Data[2].AsAgentToolUse()
	if use.Name != "memory_read" || use.Input["path"] != "/notes.md" {
		t.Errorf("agent.tool_use: %s", page.Data[2].RawJSON())
	}
	result := page.Data[3].AsAgentToolResult()
	if result.ToolUseID != use.ID || len(result.Content) != 1 || result.Content[0].Text != "buy milk" {
		t.Errorf("agent.tool_result names %q (the tool use is %s): %s", result.ToolUseID, use.ID, page.Data[3].RawJSON())
	}
	if m := page.Data[4].AsAgentMessage(); len(m.Content) != 1 || m.Content[0].Text != "You noted: buy milk." {
		t.Errorf("a string content: %s", page.Data[4].RawJSON())
	}
	var ids []string
	all := sessions.Events.ListAutoPaging(ctx, sess.ID, anthropic.BetaSessionEventListParams{Limit: anthropic.Int(2)})
	for all.Next() {
		ids = append(ids, all.Current().ID)
	}
	if all.Err() != nil || len(ids) != len(wantTypes) || ids[0] != page.Data[0].ID || ids[len(ids)-1] != page.Data[len(ids)-1].ID {
		t.Errorf("ListAutoPaging by 2: %v, %v", ids, all.Err())
	}
	desc, err := sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{Order: anthropic.BetaSessionEventListParamsOrderDesc, Limit: anthropic.Int(1)})
	if err != nil || len(desc.Data) != 1 || desc.Data[0].ID != page.Data[4].ID || desc.NextPage == "" {
		t.Errorf("List desc: %v %v", desc, err)
	}
	uses, err := sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{Types: []anthropic.BetaManagedAgentsSessionEventType{"agent.tool_use"}})
	if err != nil || len(uses.Data) != 1 || uses.Data[0].ID != use.ID {
		t.Errorf("List types[]=agent.tool_use: %v %v", uses, err)
	}

	// The stream saw every event, in order.
	for i, want := range wantTypes {
		select {
		case ev, ok := <-streamed:
			if !ok {
				t.Fatalf("the stream ended after %d events: %v", i, stream.Err())
			}
			if ev.Type != want || ev.ID != page.Data[i].ID {
				t.Errorf("streamed event %d: %s %s, want %s %s", i, ev.Type, ev.ID, want, page.Data[i].ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the stream gave %d events of %d", i, len(wantTypes))
		}
	}

	// What the stream does not do is refused, saying so.
	resumed := sessions.Events.StreamEvents(ctx, sess.ID, anthropic.BetaSessionEventStreamParams{}, option.WithHeader("Last-Event-ID", page.Data[0].ID))
	if resumed.Next() {
		t.Error("a stream resumed by Last-Event-ID gave an event")
	}
	sdkErrorSays(t, resumed.Err(), 400, "invalid_request_error", "Last-Event-ID is not supported", "StreamEvents with Last-Event-ID")
	deltas := sessions.Events.StreamEvents(ctx, sess.ID, anthropic.BetaSessionEventStreamParams{EventDeltas: []anthropic.BetaManagedAgentsDeltaType{"agent.message"}})
	if deltas.Next() {
		t.Error("a stream of event deltas gave an event")
	}
	sdkErrorSays(t, deltas.Err(), 400, "invalid_request_error", "event_deltas is not supported", "StreamEvents with event_deltas")

	// The bounds: clear errors, nothing kept.
	_, err = sessions.Events.Send(ctx, sess.ID, anthropic.BetaSessionEventSendParams{
		Events: []anthropic.BetaManagedAgentsEventParamsUnion{sdkText("fine"), sdkText(strings.Repeat("x", memstore.MaxSessionEventBytes))},
	})
	sdkErrorSays(t, err, 400, "invalid_request_error", "limit is 262144 bytes per event", "an event too big")
	_, err = sessions.Events.Send(ctx, sess.ID, anthropic.BetaSessionEventSendParams{}, option.WithJSONSet("events", []any{map[string]any{"type": "agent.message", "content": []any{}}}))
	sdkErrorSays(t, err, 400, "invalid_request_error", "cannot be sent", "an agent event sent")
	if again, err := sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{}); err != nil || len(again.Data) != len(wantTypes) {
		t.Errorf("after refused sends: %d events, %v", len(again.Data), err)
	}

	// Another workspace sees nothing; a token its own session alone.
	_, _, otherSecret := e.h.newKey(t, "other workspace")
	stranger := e.client(otherSecret)
	_, err = stranger.Beta.Sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{})
	sdkError(t, err, 404, "not_found_error", "another workspace's List")
	_, err = stranger.Beta.Sessions.Events.Send(ctx, sess.ID, anthropic.BetaSessionEventSendParams{Events: []anthropic.BetaManagedAgentsEventParamsUnion{sdkText("hi")}})
	sdkError(t, err, 404, "not_found_error", "another workspace's Send")
	agent := e.client("", option.WithAuthToken(sessionToken(t, sess)), option.WithAPIKey(""))
	if own, err := agent.Beta.Sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{}); err != nil || len(own.Data) != len(wantTypes) {
		t.Errorf("a token's List of its own session: %v", err)
	}
	if _, err := agent.Beta.Sessions.Events.Send(ctx, sess.ID, anthropic.BetaSessionEventSendParams{Events: []anthropic.BetaManagedAgentsEventParamsUnion{sdkText("from the agent")}}); err != nil {
		t.Errorf("a token's Send to its own session: %v", err)
	}
	_, err = agent.Beta.Sessions.Events.List(ctx, other.ID, anthropic.BetaSessionEventListParams{})
	sdkError(t, err, 403, "permission_error", "a token's List of another session")
	_, err = agent.Beta.Sessions.Events.Send(ctx, other.ID, anthropic.BetaSessionEventSendParams{Events: []anthropic.BetaManagedAgentsEventParamsUnion{sdkText("hi")}})
	sdkError(t, err, 403, "permission_error", "a token's Send to another session")
	os := agent.Beta.Sessions.Events.StreamEvents(ctx, other.ID, anthropic.BetaSessionEventStreamParams{})
	if os.Next() {
		t.Error("a token streamed another session's events")
	}
	sdkError(t, os.Err(), 403, "permission_error", "a token's StreamEvents of another session")

	// Deleting the session erases its transcript.
	if _, err := sessions.Delete(ctx, sess.ID, anthropic.BetaSessionDeleteParams{}); err != nil {
		t.Fatal(err)
	}
	_, err = sessions.Events.List(ctx, sess.ID, anthropic.BetaSessionEventListParams{})
	sdkError(t, err, 404, "not_found_error", "a deleted session's List")
}

// sdkErrorSays is sdkError whose message also says words.
func sdkErrorSays(t *testing.T, err error, status int, typ, words, what string) {
	t.Helper()
	sdkError(t, err, status, typ, what)
	if err != nil && !strings.Contains(err.Error(), words) {
		t.Errorf("%s: %v does not say %q", what, err, words)
	}
}

// TestSessionEventStreamAcrossReplicas: an event appended through one
// replica reaches a stream open on another at once, woken by the
// database's notice rather than at its next re-read.
func TestSessionEventStreamAcrossReplicas(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		here, there := feedReplicas(t, backend, harnessOptions{})
		_, _, secret := here.newKey(t, "transcripts")
		c := here.client(secret)
		ctx := t.Context()
		s, _, _, err := c.CreateSession(ctx, nil, memstore.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		sdk := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(there.URL), option.WithAPIKey(secret), option.WithHTTPClient(there.srv.Client()))
		stream := sdk.Beta.Sessions.Events.StreamEvents(ctx, s.ID, anthropic.BetaSessionEventStreamParams{})
		defer stream.Close()
		streamed := make(chan string, 4)
		go func() {
			for stream.Next() {
				streamed <- stream.Current().ID
			}
			close(streamed)
		}()
		send := func(text string) (string, time.Time) {
			t.Helper()
			out, err := c.SendSessionEvents(ctx, nil, s.ID, []json.RawMessage{json.RawMessage(`{"type":"user.message","content":[{"type":"text","text":"` + text + `"}]}`)})
			if err != nil {
				t.Fatal(err)
			}
			return out[0].ID, time.Now()
		}
		// The first event shows the stream open and just read, so that
		// its next re-read is a whole StreamRecheck away.
		for i, text := range []string{"first", "second"} {
			id, at := send(text)
			select {
			case got, ok := <-streamed:
				if !ok {
					t.Fatalf("the stream ended: %v", stream.Err())
				}
				if got != id {
					t.Errorf("streamed %s, want %s", got, id)
				}
				if took := time.Since(at); i == 1 && took > httpapi.StreamRecheck/2 {
					t.Errorf("the event arrived %v after its append: at a re-read, not on a notice", took)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the %s event never reached the stream on the other replica", text)
			}
		}
	})
}

// TestSessionEventStreamEnds: a session's stream ends when its session is
// deleted, and a session token's stream when the token is revoked,
// rather than hanging on.
func TestSessionEventStreamEnds(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	_, _, secret := h.newKey(t, "streams")
	c := h.client(secret)
	ctx := t.Context()
	sdk := func(opts ...option.RequestOption) anthropic.Client {
		return anthropic.NewClient(append([]option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(h.URL), option.WithHTTPClient(h.srv.Client())}, opts...)...)
	}
	for _, tc := range []struct {
		what string
		end  func(s *memstore.Session, tok *memstore.SessionToken) error
	}{
		{"the session deleted", func(s *memstore.Session, _ *memstore.SessionToken) error { return c.DeleteSession(ctx, nil, s.ID) }},
		{"the token revoked", func(_ *memstore.Session, tok *memstore.SessionToken) error {
			_, err := c.RevokeSessionToken(ctx, nil, tok.ID)
			return err
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			s, tok, token, err := c.CreateSession(ctx, nil, memstore.SessionCreate{})
			if err != nil {
				t.Fatal(err)
			}
			client := sdk(option.WithAuthToken(token), option.WithAPIKey(""))
			stream := client.Beta.Sessions.Events.StreamEvents(ctx, s.ID, anthropic.BetaSessionEventStreamParams{})
			defer stream.Close()
			ended := make(chan error, 1)
			got := make(chan string, 1)
			go func() {
				for stream.Next() {
					got <- stream.Current().ID
				}
				ended <- stream.Err()
			}()
			sent, err := c.SendSessionEvents(ctx, nil, s.ID, []json.RawMessage{json.RawMessage(`{"type":"user.interrupt"}`)})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case id := <-got:
				if id != sent[0].ID {
					t.Errorf("streamed %s, want %s", id, sent[0].ID)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the stream is not open")
			}
			if err := tc.end(s, tok); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ended:
				if err == nil || !strings.Contains(err.Error(), "credential stopped working") {
					t.Errorf("the stream ended with %v, want an error saying its credential stopped working", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("the stream goes on after %s", tc.what)
			}
		})
	}
}

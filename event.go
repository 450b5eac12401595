package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Session transcripts. A session keeps the events of what happened in it,
// in the shape of the SDKs' Beta.Sessions.Events: the user-side events
// the SDKs send (Send), and whole turns of a harness's own agent loop in
// the Messages API's shape (AppendSessionTurn), kept as the SDKs' agent
// events. Events are append-only: each has the session's next sequence
// number, given in the transaction that writes it while the session's row
// is held, so a session's events have no gap and follow the order of the
// commits. They go with the session when it is deleted.

// SessionEventIDPrefix begins every session event's ID, as the hosted
// API's do.
const SessionEventIDPrefix = "sevt_"

// Limits of transcripts (docs/api.md, Session transcripts).
const (
	// MaxSessionEventBytes bounds one event as kept (its JSON object),
	// so that a page of events stays small enough to read.
	MaxSessionEventBytes = 256 << 10
	// MaxEventsPerAppend bounds the events that one Send or one turn
	// makes; a longer transcript is appended in several calls.
	MaxEventsPerAppend = 1000
	// MaxSessionEventPageBytes bounds the bodies of the events of one
	// page of a list (and so of a stream's read): a page ends early,
	// with a next page, rather than pass it, and holds at least one
	// event. Without it a page of large events would be 25 MiB.
	MaxSessionEventPageBytes = 2 << 20
)

// A SessionEvent is one entry of a session's transcript, append-only.
type SessionEvent struct {
	ID          string // sevt_...
	WorkspaceID string
	SessionID   string
	Seq         int64  // order within the session, from 1, without gaps
	Type        string // the SDK's event type: "user.message", "agent.message", "agent.tool_use", ...
	// Body is the event object as the SDK defines it, type included,
	// without id and processed_at, which Object adds.
	Body        json.RawMessage
	ProcessedAt time.Time
	// TranscriptBytes is the size of the bodies of the session's events
	// up to this one included: what the cap on a transcript's size
	// counts, kept with each event so that the last one tells it.
	TranscriptBytes int64
	// ToolUseID is, for an agent.tool_use appended from a turn, the ID
	// its tool_use block had, by which a tool_result of a later turn
	// finds the event it answers; "" otherwise. It is not on the wire.
	ToolUseID string
}

// Object is the event as the SDKs read it: Body with its id and
// processed_at (RFC 3339, UTC).
func (e *SessionEvent) Object() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.WriteString(strconv.Quote(e.ID))
	b.WriteString(`,"processed_at":"`)
	b.WriteString(e.ProcessedAt.UTC().Format(time.RFC3339Nano))
	b.WriteString(`"`)
	body := bytes.TrimSpace(e.Body)
	if len(body) > 2 { // {} adds nothing
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes()
}

// The session events that Send accepts: the user side of the SDKs'
// Beta.Sessions.Events.Send.
var userEventTypes = []string{
	"user.message", "user.interrupt", "user.tool_confirmation", "user.custom_tool_result",
	"user.define_outcome", "user.tool_result", "system.message",
}

// A Turn is what a harness running its own agent loop appends to a
// session's transcript at once: messages in the Messages API's shape.
type Turn struct {
	Messages []TurnMessage `json:"messages"`
}

// A TurnMessage is one message of the Messages API: its role, "user" or
// "assistant", and its content, a string or an array of content blocks
// (text, tool_use, tool_result, thinking, image, document).
type TurnMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// SessionEventFilter selects a page of a session's events, oldest first
// unless Descending.
type SessionEventFilter struct {
	Types []string // only these event types; all when empty
	// Bounds on ProcessedAt: after (GT), from (GTE), before (LT), up to (LTE).
	CreatedAtGT, CreatedAtGTE, CreatedAtLT, CreatedAtLTE *time.Time
	Descending                                           bool
	// AfterSeq starts the list after the event of that number (oldest
	// first only): how a stream reads what is new.
	AfterSeq int64
	Limit    int    // page size, 1-100
	Page     string // cursor from a previous page's Next
}

// EventService keeps the transcripts of the sessions of the caller's
// workspace (ENotFound for another workspace's session). An API key
// reaches every session of its workspace; a session caller (its token,
// or the Caller of a session that memstore itself runs) its own session
// alone (EPermission); a console user reads with ReadSessions and
// appends with ManageSessions.
type EventService interface {
	// SendSessionEvents appends the user-side events of the SDKs' Send
	// (userEventTypes), each a JSON object with its type, and returns
	// them as kept (EInvalid naming the event at fault, EConflict for an
	// archived session; nothing is kept then).
	SendSessionEvents(ctx context.Context, c *Caller, sessionID string, events []json.RawMessage) ([]SessionEvent, error)
	// AppendSessionTurn appends a turn in the Messages API's shape as the
	// SDKs' events (turnDrafts), in order, and returns them.
	AppendSessionTurn(ctx context.Context, c *Caller, sessionID string, turn Turn) ([]SessionEvent, error)
	// ListSessionEvents lists a session's events, oldest first unless
	// f.Descending (EInvalid for a bad filter or cursor).
	ListSessionEvents(ctx context.Context, c *Caller, sessionID string, f SessionEventFilter) (Page[SessionEvent], error)
}

// SessionEventStorage reads the transcripts a backend keeps; trusted, as
// the other storage is. The events are written through SessionTx
// (AppendEvent), in the transaction that holds the session.
type SessionEventStorage interface {
	// SessionEvents lists the events of a session of the workspace by f
	// (ENotFound; EInvalid for a cursor of another list).
	SessionEvents(ctx context.Context, workspaceID, sessionID string, f SessionEventFilter) (Page[SessionEvent], error)
}

// CanWriteSession returns nil when the caller may append to a session's
// transcript: an API key any of its workspace's, a user whose role
// administers sessions likewise, a session caller its own alone
// (EPermission).
func (c *Caller) CanWriteSession(sessionID string) error {
	return c.canReachSession(sessionID, administer, ManageSessions)
}

// SendSessionEvents implements EventService.
func (co *Core) SendSessionEvents(ctx context.Context, c *Caller, sessionID string, events []json.RawMessage) ([]SessionEvent, error) {
	if err := co.checkAppend(c, sessionID); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, Errorf(EInvalid, "events must hold at least one event")
	}
	drafts := make([]eventDraft, len(events))
	for i, raw := range events {
		d, err := userEvent(fmt.Sprintf("events[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		drafts[i] = d
	}
	return co.appendEvents(ctx, c, sessionID, drafts)
}

// AppendSessionTurn implements EventService.
func (co *Core) AppendSessionTurn(ctx context.Context, c *Caller, sessionID string, turn Turn) ([]SessionEvent, error) {
	if err := co.checkAppend(c, sessionID); err != nil {
		return nil, err
	}
	drafts, err := turnDrafts(turn)
	if err != nil {
		return nil, err
	}
	return co.appendEvents(ctx, c, sessionID, drafts)
}

// ListSessionEvents implements EventService.
func (co *Core) ListSessionEvents(ctx context.Context, c *Caller, sessionID string, f SessionEventFilter) (Page[SessionEvent], error) {
	if err := c.CanReadSession(sessionID); err != nil {
		return Page[SessionEvent]{}, err
	}
	if err := ValidateID("session_id", sessionID); err != nil {
		return Page[SessionEvent]{}, err
	}
	if _, err := PageSize(f.Limit, false); err != nil {
		return Page[SessionEvent]{}, err
	}
	if f.AfterSeq < 0 || f.AfterSeq > 0 && f.Descending {
		return Page[SessionEvent]{}, Errorf(EInvalid, "events after a sequence number are listed oldest first only")
	}
	for i, t := range f.Types {
		if err := ValidateText(fmt.Sprintf("types[%d]", i), t); err != nil {
			return Page[SessionEvent]{}, err
		}
	}
	if len(f.Types) > MaxPageSize {
		return Page[SessionEvent]{}, Errorf(EInvalid, "types[] names at most %d event types; %d were given", MaxPageSize, len(f.Types))
	}
	return co.b.SessionEvents(ctx, c.WorkspaceID, sessionID, f)
}

// checkAppend is what every append checks first: the caller, then the
// session's ID.
func (co *Core) checkAppend(c *Caller, sessionID string) error {
	if err := c.CanWriteSession(sessionID); err != nil {
		return err
	}
	return ValidateID("session_id", sessionID)
}

// eventQuota is the cap on a session's events.
func eventQuota(sessionID string, max int) Quota {
	return newQuota(max, "session "+sessionID, "events", "start a new session for what follows", "--max-events-per-session")
}

// appendEvents writes drafts, in order, at the end of a session's
// transcript, in one transaction that holds the session: all of them or,
// on any refusal, none.
func (co *Core) appendEvents(ctx context.Context, c *Caller, sessionID string, drafts []eventDraft) ([]SessionEvent, error) {
	if len(drafts) > MaxEventsPerAppend {
		return nil, Errorf(EInvalid, "one request appends at most %d events; this one makes %d: send the rest in another request", MaxEventsPerAppend, len(drafts))
	}
	q := eventQuota(sessionID, co.limits.EventsPerSession)
	var out []SessionEvent
	err := co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) error {
		out = nil
		s, err := tx.Session(sessionID)
		if err != nil {
			return err
		}
		if s.ArchivedAt != nil {
			return Errorf(EConflict, "session %s is archived; its transcript takes no more events", sessionID)
		}
		last, size, err := tx.TranscriptEnd(sessionID)
		if err != nil {
			return err
		}
		if q.Limited() && last+int64(len(drafts)) > int64(q.Max()) {
			if last >= int64(q.Max()) {
				return q.Check(q.Max())
			}
			return Errorf(EInvalid, "session %s holds %d events; %d more would pass its limit of %d events: send at most %d, "+
				"or start a new session for what follows, or %s", sessionID, last, len(drafts), q.Max(), int64(q.Max())-last, raiseWith("--max-events-per-session"))
		}
		now := co.b.Now()
		ids := map[string]string{} // a tool_use block's ID -> its event's
		for i, d := range drafts {
			e := SessionEvent{WorkspaceID: c.WorkspaceID, SessionID: sessionID, Seq: last + int64(i) + 1, Type: d.typ, ProcessedAt: now}
			if err := findToolUse(tx, sessionID, d, ids); err != nil {
				return err
			}
			e.ToolUseID = d.toolUseID
			if e.Body, err = d.body(ids); err != nil {
				return err
			}
			size += int64(len(e.Body))
			if limit := co.limits.EventBytesPerSession; limit > 0 && size > int64(limit) {
				return Errorf(EInvalid, "session %s's transcript would take %d bytes with this request; its limit is %d bytes: "+
					"start a new session for what follows, or %s", sessionID, size, limit, raiseWith("--max-transcript-bytes"))
			}
			e.TranscriptBytes = size
			if err := tx.AppendEvent(&e); err != nil {
				return err
			}
			if d.toolUseID != "" {
				ids[d.toolUseID] = e.ID
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// findToolUse puts in ids the event of the tool use that d answers, when
// an earlier append of the session made it: the latest with that ID.
func findToolUse(tx SessionTx, sessionID string, d eventDraft, ids map[string]string) error {
	if d.resultOf == "" || ids[d.resultOf] != "" {
		return nil
	}
	id, err := tx.ToolUseEvent(sessionID, d.resultOf)
	if err == nil && id != "" {
		ids[d.resultOf] = id
	}
	return err
}

// An eventDraft is an event still to write: its type and fields; when it
// answers a tool_use of the same append (resultOf), the tool_use's event
// ID replaces the block's ID in tool_use_id.
type eventDraft struct {
	typ       string
	fields    map[string]json.RawMessage // type included
	toolUseID string                     // a tool_use block's ID, which later results name
	resultOf  string                     // the tool_use block's ID this result answers
}

// body is the draft's JSON object, checked against MaxSessionEventBytes.
func (d eventDraft) body(ids map[string]string) (json.RawMessage, error) {
	if d.resultOf != "" {
		if id, ok := ids[d.resultOf]; ok {
			d.fields["tool_use_id"] = mustJSON(id)
		}
	}
	b, err := json.Marshal(d.fields)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSessionEventBytes {
		return nil, Errorf(EInvalid, "a %s event is %d bytes; the limit is %d bytes per event: split its content", d.typ, len(b), MaxSessionEventBytes)
	}
	return b, nil
}

// checkSize refuses a draft too big to keep, before any write.
func (d eventDraft) checkSize(what string) error {
	b, err := json.Marshal(d.fields)
	if err != nil {
		return Errorf(EInvalid, "%s: %v", what, err)
	}
	if len(b) > MaxSessionEventBytes {
		return Errorf(EInvalid, "%s is %d bytes; the limit is %d bytes per event: split its content", what, len(b), MaxSessionEventBytes)
	}
	if err := ValidateJSONText(what, b); err != nil {
		return err
	}
	return ValidateJSONDepth(what, b)
}

// userEvent checks one event of Send: a JSON object of a user-side type
// (userEventTypes), with no id or processed_at of its own (the server
// gives them).
func userEvent(what string, raw json.RawMessage) (eventDraft, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return eventDraft{}, Errorf(EInvalid, "%s must be a JSON object with a type", what)
	}
	var typ string
	if json.Unmarshal(fields["type"], &typ) != nil || typ == "" {
		return eventDraft{}, Errorf(EInvalid, "%s.type is required: one of %s", what, strings.Join(userEventTypes, ", "))
	}
	if !slices.Contains(userEventTypes, typ) {
		return eventDraft{}, Errorf(EInvalid, "%s.type %q cannot be sent: send one of %s (agent events are appended as a turn: POST /v1/sessions/{id}/turns)",
			what, shortName(typ), strings.Join(userEventTypes, ", "))
	}
	for _, k := range []string{"id", "processed_at"} {
		if _, ok := fields[k]; ok {
			return eventDraft{}, Errorf(EInvalid, "%s.%s is given by the server; leave it out", what, k)
		}
	}
	if typ == "user.message" || typ == "system.message" {
		if c, ok := fields["content"]; !ok || !isArray(c) {
			return eventDraft{}, Errorf(EInvalid, "%s.content must be an array of content blocks", what)
		}
	}
	if c, ok := fields["content"]; ok {
		if err := checkBlocks(what+".content", c); err != nil {
			return eventDraft{}, err
		}
	}
	d := eventDraft{typ: typ, fields: fields}
	return d, d.checkSize(what)
}

// checkBlocks checks a content that is an array: each of its items must
// be a content block, an object with a type, as every reader of
// transcripts expects. Other values are the event's to define.
func checkBlocks(what string, content json.RawMessage) error {
	if !isArray(content) {
		return nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return Errorf(EInvalid, "%s is not a valid JSON array", what)
	}
	for i, raw := range blocks {
		var b struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type == "" {
			return Errorf(EInvalid, "%s[%d] must be a content block: an object with a type, such as {\"type\": \"text\", \"text\": ...}", what, i)
		}
	}
	return nil
}

func isArray(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '['
}

// A turnBlock is a content block of the Messages API, as far as the
// transcript reads it.
type turnBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   *bool           `json:"is_error"`
}

// turnDrafts is the rule by which a turn becomes the SDKs' events, in
// order: a user message's text, image and document blocks one
// user.message, each tool_result block an agent.tool_result; an
// assistant message's text blocks one agent.message, each tool_use an
// agent.tool_use, each thinking or redacted_thinking block an
// agent.thinking (which the SDKs define without content). A string
// content is one text block. A tool_result names the event of the
// tool_use it answers in tool_use_id (the SDKs' rule), whether that
// tool_use is in the same turn or an earlier one of the session; one that
// answers no tool_use of the session keeps the ID it was given.
func turnDrafts(turn Turn) ([]eventDraft, error) {
	if len(turn.Messages) == 0 {
		return nil, Errorf(EInvalid, "messages must hold at least one message")
	}
	var drafts []eventDraft
	for i, m := range turn.Messages {
		what := fmt.Sprintf("messages[%d]", i)
		blocks, err := turnBlocks(what, m.Content)
		if err != nil {
			return nil, err
		}
		var user, agent bool
		switch m.Role {
		case "user":
			user = true
		case "assistant":
			agent = true
		default:
			return nil, Errorf(EInvalid, "%s.role must be user or assistant, not %q", what, shortName(m.Role))
		}
		var group []json.RawMessage // the message blocks of the event being made
		flush := func() {
			if len(group) == 0 {
				return
			}
			typ := "user.message"
			if agent {
				typ = "agent.message"
			}
			content, _ := json.Marshal(group)
			drafts = append(drafts, eventDraft{typ: typ, fields: map[string]json.RawMessage{"type": mustJSON(typ), "content": content}})
			group = nil
		}
		for j, raw := range blocks {
			bw := fmt.Sprintf("%s.content[%d]", what, j)
			var b turnBlock
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, Errorf(EInvalid, "%s must be a content block object with a type", bw)
			}
			switch {
			case b.Type == "text":
				if b.Text == nil {
					return nil, Errorf(EInvalid, "%s.text is required", bw)
				}
				group = append(group, mustJSON(map[string]any{"type": "text", "text": *b.Text}))
			case user && (b.Type == "image" || b.Type == "document"):
				group = append(group, raw)
			case user && b.Type == "tool_result":
				flush()
				if b.ToolUseID == "" {
					return nil, Errorf(EInvalid, "%s.tool_use_id is required", bw)
				}
				f := map[string]json.RawMessage{"type": mustJSON("agent.tool_result"), "tool_use_id": mustJSON(b.ToolUseID)}
				if len(b.Content) > 0 {
					content, err := turnBlocks(bw, b.Content)
					if err != nil {
						return nil, err
					}
					f["content"] = mustJSON(content)
					if err := checkBlocks(bw+".content", f["content"]); err != nil {
						return nil, err
					}
				}
				if b.IsError != nil {
					f["is_error"] = mustJSON(*b.IsError)
				}
				drafts = append(drafts, eventDraft{typ: "agent.tool_result", fields: f, resultOf: b.ToolUseID})
			case agent && b.Type == "tool_use":
				flush()
				if b.Name == "" {
					return nil, Errorf(EInvalid, "%s.name is required", bw)
				}
				input := b.Input
				if len(bytes.TrimSpace(input)) == 0 || bytes.Equal(bytes.TrimSpace(input), []byte("null")) {
					input = json.RawMessage(`{}`)
				}
				if input[0] != '{' {
					return nil, Errorf(EInvalid, "%s.input must be a JSON object", bw)
				}
				drafts = append(drafts, eventDraft{typ: "agent.tool_use", toolUseID: b.ID, fields: map[string]json.RawMessage{
					"type": mustJSON("agent.tool_use"), "name": mustJSON(b.Name), "input": input,
				}})
			case agent && (b.Type == "thinking" || b.Type == "redacted_thinking"):
				flush()
				drafts = append(drafts, eventDraft{typ: "agent.thinking", fields: map[string]json.RawMessage{"type": mustJSON("agent.thinking")}})
			default:
				allowed := "text, image, document and tool_result"
				if agent {
					allowed = "text, tool_use, thinking and redacted_thinking"
				}
				return nil, Errorf(EInvalid, "%s.type %q is not kept in a %s message: its blocks are %s", bw, shortName(b.Type), m.Role, allowed)
			}
		}
		flush()
	}
	for i, d := range drafts {
		if err := d.checkSize(fmt.Sprintf("event %d of the turn (%s)", i+1, d.typ)); err != nil {
			return nil, err
		}
	}
	return drafts, nil
}

// turnBlocks is a message's (or a tool result's) content as blocks: a
// string is one text block.
func turnBlocks(what string, content json.RawMessage) ([]json.RawMessage, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return nil, Errorf(EInvalid, "%s.content is required: a string or an array of content blocks", what)
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, Errorf(EInvalid, "%s.content is not a valid JSON string", what)
		}
		return []json.RawMessage{mustJSON(map[string]any{"type": "text", "text": s})}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, Errorf(EInvalid, "%s.content must be a string or an array of content blocks", what)
	}
	return blocks, nil
}

// mustJSON is v as JSON, for a v that always marshals: a string, a
// bool, blocks already checked.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only values that always marshal
	}
	return b
}

// FollowSessionEvents follows a session's transcript after event number
// after: it calls fn with each batch of new events, in order, until ctx
// ends (nil) or a read or fn fails (that error; ENotFound once the
// session is deleted). It reads again at once while more events wait,
// when wake delivers (a notice, which may be lost or repeated: nothing
// depends on it), and at least every recheck.
func FollowSessionEvents(ctx context.Context, events EventService, c *Caller, sessionID string, after int64, wake <-chan struct{}, recheck time.Duration, fn func([]SessionEvent) error) error {
	return follow(ctx, wake, recheck,
		func() (Page[SessionEvent], error) {
			return events.ListSessionEvents(ctx, c, sessionID, SessionEventFilter{AfterSeq: after, Limit: MaxPageSize})
		},
		func(page Page[SessionEvent]) (bool, error) {
			n := len(page.Items)
			if n == 0 {
				return false, nil
			}
			if err := fn(page.Items); err != nil {
				return false, err
			}
			after = page.Items[n-1].Seq
			return page.Next != "", nil
		})
}

// LastSessionEventSeq is the number of a session's last event, 0 when it
// has none: where a stream of what is new starts.
func LastSessionEventSeq(ctx context.Context, events EventService, c *Caller, sessionID string) (int64, error) {
	page, err := events.ListSessionEvents(ctx, c, sessionID, SessionEventFilter{Descending: true, Limit: 1})
	if err != nil || len(page.Items) == 0 {
		return 0, err
	}
	return page.Items[0].Seq, nil
}

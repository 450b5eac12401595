package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/cctranscript"
)

// TestSessionsImport loads a Claude Code transcript into a session with
// the CLI, on a database and on a server, lists it back with sessions
// events (text and --json), and checks what a wrong command line and a
// file that is not a transcript are told, with nothing appended.
func TestSessionsImport(t *testing.T) {
	transcript, err := filepath.Abs("../../internal/cctranscript/testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	onDatabaseAndServer(t, func(t *testing.T, _ string, backend []string) {
		cli := func(args ...string) (int, string, string) {
			t.Helper()
			return run(t, "", append(args, backend...)...)
		}
		code, out, errs := cli("stores", "create", "notes")
		if code != 0 {
			t.Fatalf("stores create: exit %d: %s %s", code, out, errs)
		}
		code, out, errs = cli("sessions", "create", "--store", "notes", "--title", "imported", "--json")
		var created struct {
			httpapi.SessionJSON
		}
		if code != 0 || json.Unmarshal([]byte(out), &created) != nil {
			t.Fatalf("sessions create: exit %d: %s %s", code, out, errs)
		}
		id := created.ID

		code, out, errs = cli("sessions", "import", transcript, "--session", id, "--json")
		var got struct {
			Messages int `json:"messages"`
			Events   int `json:"events"`
			Wrote    int `json:"messages_that_wrote_memory"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("sessions import: exit %d: %s %s", code, out, errs)
		}
		// user text; thinking, text, tool_use; tool_result; tool_use;
		// tool_result; text.
		if got.Messages != 6 || got.Events != 8 || got.Wrote != 1 {
			t.Errorf("import: %+v, want 6 messages, 8 events, 1 that wrote memory", got)
		}

		code, out, errs = cli("sessions", "events", id, "--json")
		var events []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &events) != nil {
			t.Fatalf("sessions events --json: exit %d: %s %s", code, out, errs)
		}
		var types []string
		for _, ev := range events {
			types = append(types, ev["type"].(string))
		}
		want := "user.message agent.thinking agent.message agent.tool_use agent.tool_result agent.tool_use agent.tool_result agent.message"
		if strings.Join(types, " ") != want {
			t.Errorf("the transcript is %v, want %s", types, want)
		}
		if len(events) == 8 && events[4]["tool_use_id"] != events[3]["id"] {
			t.Errorf("the tool result names %v, the tool use is %v", events[4]["tool_use_id"], events[3]["id"])
		}
		code, out, errs = cli("sessions", "events", id)
		if code != 0 || !strings.Contains(out, "TYPE") || !strings.Contains(out, "I prefer tabs.") || !strings.Contains(out, "Write {") {
			t.Errorf("sessions events: exit %d: %s %s", code, out, errs)
		}

		// From standard input, into another session.
		code, out, errs = cli("sessions", "create", "--store", "notes", "--json")
		var piped httpapi.SessionJSON
		if code != 0 || json.Unmarshal([]byte(out), &piped) != nil {
			t.Fatalf("sessions create: exit %d: %s %s", code, out, errs)
		}
		raw, _ := os.ReadFile(transcript)
		code, out, errs = run(t, string(raw), append([]string{"sessions", "import", "-", "--session", piped.ID}, backend...)...)
		if code != 0 || !strings.Contains(out, "Imported 6 messages") || !strings.Contains(out, "as 8 events; 1 of them wrote to memory") {
			t.Errorf("sessions import - : exit %d: %s %s", code, out, errs)
		}

		// Refusals, each changing nothing.
		notTranscript := filepath.Join(t.TempDir(), "notes.txt")
		os.WriteFile(notTranscript, []byte("just some notes\n"), 0o600)
		for _, tc := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"sessions", "import", transcript}, 2, "--session is required"},
			{[]string{"sessions", "import", "--session", id}, 2, "give one transcript FILE"},
			{[]string{"sessions", "import", filepath.Join(t.TempDir(), "missing.jsonl"), "--session", id}, 1, "no such file"},
			{[]string{"sessions", "import", notTranscript, "--session", id}, 1, "line 1 is not a JSON object"},
			{[]string{"sessions", "import", transcript, "--session", "sesn_missing"}, 1, "sesn_missing"},
		} {
			code, out, errs := cli(tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("%v: exit %d, want %d with %q: %s %s", tc.args, code, tc.code, tc.want, out, errs)
			}
		}
		code, out, _ = cli("sessions", "events", id, "--json")
		if code != 0 || strings.Count(out, `"id":`) != 8 {
			t.Errorf("after the refusals: %s", out)
		}
	})
}

// TestImportChunks: a long transcript goes in several requests, each
// within the bounds, in order, none beginning with a tool's result while
// its call's turn has room.
func TestImportChunks(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	var msgs []cctranscript.Message
	for i := range 20 {
		use, _ := json.Marshal([]map[string]any{{"type": "text", "text": big}, {"type": "tool_use", "id": fmt.Sprint("toolu_", i), "name": "Read", "input": map[string]any{}}})
		result, _ := json.Marshal([]map[string]any{{"type": "tool_result", "tool_use_id": fmt.Sprint("toolu_", i), "content": "ok"}})
		msgs = append(msgs,
			cctranscript.Message{TurnMessage: memstore.TurnMessage{Role: "assistant", Content: use}},
			cctranscript.Message{TurnMessage: memstore.TurnMessage{Role: "user", Content: result}})
	}
	for range 1500 {
		msgs = append(msgs, cctranscript.Message{TurnMessage: memstore.TurnMessage{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"hi"}]`)}})
	}
	next, turns := 0, 0
	for first, chunk := range importChunks(msgs) {
		turns++
		if first != next {
			t.Fatalf("turn %d starts at message %d, want %d", turns, first, next)
		}
		size, blocks := 0, 0
		for _, m := range chunk {
			size += len(m.Content)
			blocks += strings.Count(string(m.Content), `"type"`)
		}
		if size > importChunkBytes+200<<10 || blocks > memstore.MaxEventsPerAppend {
			t.Errorf("turn %d: %d bytes, %d blocks", turns, size, blocks)
		}
		if answersTool(chunk[0]) {
			t.Errorf("turn %d begins with a tool's result", turns)
		}
		next += len(chunk)
	}
	if next != len(msgs) || turns < 4 {
		t.Errorf("%d turns covered %d messages of %d", turns, next, len(msgs))
	}
}

package cctranscript_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/cctranscript"
)

// TestParseMessages reads a transcript as Claude Code writes it: the
// lines of one assistant message joined, summaries, meta messages,
// subagents' lines and snapshots left out, and the message that wrote
// under the memory directory flagged, not the one that edited code.
func TestParseMessages(t *testing.T) {
	f, err := os.Open("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs, err := cctranscript.ParseMessages(f, cctranscript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		role  string
		types string // the content blocks' types
		wrote bool
	}
	wants := []want{
		{"user", "text", false},
		{"assistant", "thinking text tool_use", true},
		{"user", "tool_result", false},
		{"assistant", "tool_use", false},
		{"user", "tool_result", false},
		{"assistant", "text", false},
	}
	if len(msgs) != len(wants) {
		t.Fatalf("%d messages, want %d: %+v", len(msgs), len(wants), msgs)
	}
	for i, w := range wants {
		m := msgs[i]
		var blocks []struct{ Type string }
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			t.Fatalf("message %d: %s: %v", i, m.Content, err)
		}
		var types []string
		for _, b := range blocks {
			types = append(types, b.Type)
		}
		if m.Role != w.role || strings.Join(types, " ") != w.types || m.WroteMemory != w.wrote {
			t.Errorf("message %d: %s [%s] wrote memory %v, want %s [%s] %v", i, m.Role, strings.Join(types, " "), m.WroteMemory, w.role, w.types, w.wrote)
		}
	}
	if msgs[0].Timestamp.IsZero() || msgs[0].Timestamp.Format("15:04:05") != "09:00:00" {
		t.Errorf("the first message's time: %v", msgs[0].Timestamp)
	}
	f.Seek(0, 0)
	plain, err := cctranscript.Parse(f)
	if err != nil || len(plain) != len(wants) || string(plain[5].Content) != string(msgs[5].Content) {
		t.Errorf("Parse: %d messages, %v", len(plain), err)
	}
}

func TestIsMemoryPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/home/ann/.claude/projects/-home-ann-proj/memory/style.md": true,
		"/home/ann/proj/.claude/memory/team/rules.md":               true,
		"/anywhere/MEMORY.md":                                       true,
		"/home/ann/proj/memory/notes.md":                            false, // not under .claude
		"/home/ann/.claude/memory":                                  false, // the directory itself
		"/home/ann/proj/main.go":                                    false,
		"/home/ann/.claude/settings.json":                           false,
	} {
		if got := cctranscript.IsMemoryPath(path); got != want {
			t.Errorf("IsMemoryPath(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestWritesMemoryThroughTheMemoryTool(t *testing.T) {
	blocks := func(s string) []json.RawMessage {
		var b []json.RawMessage
		json.Unmarshal([]byte(s), &b)
		return b
	}
	if !cctranscript.WritesMemory(blocks(`[{"type":"tool_use","id":"t","name":"memory","input":{"command":"create","path":"/memories/a.md","file_text":"x"}}]`), cctranscript.IsMemoryPath) {
		t.Error("a memory tool create is not a write")
	}
	if cctranscript.WritesMemory(blocks(`[{"type":"tool_use","id":"t","name":"memory","input":{"command":"view","path":"/memories"}}]`), cctranscript.IsMemoryPath) {
		t.Error("a memory tool view is a write")
	}
}

// TestBadTranscripts: a line that is not JSON, or far too long, is an
// error naming it.
func TestBadTranscripts(t *testing.T) {
	_, err := cctranscript.Parse(strings.NewReader(`{"type":"user","message":{"role":"user","content":"hi"}}` + "\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a line that is not JSON: %v", err)
	}
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", cctranscript.MaxLineBytes) + `"}}`
	_, err = cctranscript.Parse(strings.NewReader(long))
	if err == nil || !strings.Contains(err.Error(), "line 1 is longer than") {
		t.Errorf("a line too long: %v", err)
	}
	_, err = cctranscript.Parse(strings.NewReader(`{"type":"user","message":{"role":"user","content":42}}`))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a content that is a number: %v", err)
	}
}

// TestMaxBlockBytes: a long text or tool result is cut, saying so.
func TestMaxBlockBytes(t *testing.T) {
	in := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("é", 5000) + `"}]}}`
	msgs, err := cctranscript.ParseMessages(strings.NewReader(in), cctranscript.Options{MaxBlockBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	c := string(msgs[0].Content)
	if len(c) > 1200 || !strings.Contains(c, "more bytes left out") || !json.Valid(msgs[0].Content) {
		t.Errorf("cut to %d bytes: %.200s", len(c), c)
	}
}

package cctranscript

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzParseMessages reads hostile transcripts: a parse never panics, and
// what it returns is what the importers rely on: user and assistant
// messages whose content is a JSON array of blocks, each a JSON object,
// with the text of a text block cut to the limit asked for.
func FuzzParseMessages(f *testing.F) {
	session, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(session)
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"a"}]}}` + "\n" +
		`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"/h/.claude/projects/p/memory/a.md"}}]}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"` + string(bytes.Repeat([]byte("é"), 300)) + `"}]}]}}`))
	f.Add([]byte("{\"type\":\"user\",\"message\":{\"content\":\"\\u0000\"}}\r\n\n  \n"))
	const limit = 200
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := ParseMessages(bytes.NewReader(data), Options{MaxBlockBytes: limit})
		if err != nil {
			if msgs != nil {
				t.Fatalf("an error with messages: %v", err)
			}
			return
		}
		for i, m := range msgs {
			if m.Role != "user" && m.Role != "assistant" {
				t.Fatalf("message %d has role %q", i, m.Role)
			}
			if m.WroteMemory && m.Role != "assistant" {
				t.Fatalf("message %d, a user's, wrote memory", i)
			}
			var blocks []map[string]json.RawMessage
			if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
				t.Fatalf("message %d's content is not a non-empty array of objects: %v: %s", i, err, m.Content)
			}
			for _, b := range blocks {
				var typ, text string
				json.Unmarshal(b["type"], &typ)
				if typ == "text" && json.Unmarshal(b["text"], &text) == nil && len(text) > limit {
					t.Fatalf("message %d holds a text block of %d bytes, over the limit of %d", i, len(text), limit)
				}
			}
		}
	})
}

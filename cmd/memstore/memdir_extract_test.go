package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/scriptedmodel"
)

// ccLine is one line of a Claude Code transcript.
func ccLine(t *testing.T, typ, uuid string, message any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "uuid": uuid, "isSidechain": false, "sessionId": "s1", "timestamp": "2026-11-20T09:00:00.000Z", "message": message})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestMemdirExtract: an extraction reads the turns of a Claude Code
// transcript in which the agent wrote no memory (the turn whose Write went
// into the memory directory is left out), the model's memories are
// applied, and a write that holds a credential is refused by the secret
// guard, reaching no file.
func TestMemdirExtract(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	secret := "sk-ant-api03-" + strings.Repeat("x7Y", 30)
	tr := ccLine(t, "user", "u1", map[string]any{"role": "user", "content": "I prefer tabs, always."}) +
		ccLine(t, "assistant", "a1", map[string]any{"id": "m1", "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "tu1", "name": "Write", "input": map[string]any{"file_path": filepath.Join(dir, "style.md"), "content": "Tabs."}}}}) +
		ccLine(t, "user", "u2", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "tu1", "content": "File created"}}}) +
		ccLine(t, "assistant", "a2", map[string]any{"id": "m2", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Saved your tab preference."}}}) +
		ccLine(t, "user", "u3", map[string]any{"role": "user", "content": "Deploys go out on Fridays. The staging key is " + secret}) +
		ccLine(t, "assistant", "a3", map[string]any{"id": "m3", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Understood: Friday deploys."}}}) +
		ccLine(t, "user", "u4", map[string]any{"role": "user", "content": "Keep answers short."}) +
		ccLine(t, "assistant", "a4", map[string]any{"id": "m4", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Will do."}}})
	file := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(file, []byte(tr), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := scriptedmodel.New(t, scriptedmodel.Seq(
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 50, OutputTokens: 5},
			scriptedmodel.ToolUse("t1", "memory", map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": deploysTopic}),
			scriptedmodel.ToolUse("t2", "memory", map[string]any{"command": "create", "path": "/memories/staging-key.md", "file_text": "The staging key: " + secret + "\n"}),
			scriptedmodel.ToolUse("t3", "memory", map[string]any{"command": "create", "path": "/memories/MEMORY.md", "file_text": "- [Deploys](deploys.md) — Fridays\n"})),
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 60, OutputTokens: 6}, scriptedmodel.Text("Saved the deploy day.")),
	))
	code, out, stderr := run(t, "", "memdir", "extract", "--transcript", file, "--dir", dir, "--model", "scripted", "--model-base-url", srv.URL, "--json")
	if code != 0 {
		t.Fatalf("extract: exit %d: %s%s", code, out, stderr)
	}
	var res extractJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Turns != 3 || res.Skipped != 1 || res.Read != 2 || res.Usage.InputTokens != 110 {
		t.Fatalf("result %s", out)
	}

	reqs := srv.Requests()
	prompt := reqs[0].Messages[0].Content[0].Text
	if strings.Contains(prompt, "tabs") || strings.Contains(prompt, "tab preference") {
		t.Errorf("the prompt holds the turn that wrote memory:\n%s", prompt)
	}
	for _, want := range []string{"Deploys go out on Fridays", "Keep answers short.", "assistant: Will do."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	for _, want := range []string{"user", "feedback", "project", "reference"} {
		if !strings.Contains(reqs[0].System, want) {
			t.Errorf("the system prompt does not name the type %q", want)
		}
	}
	results := reqs[1].ToolResults()
	if len(results) != 3 || results[0].IsError || !results[1].IsError || !strings.Contains(results[1].ResultText(), "credential") || strings.Contains(results[1].ResultText(), secret) {
		t.Fatalf("tool results %+v", results)
	}
	if _, err := os.Stat(filepath.Join(dir, "staging-key.md")); err == nil {
		t.Fatal("the memory holding a credential was written")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "deploys.md")); string(b) != deploysTopic {
		t.Fatalf("deploys.md = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md")); !strings.Contains(string(b), "(deploys.md)") {
		t.Fatalf("MEMORY.md = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".dream.json")); !strings.Contains(string(b), `"extracted"`) || strings.Contains(string(b), `"last_dream"`) {
		t.Fatalf("the record after an extraction: %s", b)
	}

	// Again: the turns read are not read again; a new one is.
	srv2 := scriptedmodel.New(t, scriptedmodel.Seq(scriptedmodel.Answer(scriptedmodel.Usage{}, scriptedmodel.Text("Nothing new."))))
	args2 := []string{"memdir", "extract", "--transcript", file, "--dir", dir, "--model", "scripted", "--model-base-url", srv2.URL}
	if code, out, _ := run(t, "", args2...); code != 1 || !strings.Contains(out, "nothing to extract: 0 turns new") || len(srv2.Requests()) != 0 {
		t.Fatalf("again: exit %d: %s", code, out)
	}
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(ccLine(t, "user", "u5", map[string]any{"role": "user", "content": "We ship on the 3rd of March."}))
	f.Close()
	if code, out, stderr := run(t, "", args2...); code != 0 || !strings.HasPrefix(out, "read 1 turn") {
		t.Fatalf("after a new turn: exit %d: %s%s", code, out, stderr)
	}
	if p := srv2.Requests()[0].Messages[0].Content[0].Text; !strings.Contains(p, "3rd of March") || strings.Contains(p, "Keep answers short") || !strings.Contains(p, `<turn n="4">`) {
		t.Fatalf("the second extraction read:\n%s", p)
	}

	// A transcript whose every turn wrote memory calls no model.
	only := ccLine(t, "user", "u1", map[string]any{"role": "user", "content": "remember tabs"}) +
		ccLine(t, "assistant", "a1", map[string]any{"id": "m1", "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "tu1", "name": "memory", "input": map[string]any{"command": "create", "path": "/memories/x.md", "file_text": "x"}}}})
	os.WriteFile(file, []byte(only), 0o600)
	none := scriptedmodel.New(t, scriptedmodel.Seq())
	code, out, _ = run(t, "", "memdir", "extract", "--transcript", file, "--dir", dir, "--model", "scripted", "--model-base-url", none.URL)
	if code != 1 || !strings.Contains(out, "nothing to extract") || len(none.Requests()) != 0 {
		t.Fatalf("all turns wrote memory: exit %d: %s (%d requests)", code, out, len(none.Requests()))
	}
	if code, _, stderr := run(t, "", "memdir", "extract", "--dir", dir, "--model", "m", "--model-base-url", none.URL); code != 2 || !strings.Contains(stderr, "--transcript") {
		t.Fatalf("no transcript: exit %d: %s", code, stderr)
	}
}

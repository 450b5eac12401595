package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/scriptedmodel"
)

// dreamDir is a memory directory with two daily logs and an index.
func dreamDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"logs/2026/01/2026-01-02.md": "- 09:00 deploys moved to Fridays\n- 17:00 the user wants short answers\n",
		"logs/2026/01/2026-01-03.md": "- 10:00 deploy checklist lives in the wiki page Deploy\n",
		"MEMORY.md":                  "- [Old](old.md) — an older memory\n",
		"old.md":                     "---\nname: Old\ndescription: an older memory\ntype: project\n---\nOld.\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// treeOf lists every file below dir with its content, hidden ones too.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString(rel + "=" + string(c) + "\n")
		} else {
			b.WriteString(rel + "/\n")
		}
		return nil
	})
	return b.String()
}

func dreamArgs(srv *scriptedmodel.Server, dir string, more ...string) []string {
	return append([]string{"memdir", "dream", "--dir", dir, "--model", "scripted", "--model-base-url", srv.URL}, more...)
}

const deploysTopic = "---\nname: Deploys\ndescription: when and how deploys happen\nmetadata:\n  type: project\n---\nDeploys are on Fridays; the checklist is the wiki page Deploy.\n"

// TestMemdirDreamDistills: a dream reads the two daily logs, writes a
// topic file, updates MEMORY.md, cannot write to a log, records what it
// consolidated; git diff shows the result; a second dream reads only the
// entries added since; a third, with nothing new, calls no model.
func TestMemdirDreamDistills(t *testing.T) {
	clearEnv(t)
	dir := dreamDir(t)
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	_, gitErr := exec.LookPath("git")
	if gitErr == nil {
		git("init", "-q")
		git("add", "-A")
		git("commit", "-qm", "start")
	}
	srv := scriptedmodel.New(t, scriptedmodel.Seq(
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 100, OutputTokens: 10},
			scriptedmodel.ToolUse("t1", "memory", map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": deploysTopic}),
			scriptedmodel.ToolUse("t2", "memory", map[string]any{"command": "str_replace", "path": "/memories/logs/2026/01/2026-01-02.md", "old_str": "Fridays", "new_str": "Mondays"})),
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 200, OutputTokens: 20},
			scriptedmodel.ToolUse("t3", "memory", map[string]any{"command": "insert", "path": "/memories/MEMORY.md", "insert_line": 0, "insert_text": "- [Deploys](deploys.md) — Fridays, with a checklist\n"})),
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 300, OutputTokens: 30}, scriptedmodel.Text("Wrote deploys.md and indexed it.")),
	))
	code, out, stderr := run(t, "", dreamArgs(srv, dir, "--json")...)
	if code != 0 {
		t.Fatalf("dream: exit %d: %s%s", code, out, stderr)
	}
	var res dreamJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Logs) != 2 || res.Steps != 3 || res.Usage.InputTokens != 600 || res.Usage.OutputTokens != 60 || res.Summary != "Wrote deploys.md and indexed it." {
		t.Fatalf("result %s", out)
	}
	var ops []string
	for _, c := range res.Changes {
		ops = append(ops, c.Op+" "+c.Path)
	}
	if strings.Join(ops, ",") != "changed MEMORY.md,added deploys.md" {
		t.Fatalf("changes %v", ops)
	}

	reqs := srv.Requests()
	first := reqs[0]
	prompt := first.Messages[0].Content[0].Text
	for _, want := range []string{"deploys moved to Fridays", "short answers", "the wiki page Deploy", "an older memory", `path="/memories/logs/2026/01/2026-01-02.md"`} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	if len(first.Tools) != 1 || first.Tools[0].Name != "memory" || first.Model != "scripted" || !strings.Contains(first.System, "Never change anything under /memories/logs/") {
		t.Fatalf("request: tools %+v model %q", first.Tools, first.Model)
	}
	results := reqs[1].ToolResults()
	if len(results) != 2 || results[0].IsError || !results[1].IsError || !strings.Contains(results[1].ResultText(), "read-only") {
		t.Fatalf("tool results %+v", results)
	}

	if b, _ := os.ReadFile(filepath.Join(dir, "deploys.md")); string(b) != deploysTopic {
		t.Fatalf("deploys.md = %q", b)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if !strings.HasPrefix(string(idx), "- [Deploys](deploys.md)") || !strings.Contains(string(idx), "(old.md)") {
		t.Fatalf("MEMORY.md = %q", idx)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "logs/2026/01/2026-01-02.md")); !strings.Contains(string(b), "Fridays") {
		t.Fatalf("the log was changed: %q", b)
	}
	if gitErr == nil {
		if d := git("diff", "--stat"); !strings.Contains(d, "MEMORY.md") {
			t.Errorf("git diff --stat: %s", d)
		}
		if s := git("status", "--porcelain"); !strings.Contains(s, "?? deploys.md") || strings.Contains(s, "staging") {
			t.Errorf("git status: %s", s)
		}
	}

	// The second dream starts after the first.
	f, _ := os.OpenFile(filepath.Join(dir, "logs/2026/01/2026-01-03.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("- 18:00 releases need two approvals\n")
	f.Close()
	srv2 := scriptedmodel.New(t, scriptedmodel.Seq(scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 1, OutputTokens: 1}, scriptedmodel.Text("Nothing worth keeping."))))
	if code, out, stderr := run(t, "", dreamArgs(srv2, dir)...); code != 0 || !strings.Contains(out, "consolidated 1 part") {
		t.Fatalf("second dream: exit %d: %s%s", code, out, stderr)
	}
	prompt = srv2.Requests()[0].Messages[0].Content[0].Text
	if !strings.Contains(prompt, "two approvals") || strings.Contains(prompt, "deploys moved") || strings.Contains(prompt, "lives in the wiki page Deploy") {
		t.Fatalf("the second dream read old entries:\n%s", prompt)
	}

	srv3 := scriptedmodel.New(t, scriptedmodel.Seq())
	if code, out, _ := run(t, "", dreamArgs(srv3, dir)...); code != 1 || !strings.Contains(out, "nothing to consolidate") {
		t.Fatalf("third dream: exit %d: %s", code, out)
	}
	if n := len(srv3.Requests()); n != 0 {
		t.Fatalf("a dream with nothing to do called the model %d times", n)
	}
}

// TestMemdirDreamFailedLeavesNothing: a dream whose model fails midway
// (after a write) or that reaches a cap leaves the directory exactly as
// it was, and records nothing; a dry run calls no model and changes
// nothing.
func TestMemdirDreamFailedLeavesNothing(t *testing.T) {
	clearEnv(t)
	dir := dreamDir(t)
	before := treeOf(t, dir)

	srv := scriptedmodel.New(t, scriptedmodel.Seq(
		scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 1},
			scriptedmodel.ToolUse("t1", "memory", map[string]any{"command": "create", "path": "/memories/half.md", "file_text": "half\n"}),
			scriptedmodel.ToolUse("t2", "memory", map[string]any{"command": "delete", "path": "/memories/old.md"})),
		scriptedmodel.Error(400, "invalid_request_error", "scripted failure"),
	))
	code, _, stderr := run(t, "", dreamArgs(srv, dir)...)
	if code != 6 || !strings.Contains(stderr, "scripted failure") || !strings.Contains(stderr, "nothing was applied") {
		t.Fatalf("failed dream: exit %d: %s", code, stderr)
	}
	if after := treeOf(t, dir); after != before {
		t.Fatalf("a failed dream changed the directory:\n%s\nwas\n%s", after, before)
	}

	// A model that never stops reaches the steps cap.
	loop := scriptedmodel.New(t, func(req *scriptedmodel.Request) scriptedmodel.Response {
		return scriptedmodel.Answer(scriptedmodel.Usage{InputTokens: 1},
			scriptedmodel.ToolUse("t", "memory", map[string]any{"command": "create", "path": "/memories/n" + string(rune('a'+req.N)) + ".md", "file_text": "x\n"}))
	})
	code, _, stderr = run(t, "", dreamArgs(loop, dir, "--max-steps", "3")...)
	if code != 6 || !strings.Contains(stderr, "steps cap") {
		t.Fatalf("capped dream: exit %d: %s", code, stderr)
	}
	if after := treeOf(t, dir); after != before {
		t.Fatalf("a capped dream changed the directory:\n%s", after)
	}

	none := scriptedmodel.New(t, scriptedmodel.Seq())
	code, out, stderr := run(t, "", dreamArgs(none, dir, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "logs/2026/01/2026-01-02.md, bytes 0 to 70 (2 entries)") || !strings.Contains(out, "nothing was changed") {
		t.Fatalf("dry run: exit %d: %s%s", code, out, stderr)
	}
	if n := len(none.Requests()); n != 0 {
		t.Fatalf("a dry run called the model %d times", n)
	}
	if after := treeOf(t, dir); after != before {
		t.Fatalf("a dry run changed the directory:\n%s", after)
	}

	// A directory that is not there has nothing to consolidate, and a
	// dream does not make it.
	missing := filepath.Join(t.TempDir(), "missing")
	if code, out, _ := run(t, "", dreamArgs(none, missing)...); code != 1 || !strings.Contains(out, "nothing to consolidate") {
		t.Fatalf("missing directory: exit %d: %s", code, out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("a dream with nothing to do made the directory")
	}
}

// TestMemdirModelFlags: a dream without a model, an endpoint, or with a
// base URL that is not one, is a usage error that says what to give; a
// key file is read and sent as the key.
func TestMemdirModelFlags(t *testing.T) {
	clearEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_MODEL", "")
	dir := dreamDir(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "", "--model-base-url", "http://127.0.0.1:1"}, "--model ID, or ANTHROPIC_MODEL"},
		{[]string{"--model", "m"}, "set ANTHROPIC_API_KEY"},
		{[]string{"--model", "m", "--model-base-url", "ftp://x"}, "must be an http or https URL"},
		{[]string{"--model", "m", "--model-base-url", "https://u:p@x"}, "must not hold credentials"},
		{[]string{"--model", "m", "--model-base-url", "http://127.0.0.1:1", "--max-steps", "0"}, "--max-steps must be 1 or more"},
	} {
		code, _, stderr := run(t, "", append([]string{"memdir", "dream", "--dir", dir}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
		}
	}
	srv := scriptedmodel.New(t, scriptedmodel.Seq(scriptedmodel.Answer(scriptedmodel.Usage{}, scriptedmodel.Text("done")), scriptedmodel.Answer(scriptedmodel.Usage{}, scriptedmodel.Text("done"))))
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("sk-test-key\n"), 0o600)
	t.Setenv("ANTHROPIC_MODEL", "from-env")
	code, _, stderr := run(t, "", "memdir", "dream", "--dir", dir, "--model-base-url", srv.URL, "--model-api-key-file", keyFile)
	if code != 0 {
		t.Fatalf("dream: exit %d: %s", code, stderr)
	}
	if req := srv.Requests()[0]; req.Header.Get("X-Api-Key") != "sk-test-key" || req.Model != "from-env" {
		t.Fatalf("key %q, model %q", req.Header.Get("X-Api-Key"), req.Model)
	}
	// Without --model or ANTHROPIC_MODEL, the model a store's dream asks for.
	os.Unsetenv("ANTHROPIC_MODEL")
	os.MkdirAll(filepath.Join(dir, "logs", "2026", "11"), 0o700)
	os.WriteFile(filepath.Join(dir, "logs", "2026", "11", "2026-11-29.md"), []byte("- a new entry\n"), 0o600)
	if code, _, stderr := run(t, "", "memdir", "dream", "--dir", dir, "--model-base-url", srv.URL, "--model-api-key-file", keyFile); code != 0 {
		t.Fatalf("dream: exit %d: %s", code, stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].Model != defaultDreamModel {
		t.Fatalf("%d requests; the second asked for model %q, want %q", len(reqs), reqs[len(reqs)-1].Model, defaultDreamModel)
	}
}

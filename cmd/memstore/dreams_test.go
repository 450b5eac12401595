package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore/agenttool"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
)

// dreamMountRE finds the output store's mount path in a dream's system
// prompt.
var dreamMountRE = regexp.MustCompile(`mounted at (/mnt/memory/[^;\s]+);`)

// TestDreamCommand runs dreams with the command line against a real
// server whose model is scripted: dream --wait shows the progress and
// prints what the dream changed (the diff from the store to the dream's
// new store), --json for scripts, a failed dream exits 1 with its error;
// dreams ls, get --diff, cancel and archive; and dream refuses a
// database, which runs no dreams.
func TestDreamCommand(t *testing.T) {
	clearEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	// The first dream's last answer is slow, so that --wait polls
	// several times after its steps were recorded.
	var slowed atomic.Bool
	model := sm.New(t, func(r *sm.Request) sm.Response {
		if len(r.Messages) > 1 && slowed.CompareAndSwap(false, true) {
			time.Sleep(3 * dreamPoll)
		}
		if strings.Contains(r.System+r.Messages[0].Content[0].Text, "please fail") {
			return sm.Error(400, "invalid_request_error", "the scripted model refuses")
		}
		m := dreamMountRE.FindStringSubmatch(r.System)
		if m == nil || len(r.Messages) > 1 {
			return sm.Answer(sm.Usage{InputTokens: 20, OutputTokens: 5}, sm.Text("done"))
		}
		return sm.Answer(sm.Usage{InputTokens: 100, OutputTokens: 10},
			sm.ToolUse("tu_1", agenttool.ToolWrite, map[string]string{"path": m[1] + "/a.md", "content": "a, consolidated\n"}),
			sm.ToolUse("tu_2", agenttool.ToolWrite, map[string]string{"path": m[1] + "/new.md", "content": "a new topic\n"}))
	})
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db, "--model-base-url", model.URL)
	at := []string{"--url", s.url, "--api-key", s.key}
	cli := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := run(t, "", append(args, at...)...)
		if code != wantCode {
			t.Fatalf("memstore %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, wantCode, out, errOut)
		}
		return out, errOut
	}
	cli(0, "stores", "create", "notes")
	if code, _, errOut := run(t, "a\n", append([]string{"put", "--store", "notes", "/a.md"}, at...)...); code != 0 {
		t.Fatal(errOut)
	}
	out, _ := cli(0, "sessions", "create", "--store", "notes", "--json")
	var ses struct{ ID string }
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ses); err != nil || ses.ID == "" {
		t.Fatalf("sessions create: %v\n%s", err, out)
	}

	out, errOut := cli(0, "dream", "--store", "notes", "--session", ses.ID, "--wait")
	for _, want := range []string{
		"--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-a\n+a, consolidated\n",
		"--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+a new topic\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dream --wait printed:\n%s\nlacking:\n%s", out, want)
		}
	}
	for _, want := range []string{": pending\n", ": completed; 120 input tokens", "1 changed, 1 added, 0 removed", "memory_write /mnt/memory/", "/a.md\n", "/new.md\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("dream --wait's progress:\n%s\nlacks %q", errOut, want)
		}
	}
	// Each step is shown once, however many times the wait polls.
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, ": memory_") && strings.Count(errOut, line+"\n") != 1 {
			t.Errorf("dream --wait showed a step %d times: %q", strings.Count(errOut, line+"\n"), line)
		}
	}
	id := regexp.MustCompile(`dream (drm_\w+)`).FindStringSubmatch(errOut)
	if id == nil {
		t.Fatalf("no dream ID in %s", errOut)
	}

	out, _ = cli(0, "dream", "--store", "notes", "--session", ses.ID, "--instructions", "merge duplicates", "--wait", "--json")
	var res struct {
		Dream struct {
			ID, Status   string
			Instructions string
			Outputs      []struct {
				MemoryStoreID string `json:"memory_store_id"`
			}
		}
		Diff struct {
			Changes []struct{ Path, Kind, Diff string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("dream --json: %v\n%s", err, out)
	}
	if res.Dream.Status != "completed" || res.Dream.Instructions != "merge duplicates" || len(res.Dream.Outputs) != 1 || len(res.Diff.Changes) != 2 ||
		res.Diff.Changes[0].Path != "/a.md" || res.Diff.Changes[1].Kind != "added" {
		t.Errorf("dream --json: %s", out)
	}

	// A dream whose model fails exits 1, with its error.
	code, _, errOut := run(t, "", append([]string{"dream", "--store", "notes", "--session", ses.ID, "--instructions", "please fail", "--wait"}, at...)...)
	if code != 1 || !strings.Contains(errOut, "failed") || !strings.Contains(errOut, "the scripted model refuses") {
		t.Errorf("a failing dream: exit %d\n%s", code, errOut)
	}

	out, _ = cli(0, "dreams", "ls")
	if n := strings.Count(out, "drm_"); n != 3 || !strings.Contains(out, "failed") {
		t.Errorf("dreams ls:\n%s", out)
	}
	out, _ = cli(0, "dreams", "get", id[1], "--diff")
	if !strings.Contains(out, "status") || !strings.Contains(out, "completed") || !strings.Contains(out, "+a, consolidated") {
		t.Errorf("dreams get --diff:\n%s", out)
	}
	_, errOut = cli(1, "dreams", "cancel", id[1], "--yes")
	if !strings.Contains(errOut, "only a pending or running dream can be canceled") {
		t.Errorf("cancel of a completed dream: %s", errOut)
	}
	out, _ = cli(0, "dreams", "archive", id[1], "--yes", "--json")
	if !strings.Contains(out, `"archived_at":"20`) {
		t.Errorf("dreams archive: %s", out)
	}
	if out, _ = cli(0, "dreams", "ls", "--status", "completed"); strings.Contains(out, id[1]) || strings.Count(out, "drm_") != 1 {
		t.Errorf("dreams ls --status completed, without the archived one:\n%s", out)
	}
	if out, _ = cli(0, "dreams", "ls", "--archived", "--json"); strings.Count(out, `"id":"drm_`) != 3 {
		t.Errorf("dreams ls --archived --json:\n%s", out)
	}
	_, errOut = cli(2, "dreams", "ls", "--status", "asleep")
	if !strings.Contains(errOut, `"asleep" is not a dream status`) {
		t.Errorf("a bad status: %s", errOut)
	}
	_, errOut = cli(2, "dream", "--store", "notes")
	if !strings.Contains(errOut, "give the sessions") {
		t.Errorf("dream without a session: %s", errOut)
	}

	// A dream that writes its store itself prints the versions it made.
	out, _ = cli(0, "dream", "--store", "notes", "--session", ses.ID, "--update-existing", "--wait")
	if !regexp.MustCompile(`(?m)^memver_\w+\s+modified\s+/a\.md\s`).MatchString(out) || !regexp.MustCompile(`(?m)^memver_\w+\s+created\s+/new\.md\s`).MatchString(out) {
		t.Errorf("dream --update-existing --wait:\n%s", out)
	}

	// A database runs no dreams: dream says to use a server.
	code, _, errOut = run(t, "", "dream", "--db", db, "--store", "notes", "--session", ses.ID)
	if code != 2 || !strings.Contains(errOut, "dreams run on a server") {
		t.Errorf("dream on a database: exit %d: %s", code, errOut)
	}
}

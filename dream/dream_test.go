package dream_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/dream"
	"github.com/memstore/memstore/internal/agentloop"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
	"github.com/memstore/memstore/sqlite"
)

// A dream over a store with two memories saying the same thing, and a
// transcript in which the user changed their mind: the model reads both,
// rewrites one with the latest fact, deletes the other and stops. The
// output store holds the result, the input is untouched, the usage is
// the sum of the answers', and the dream's session holds the run.
func TestDreamMergesDuplicates(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		m := mount(r)
		switch r.N {
		case 1:
			return sm.Answer(sm.Usage{InputTokens: 1000, OutputTokens: 50, CacheCreationInputTokens: 7},
				sm.ToolUse("tu_1", agenttool.ToolRead, map[string]string{"path": m + "/prefs/editor.md"}),
				sm.ToolUse("tu_2", agenttool.ToolRead, map[string]string{"path": m + "/editor-notes.md"}))
		case 2:
			return sm.Answer(sm.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadInputTokens: 900},
				sm.ToolUse("tu_3", agenttool.ToolWrite, map[string]string{"path": m + "/prefs/editor.md", "content": "The user edits with Helix (switched from Vim).\n"}),
				sm.ToolUse("tu_4", agenttool.ToolDelete, map[string]string{"path": m + "/editor-notes.md"}))
		}
		return sm.Answer(sm.Usage{InputTokens: 1300, OutputTokens: 20}, sm.Text("Merged the two editor notes; the user now uses Helix."))
	})
	in := e.store(t, "Prefs", "/prefs/editor.md", "The user edits with Vim.\n", "/editor-notes.md", "Editor: Vim.\n", "/MEMORY.md", "- prefs/editor.md: editor\n")
	ses := e.session(t, "I switched from Vim to Helix last week.", "Noted: Helix it is.")
	d := e.newDream(t, in.ID, []string{ses}, false)
	if d.Status != "pending" || len(d.Outputs) != 0 || d.SessionID != "" {
		t.Fatalf("created: %s", d.RawJSON())
	}
	e.runOne(t, e.worker(dream.Options{}))

	got := e.get(t, d.ID)
	if got.Status != "completed" || len(got.Outputs) != 1 || got.SessionID == "" {
		t.Fatalf("after the run: %s", got.RawJSON())
	}
	out := got.Outputs[0].MemoryStoreID
	if out == in.ID {
		t.Fatalf("create_new wrote the input store")
	}
	want := map[string]string{"/prefs/editor.md": "The user edits with Helix (switched from Vim).\n", "/MEMORY.md": "- prefs/editor.md: editor\n"}
	if mems := e.memories(t, out); fmt.Sprint(mems) != fmt.Sprint(want) {
		t.Errorf("output store = %v, want %v", mems, want)
	}
	if mems := e.memories(t, in.ID); len(mems) != 3 || mems["/editor-notes.md"] != "Editor: Vim.\n" {
		t.Errorf("the input store changed: %v", mems)
	}
	u := got.Usage
	if u.InputTokens != 3500 || u.OutputTokens != 150 || u.CacheCreationInputTokens != 7 || u.CacheReadInputTokens != 900 {
		t.Errorf("usage = %s, want the sum of the answers'", u.RawJSON())
	}

	// What the model was given.
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	prompt := first.Messages[0].Content[0].Text
	for _, want := range []string{"I switched from Vim to Helix last week.", "Noted: Helix it is.", "/prefs/editor.md", "/editor-notes.md", ses} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	for _, want := range []string{"Merge duplicates", "Never write secrets", "Keep editor preferences current."} {
		if !strings.Contains(first.System, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if first.Model != "scripted-model" || first.Header.Get("X-Api-Key") != "sk-scripted" || len(first.Tools) != 6 {
		t.Errorf("request: model %q, key %q, %d tools", first.Model, first.Header.Get("X-Api-Key"), len(first.Tools))
	}
	for _, r := range reqs[1].ToolResults() {
		if r.IsError {
			t.Errorf("tool error: %s", r.ResultText())
		}
	}

	// The dream's session holds the run: its prompt, the tool calls and
	// their results, the last answer; every change is the session's.
	var types []string
	for _, ev := range e.events(t, got.SessionID) {
		types = append(types, ev.Type)
	}
	joined := strings.Join(types, ",")
	if !strings.Contains(joined, "user.message") || strings.Count(joined, "agent.tool_use") != 4 || !strings.HasSuffix(joined, "agent.message") {
		t.Errorf("the dream session's events: %s", joined)
	}
	for _, v := range e.versions(t, out) {
		if v.Operation != memstore.OpCreated && (v.CreatedBy.Type != memstore.ActorSession || v.CreatedBy.ID != got.SessionID) {
			t.Errorf("version %s (%s) by %+v, want the dream's session %s", v.ID, v.Operation, v.CreatedBy, got.SessionID)
		}
	}
}

// The model's endpoint answers 529, then (on the retry) 400: the dream
// fails with the endpoint's error, and what it cost so far.
func TestDreamFailsOnModelError(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, sm.Seq(sm.Overloaded(), sm.Error(400, "invalid_request_error", "model: unknown model scripted-model")))
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	e.runOne(t, e.worker(dream.Options{}))
	got := e.get(t, d.ID)
	if got.Status != "failed" || got.Error.Type != "invalid_request_error" || !strings.Contains(got.Error.Message, "unknown model scripted-model") || !strings.Contains(got.Error.Message, "400") {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the 529 retried once)", n)
	}
	if got.EndedAt.IsZero() {
		t.Errorf("no ended_at: %s", got.RawJSON())
	}
}

// A cancel while the model works stops the dream at its next step: the
// tool calls of the answer that follows the cancel are not run.
func TestDreamCancelMidRun(t *testing.T) {
	db, _ := sqliteDB(t)
	var e *env
	var dreamID string
	e = newEnv(t, db, func(r *sm.Request) sm.Response {
		m := mount(r)
		if r.N == 2 {
			if _, err := e.sdk.Beta.Dreams.Cancel(context.Background(), dreamID, anthropic.BetaDreamCancelParams{}); err != nil {
				t.Errorf("cancel: %v", err)
			}
		}
		return sm.Answer(sm.Usage{InputTokens: 10, OutputTokens: 1},
			sm.ToolUse(fmt.Sprint("tu_", r.N), agenttool.ToolWrite, map[string]string{"path": fmt.Sprintf("%s/step%d.md", m, r.N), "content": "x\n"}))
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	dreamID = d.ID
	e.runOne(t, e.worker(dream.Options{}))
	got := e.get(t, d.ID)
	if got.Status != "canceled" || len(got.Outputs) != 1 {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	mems := e.memories(t, got.Outputs[0].MemoryStoreID)
	if _, ok := mems["/step1.md"]; !ok {
		t.Errorf("step 1's write is missing: what a canceled dream wrote stays (%v)", mems)
	}
	if _, ok := mems["/step2.md"]; ok {
		t.Errorf("step 2's write ran after the cancel")
	}
	if got.Usage.InputTokens != 20 {
		t.Errorf("usage = %s, want both answers'", got.Usage.RawJSON())
	}
}

// The caps: a model that never stops is stopped, and the dream fails
// with an error naming the cap and its flag.
func TestDreamCaps(t *testing.T) {
	for _, tc := range []struct {
		name, typ, flag string
		limits          agentloop.Limits
		tool            string
		delay           time.Duration
	}{
		{name: "steps", typ: dream.ErrTypeLimit, flag: "--dream-max-steps", tool: agenttool.ToolList, limits: agentloop.Limits{MaxSteps: 3, MaxTokens: 1e6, MaxWrites: 10, MaxTime: time.Minute}},
		{name: "writes", typ: dream.ErrTypeLimit, flag: "--dream-max-writes", tool: agenttool.ToolWrite, limits: agentloop.Limits{MaxSteps: 50, MaxTokens: 1e6, MaxWrites: 2, MaxTime: time.Minute}},
		{name: "tokens", typ: dream.ErrTypeLimit, flag: "--dream-max-tokens", tool: agenttool.ToolList, limits: agentloop.Limits{MaxSteps: 50, MaxTokens: 250, MaxWrites: 10, MaxTime: time.Minute}},
		{name: "time", typ: memstore.DreamErrorTimeout, flag: "--dream-max-time", tool: agenttool.ToolList, delay: 100 * time.Millisecond, limits: agentloop.Limits{MaxSteps: 1000, MaxTokens: 1e9, MaxWrites: 10, MaxTime: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := sqliteDB(t)
			e := newEnv(t, db, func(r *sm.Request) sm.Response {
				time.Sleep(tc.delay)
				return sm.Answer(sm.Usage{InputTokens: 100},
					sm.ToolUse(fmt.Sprint("tu_", r.N), tc.tool, map[string]string{"path": fmt.Sprintf("%s/n%d.md", mount(r), r.N), "content": "x\n"}))
			})
			in := e.store(t, "Notes", "/a.md", "a\n")
			d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
			e.runOne(t, e.worker(dream.Options{Limits: tc.limits}))
			got := e.get(t, d.ID)
			if got.Status != "failed" || got.Error.Type != tc.typ || !strings.Contains(got.Error.Message, tc.flag) || !strings.Contains(got.Error.Message, tc.name+" cap") {
				t.Fatalf("dream: %s", got.RawJSON())
			}
			if tc.name == "writes" {
				if n := len(e.memories(t, got.Outputs[0].MemoryStoreID)); n != 3 {
					t.Errorf("the output holds %d memories, want the copy and 2 writes", n)
				}
			}
		})
	}
}

// TestDreamZeroCapIsDefault: a cap left 0 is the worker's default, as
// memstore serve passes --dream-max-steps 0 on.
func TestDreamZeroCapIsDefault(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		return sm.Answer(sm.Usage{InputTokens: 1},
			sm.ToolUse(fmt.Sprint("tu_", r.N), agenttool.ToolList, map[string]string{"path": mount(r)}))
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	e.runOne(t, e.worker(dream.Options{Limits: agentloop.Limits{MaxTokens: 1e9, MaxWrites: 10, MaxTime: time.Minute}}))
	got := e.get(t, d.ID)
	if got.Status != "failed" || !strings.Contains(got.Error.Message, "steps cap") {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	if n := len(e.model.Requests()); n != dream.DefaultMaxSteps {
		t.Errorf("the model was asked %d times, want the default cap of %d", n, dream.DefaultMaxSteps)
	}
}

// A model that reaches for anything but its output store is refused,
// each refusal a tool error it reads (and the dream's transcript keeps),
// and nothing is written anywhere.
func TestDreamStaysInItsStore(t *testing.T) {
	db, _ := sqliteDB(t)
	var e *env
	var other *anthropic.BetaManagedAgentsMemoryStore
	e = newEnv(t, db, func(r *sm.Request) sm.Response {
		if r.N > 1 {
			return sm.Answer(sm.Usage{}, sm.Text("done"))
		}
		return sm.Answer(sm.Usage{},
			sm.ToolUse("tu_1", agenttool.ToolWrite, map[string]string{"path": "/mnt/memory/secrets/leak.md", "content": "x\n"}),
			sm.ToolUse("tu_2", agenttool.ToolEdit, map[string]string{"path": "/mnt/memory/secrets/key.md", "old_str": "k", "new_str": "leaked"}),
			sm.ToolUse("tu_3", agenttool.ToolWrite, map[string]string{"path": "/mnt/memory/notes/a.md", "content": "changed\n"}),
			sm.ToolUse("tu_4", agenttool.ToolRead, map[string]string{"path": "/mnt/memory/secrets/key.md"}),
			sm.ToolUse("tu_5", agenttool.ToolWrite, map[string]string{"path": mount(r) + "/../secrets/leak.md", "content": "x\n"}),
			sm.ToolUse("tu_6", agenttool.ToolDelete, map[string]string{"path": "/mnt/memory/" + other.ID + "/key.md"}),
		)
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	other = e.store(t, "Secrets", "/key.md", "k\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	e.runOne(t, e.worker(dream.Options{}))
	got := e.get(t, d.ID)
	if got.Status != "completed" {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	results := e.model.Requests()[1].ToolResults()
	if len(results) != 6 {
		t.Fatalf("%d tool results, want 6", len(results))
	}
	for _, r := range results {
		if !r.IsError {
			t.Errorf("%s was not refused: %s", r.ToolUseID, r.ResultText())
		}
	}
	if n := len(e.versions(t, other.ID)); n != 1 {
		t.Errorf("the other store has %d versions, want its one", n)
	}
	if n := len(e.versions(t, in.ID)); n != 1 {
		t.Errorf("the input store has %d versions, want its one", n)
	}
	out := got.Outputs[0].MemoryStoreID
	if mems := e.memories(t, out); len(mems) != 1 || mems["/a.md"] != "a\n" {
		t.Errorf("the output store: %v", mems)
	}
	var errorsKept int
	for _, ev := range e.events(t, got.SessionID) {
		if strings.Contains(ev.Raw, `"is_error":true`) {
			errorsKept++
		}
	}
	if errorsKept != 6 {
		t.Errorf("the dream's transcript keeps %d tool errors, want 6", errorsKept)
	}
}

// update_existing writes the input store itself, each change a version
// made by the dream's session.
func TestDreamUpdateExisting(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		if r.N > 1 {
			return sm.Answer(sm.Usage{}, sm.Text("done"))
		}
		return sm.Answer(sm.Usage{},
			sm.ToolUse("tu_1", agenttool.ToolEdit, map[string]string{"path": mount(r) + "/a.md", "old_str": "Vim", "new_str": "Helix"}),
			sm.ToolUse("tu_2", agenttool.ToolDelete, map[string]string{"path": mount(r) + "/b.md"}))
	})
	in := e.store(t, "Notes", "/a.md", "Editor: Vim\n", "/b.md", "Editor: Vim\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "I use Helix now.")}, true)
	e.runOne(t, e.worker(dream.Options{}))
	got := e.get(t, d.ID)
	if got.Status != "completed" || len(got.Outputs) != 1 || got.Outputs[0].MemoryStoreID != in.ID {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	if mems := e.memories(t, in.ID); len(mems) != 1 || mems["/a.md"] != "Editor: Helix\n" {
		t.Fatalf("store: %v (tool results %v)", mems, e.model.Requests()[1].ToolResults())
	}
	vs := e.versions(t, in.ID)
	if len(vs) != 4 {
		t.Fatalf("%d versions, want 4", len(vs))
	}
	for _, v := range vs[:2] { // newest first: the dream's two
		if v.CreatedBy.Type != memstore.ActorSession || v.CreatedBy.ID != got.SessionID {
			t.Errorf("version %s (%s) by %+v, want the dream's session %s", v.ID, v.Operation, v.CreatedBy, got.SessionID)
		}
	}
}

// A worker that dies mid-run (its database gone, its model call never
// answered) leaves its lease to expire; another worker then claims the
// dream and resumes it on the output store as the first left it.
func TestDreamResumesAfterAWorkerDies(t *testing.T) {
	db, path := sqliteDB(t)
	dead := make(chan struct{})
	var dbA *sqlite.DB
	var once sync.Once
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		m := mount(r)
		if r.Header.Get("X-Api-Key") == "sk-a" {
			if r.N == 1 {
				return sm.Answer(sm.Usage{InputTokens: 10},
					sm.ToolUse("tu_1", agenttool.ToolWrite, map[string]string{"path": m + "/from-a.md", "content": "a\n"}))
			}
			// The first worker's process dies while it waits for this answer.
			once.Do(func() { dbA.Close(); close(dead) })
			<-t.Context().Done()
			return sm.Error(500, "api_error", "gone")
		}
		if strings.Contains(r.Messages[0].Content[0].Text, "interrupted and is resumed") && strings.Contains(r.Messages[0].Content[0].Text, "from-a.md") {
			return sm.Answer(sm.Usage{InputTokens: 5}, sm.Text("finished"))
		}
		return sm.Error(400, "invalid_request_error", "the resumed prompt is not as expected")
	})
	var err error
	if dbA, err = sqlite.Open(t.Context(), path, sqlite.Options{}); err != nil {
		t.Fatal(err)
	}
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)

	lease := time.Second
	a := dream.New(memstore.NewCore(dbA, memstore.WithDreams(true)), dream.Options{Model: agentloop.Config{BaseURL: e.model.URL, APIKey: "sk-a"}, Limits: fast, Lease: lease})
	actx, stopA := context.WithCancel(t.Context())
	defer stopA()
	go a.RunOne(actx)
	select {
	case <-dead:
	case <-time.After(time.Minute):
		t.Fatal("the first worker never reached its second step")
	}
	b := e.worker(dream.Options{Model: agentloop.Config{APIKey: "sk-b"}, Lease: lease})
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := b.RunOne(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dream was never claimed again")
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := e.get(t, d.ID)
	if got.Status != "completed" {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	if mems := e.memories(t, got.Outputs[0].MemoryStoreID); mems["/from-a.md"] != "a\n" || len(mems) != 2 {
		t.Errorf("output store: %v", mems)
	}
	if got.Usage.InputTokens != 15 {
		t.Errorf("usage %s: want both workers' answers", got.Usage.RawJSON())
	}
	stores, err := e.sdk.Beta.MemoryStores.List(t.Context(), anthropic.BetaMemoryStoreListParams{})
	if err != nil || len(stores.Data) != 2 {
		t.Errorf("stores: %d (%v), want the input and one output", len(stores.Data), err)
	}
}

// A worker that stops lets its dream go at once; after
// memstore.MaxDreamAttempts claims the dream fails, saying why.
func TestDreamGracefulStopAndAttempts(t *testing.T) {
	db, _ := sqliteDB(t)
	answered := make(chan struct{}, 10)
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		answered <- struct{}{}
		time.Sleep(200 * time.Millisecond)
		return sm.Answer(sm.Usage{InputTokens: 1}, sm.ToolUse(fmt.Sprint("tu_", r.N), agenttool.ToolList, map[string]string{}))
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	for i := 1; i <= memstore.MaxDreamAttempts; i++ {
		w := e.worker(dream.Options{Lease: time.Hour})
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		select {
		case <-answered:
		case <-time.After(time.Minute):
			t.Fatalf("attempt %d never called the model", i)
		}
		stop()
		<-done
		got := e.get(t, d.ID)
		if got.Status != "running" {
			t.Fatalf("after stop %d: %s", i, got.RawJSON())
		}
	}
	// The lease (an hour) was let go each time: the next claim is at once.
	ok, err := e.worker(dream.Options{}).RunOne(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := e.get(t, d.ID)
	if ok || got.Status != "failed" || !strings.Contains(got.Error.Message, fmt.Sprint(memstore.MaxDreamAttempts)) {
		t.Fatalf("after %d attempts (claimed again: %v): %s", memstore.MaxDreamAttempts, ok, got.RawJSON())
	}
}

// With ANTHROPIC_API_KEY set, one small real dream runs and ends
// completed with usage. ANTHROPIC_BASE_URL and DREAM_TEST_MODEL pick the
// endpoint and model.
func TestRealModelDream(t *testing.T) {
	key := os.Getenv("ANTHROPIC_API_KEY")
	if key == "" {
		t.Skip("ANTHROPIC_API_KEY is not set: the real model's dream is skipped (the scripted model's tests cover the worker)")
	}
	model := os.Getenv("DREAM_TEST_MODEL")
	if model == "" {
		model = string(anthropic.ModelClaudeHaiku4_5)
	}
	db, _ := sqliteDB(t)
	e := newEnv(t, db, sm.Seq())
	in := e.store(t, "Prefs", "/editor.md", "The user edits with Vim.\n", "/editor-2.md", "Editor: Vim.\n")
	ses := e.session(t, "I switched from Vim to Helix.", "Noted.")
	d, err := e.sdk.Beta.Dreams.New(t.Context(), anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{
			anthropic.BetaDreamInputParamOfMemoryStore(in.ID),
			anthropic.BetaDreamInputParamOfSessions([]string{ses}),
		},
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String(model)},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := dream.New(e.core, dream.Options{Model: agentloop.Config{BaseURL: os.Getenv("ANTHROPIC_BASE_URL"), APIKey: key},
		Limits: agentloop.Limits{MaxSteps: 15, MaxTokens: 200_000, MaxWrites: 10, MaxTime: 3 * time.Minute}})
	e.runOne(t, w)
	got := e.get(t, d.ID)
	if got.Status != "completed" || got.Usage.InputTokens == 0 || got.Usage.OutputTokens == 0 || len(got.Outputs) != 1 {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	mems := e.memories(t, got.Outputs[0].MemoryStoreID)
	t.Logf("the output store: %v", mems)
	if len(mems) == 0 {
		t.Error("the output store is empty")
	}
}

// The prompt holds the newest events of each input session, within
// dream.MaxTranscriptBytes, and says when older ones are left out.
func TestDreamPromptBoundsTranscripts(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, sm.Seq(sm.Answer(sm.Usage{}, sm.Text("done"))))
	in := e.store(t, "Notes", "/a.md", "a\n")
	var texts []string
	for i := range 400 {
		texts = append(texts, fmt.Sprintf("message %03d %s", i, strings.Repeat("x", 1000)))
	}
	long := e.session(t, texts...)
	short := e.session(t, "the short session's only message")
	d := e.newDream(t, in.ID, []string{long, short}, false)
	e.runOne(t, e.worker(dream.Options{}))
	if got := e.get(t, d.ID); got.Status != "completed" {
		t.Fatalf("dream: %s", got.RawJSON())
	}
	prompt := e.model.Requests()[0].Messages[0].Content[0].Text
	if len(prompt) > dream.MaxTranscriptBytes+20_000 {
		t.Errorf("the prompt is %d bytes", len(prompt))
	}
	for _, want := range []string{"message 399", "(Older events are left out.)", "the short session's only message"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "message 000") {
		t.Errorf("the prompt holds the oldest event of the long session")
	}
	if i, j := strings.Index(prompt, "message 398"), strings.Index(prompt, "message 399"); i < 0 || i > j {
		t.Errorf("the events are not oldest first")
	}
}

// The core reads a dream's input transcripts for the worker that holds
// the dream, and for its input sessions alone.
func TestDreamInputEventsAreTheHoldersOnly(t *testing.T) {
	db, _ := sqliteDB(t)
	e := newEnv(t, db, sm.Seq())
	in := e.store(t, "Notes", "/a.md", "a\n")
	ses, other := e.session(t, "input"), e.session(t, "not an input")
	d := e.newDream(t, in.ID, []string{ses}, false)
	claimed, err := e.core.ClaimDream(t.Context(), "worker-1", time.Minute)
	if err != nil || claimed == nil || claimed.ID != d.ID {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	f := memstore.SessionEventFilter{Limit: 10}
	if page, err := e.core.DreamInputEvents(t.Context(), d.ID, "worker-1", ses, f); err != nil || len(page.Items) != 1 {
		t.Errorf("the holder's read: %v %v", page, err)
	}
	if _, err := e.core.DreamInputEvents(t.Context(), d.ID, "worker-2", ses, f); memstore.ErrorCode(err) != memstore.EConflict {
		t.Errorf("another worker's read: %v", err)
	}
	if _, err := e.core.DreamInputEvents(t.Context(), d.ID, "worker-1", other, f); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session that is no input: %v", err)
	}
}

// One answer slower than the lease does not lose the dream: the worker
// renews its lease while it waits, so another worker cannot take it.
func TestDreamSlowAnswerKeepsLease(t *testing.T) {
	db, _ := sqliteDB(t)
	waiting := make(chan struct{})
	var once sync.Once
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		once.Do(func() { close(waiting) })
		time.Sleep(4 * time.Second)
		return sm.Answer(sm.Usage{InputTokens: 1}, sm.Text("done"))
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
	lease := 1500 * time.Millisecond
	done := make(chan struct{})
	go func() { defer close(done); e.runOne(t, e.worker(dream.Options{Lease: lease})) }()
	<-waiting
	other := e.worker(dream.Options{Lease: lease})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok, err := other.RunOne(t.Context()); ok || err != nil {
			t.Fatalf("another worker took the dream while its answer was awaited (%v, %v)", ok, err)
		}
	}
	<-done
	if got := e.get(t, d.ID); got.Status != "completed" || len(e.model.Requests()) != 1 {
		t.Fatalf("dream: %s; %d requests", got.RawJSON(), len(e.model.Requests()))
	}
}

// An answer cut at its max_tokens, or a refusal, fails the dream, saying
// so: the run did not finish its work.
func TestDreamCutOrRefused(t *testing.T) {
	for _, tc := range []struct{ stop, typ, msg string }{
		{"max_tokens", dream.ErrTypeLimit, "cut at its limit of 4096 tokens"},
		{"refusal", dream.ErrTypeModel, "refused"},
	} {
		t.Run(tc.stop, func(t *testing.T) {
			db, _ := sqliteDB(t)
			e := newEnv(t, db, sm.Seq(sm.AnswerStop(tc.stop, sm.Usage{OutputTokens: 9}, sm.Text("I will not"))))
			in := e.store(t, "Notes", "/a.md", "a\n")
			d := e.newDream(t, in.ID, []string{e.session(t, "hello")}, false)
			e.runOne(t, e.worker(dream.Options{}))
			got := e.get(t, d.ID)
			if got.Status != "failed" || got.Error.Type != tc.typ || !strings.Contains(got.Error.Message, tc.msg) || got.Usage.OutputTokens != 9 {
				t.Fatalf("dream: %s", got.RawJSON())
			}
		})
	}
}

// A secret the model tries to keep is refused by the core's content
// rules, as for any writer: the model reads why, and nothing is written.
func TestDreamNeverWritesSecrets(t *testing.T) {
	db, _ := sqliteDB(t)
	secret := "deploy key: sk-ant-" + "api03-" + strings.Repeat("Zx9", 10)
	e := newEnv(t, db, func(r *sm.Request) sm.Response {
		if r.N > 1 {
			return sm.Answer(sm.Usage{}, sm.Text("done"))
		}
		return sm.Answer(sm.Usage{}, sm.ToolUse("tu_1", agenttool.ToolWrite, map[string]string{"path": mount(r) + "/keys.md", "content": secret}))
	})
	in := e.store(t, "Notes", "/a.md", "a\n")
	d := e.newDream(t, in.ID, []string{e.session(t, "the deploy key is in the vault")}, false)
	e.runOne(t, e.worker(dream.Options{}))
	got := e.get(t, d.ID)
	res := e.model.Requests()[1].ToolResults()
	if got.Status != "completed" || len(res) != 1 || !res[0].IsError || !strings.Contains(strings.ToLower(res[0].ResultText()), "credential") {
		t.Fatalf("dream %s; tool results %+v", got.RawJSON(), res)
	}
	if mems := e.memories(t, got.Outputs[0].MemoryStoreID); len(mems) != 1 {
		t.Errorf("the output store: %v", mems)
	}
}

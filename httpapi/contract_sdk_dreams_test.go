package httpapi_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// dreamInputs are the SDK's inputs of a dream of store and sessions.
func dreamInputs(store string, sessions ...string) []anthropic.BetaDreamInputUnionParam {
	return []anthropic.BetaDreamInputUnionParam{
		anthropic.BetaDreamInputParamOfMemoryStore(store),
		anthropic.BetaDreamInputParamOfSessions(sessions),
	}
}

// newSDKSession makes a session with no store, by the SDK.
func newSDKSession(t *testing.T, sdk anthropic.Client) (id, token string) {
	t.Helper()
	s, err := sdk.Beta.Sessions.New(t.Context(), anthropic.BetaSessionNewParams{
		Agent: anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")}, EnvironmentID: "env_01"})
	if err != nil {
		t.Fatal(err)
	}
	token, err = strconv.Unquote(s.JSON.ExtraFields["token"].Raw())
	if err != nil {
		t.Fatal(err)
	}
	return s.ID, token
}

// TestSDKDreams drives /v1/dreams with the official Go SDK's
// Beta.Dreams: New, Get, List, ListAutoPaging, Cancel and Archive, the
// dream as the worker runs it, bad inputs, a session token, another
// workspace, and a server with no model.
func TestSDKDreams(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		testSDKDreams(t, newSDKEnv(t, backend, memstore.WithDreams(true)))
	})
}

func testSDKDreams(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	dreams := &e.sdk.Beta.Dreams
	store := e.newStore(t, "Notes")
	e.newMemory(t, store.ID, "/prefs.md", "likes tabs")
	s1, token := newSDKSession(t, e.sdk)
	s2, _ := newSDKSession(t, e.sdk)
	sorted := slices.Sorted(slices.Values([]string{s1, s2}))

	d, err := dreams.New(ctx, anthropic.BetaDreamNewParams{
		Inputs:       dreamInputs(store.ID, s2, s1),
		Model:        anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")},
		Instructions: anthropic.String("Merge duplicates."),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.ID, "drm_") || d.Type != "dream" || d.Status != anthropic.BetaDreamStatusPending ||
		d.Model.ID != "claude-test" || d.Model.Speed != "standard" || d.Instructions != "Merge duplicates." ||
		d.OutputBehavior.Type != "create_new" || len(d.Inputs) != 2 {
		t.Fatalf("the created dream: %s", d.RawJSON())
	}
	if in := d.Inputs[0].AsMemoryStore(); d.Inputs[0].Type != "memory_store" || in.MemoryStoreID != store.ID {
		t.Errorf("inputs[0]: %s", d.Inputs[0].RawJSON())
	}
	if in := d.Inputs[1].AsSessions(); d.Inputs[1].Type != "sessions" || !slices.Equal(in.SessionIDs, sorted) {
		t.Errorf("inputs[1]: %s, want the sessions sorted %v", d.Inputs[1].RawJSON(), sorted)
	}
	raw := rawFields(t, d.RawJSON())
	for _, k := range []string{"session_id", "error", "ended_at", "archived_at"} {
		if v, ok := raw[k]; !ok || v != nil {
			t.Errorf("%s of a pending dream: %v (present %v), want null", k, v, ok)
		}
	}
	if outs, ok := raw["outputs"].([]any); !ok || len(outs) != 0 {
		t.Errorf("outputs of a pending dream: %v, want []", raw["outputs"])
	}
	if u, _ := raw["usage"].(map[string]any); len(u) != 4 || u["input_tokens"] != 0.0 || u["cache_read_input_tokens"] != 0.0 {
		t.Errorf("usage of a pending dream: %v", raw["usage"])
	}

	got, err := dreams.Get(ctx, d.ID, anthropic.BetaDreamGetParams{})
	if err != nil || got.RawJSON() != d.RawJSON() {
		t.Errorf("get: %v, %v; want %s", got, err, d.RawJSON())
	}

	// The object form of the model, and update_existing.
	u, err := dreams.New(ctx, anthropic.BetaDreamNewParams{
		Inputs:         dreamInputs(store.ID, s1),
		Model:          anthropic.BetaDreamNewParamsModelUnion{OfBetaDreamModelConfig: &anthropic.BetaDreamModelConfigParam{ID: "claude-test", Speed: "standard"}},
		OutputBehavior: anthropic.BetaOutputBehaviorParamOfUpdateExisting(store.ID),
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.OutputBehavior.Type != "update_existing" || u.OutputBehavior.MemoryStoreID != store.ID || u.Instructions != "" {
		t.Errorf("an update_existing dream: %s", u.RawJSON())
	}
	if v, ok := rawFields(t, u.RawJSON())["instructions"]; !ok || v != nil {
		t.Errorf("instructions of a dream without: %v, want null", v)
	}
	// A second update_existing of the store is a conflict.
	_, err = dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
		Model:          anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")},
		OutputBehavior: anthropic.BetaOutputBehaviorParamOfUpdateExisting(store.ID)})
	sdkError(t, err, 409, "conflict_error", "a second update_existing dream")

	third, err := dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}})
	if err != nil {
		t.Fatal(err)
	}

	// Newest first, a page at a time.
	var all []string
	pager := dreams.ListAutoPaging(ctx, anthropic.BetaDreamListParams{Limit: anthropic.Int(1)})
	for pager.Next() {
		all = append(all, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{third.ID, u.ID, d.ID}; !slices.Equal(all, want) {
		t.Errorf("ListAutoPaging by 1: %v, want %v", all, want)
	}
	page, err := dreams.List(ctx, anthropic.BetaDreamListParams{Limit: anthropic.Int(2)})
	if err != nil || len(page.Data) != 2 || page.NextPage == "" {
		t.Fatalf("the first page of 2: %v, %v", page, err)
	}
	next, err := page.GetNextPage()
	if err != nil || next == nil || len(next.Data) != 1 || next.Data[0].ID != d.ID {
		t.Fatalf("the next page: %v, %v", next, err)
	}

	// Cancel, then archive.
	_, err = dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
	sdkError(t, err, 400, "invalid_request_error", "archive of a pending dream")
	c, err := dreams.Cancel(ctx, d.ID, anthropic.BetaDreamCancelParams{})
	if err != nil || c.Status != anthropic.BetaDreamStatusCanceled || c.EndedAt.IsZero() {
		t.Fatalf("cancel: %v, %v", c, err)
	}
	c2, err := dreams.Cancel(ctx, d.ID, anthropic.BetaDreamCancelParams{})
	if err != nil || c2.RawJSON() != c.RawJSON() {
		t.Errorf("canceling again: %v, %v; want it unchanged", c2, err)
	}
	a, err := dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
	if err != nil || a.ArchivedAt.IsZero() {
		t.Fatalf("archive: %v, %v", a, err)
	}
	page, err = dreams.List(ctx, anthropic.BetaDreamListParams{})
	if err != nil || len(page.Data) != 2 {
		t.Errorf("the default list after an archive: %v, %v", page, err)
	}
	page, err = dreams.List(ctx, anthropic.BetaDreamListParams{IncludeArchived: anthropic.Bool(true),
		Statuses: []anthropic.BetaDreamStatus{anthropic.BetaDreamStatusCanceled}})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != d.ID {
		t.Errorf("the canceled dreams, archived included: %v, %v", page, err)
	}
	page, err = dreams.List(ctx, anthropic.BetaDreamListParams{CreatedAtGt: anthropic.Time(time.Time(c.CreatedAt))})
	if err != nil || len(page.Data) != 2 {
		t.Errorf("the dreams created after the first: %v, %v", page, err)
	}

	// The worker runs the third: its output store and session show, with
	// the usage, once it runs.
	worker := memstore.NewCore(e.h.DB, memstore.WithDreams(true))
	claimed, err := worker.ClaimDream(ctx, "worker", time.Hour)
	for err == nil && claimed != nil && claimed.ID != third.ID {
		claimed, err = worker.ClaimDream(ctx, "worker", time.Hour)
	}
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	if _, err := worker.BeginDream(ctx, claimed, "worker"); err != nil {
		t.Fatal(err)
	}
	running, err := dreams.Get(ctx, third.ID, anthropic.BetaDreamGetParams{})
	if err != nil || running.Status != anthropic.BetaDreamStatusRunning || len(running.Outputs) != 1 ||
		running.Outputs[0].MemoryStoreID != claimed.OutputStoreID || running.Outputs[0].Type != "memory_store" ||
		running.SessionID != claimed.SessionID {
		t.Fatalf("a running dream: %v, %v", running, err)
	}
	usage := memstore.DreamUsage{InputTokens: 10, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4}
	if err := worker.FinishDream(ctx, third.ID, "worker", memstore.DreamCompleted, usage, nil); err != nil {
		t.Fatal(err)
	}
	done, err := dreams.Get(ctx, third.ID, anthropic.BetaDreamGetParams{})
	if err != nil || done.Status != anthropic.BetaDreamStatusCompleted || done.EndedAt.IsZero() ||
		done.Usage.InputTokens != 10 || done.Usage.OutputTokens != 2 || done.Usage.CacheCreationInputTokens != 3 || done.Usage.CacheReadInputTokens != 4 {
		t.Errorf("a completed dream: %v, %v", done, err)
	}
	_, err = dreams.Cancel(ctx, third.ID, anthropic.BetaDreamCancelParams{})
	sdkError(t, err, 400, "invalid_request_error", "a cancel of a completed dream")

	before := e.countDreams(t)
	// Bad inputs: a clear 400, nothing made.
	tooMany := make([]string, memstore.MaxDreamSessions+1)
	for i := range tooMany {
		tooMany[i] = "sesn_" + strconv.Itoa(i)
	}
	for _, c := range []struct {
		name string
		p    anthropic.BetaDreamNewParams
		want string
	}{
		{"fast", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
			Model: anthropic.BetaDreamNewParamsModelUnion{OfBetaDreamModelConfig: &anthropic.BetaDreamModelConfigParam{ID: "claude-test", Speed: "fast"}}},
			"model.speed must be standard"},
		{"101 sessions", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, tooMany...),
			Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}}, "1 to 100 sessions; 101 were given"},
		{"no sessions input", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1)[:1],
			Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}}, "exactly one memory_store entry and one sessions entry"},
		{"no model", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1)}, "model is required"},
		{"long instructions", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
			Model:        anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")},
			Instructions: anthropic.String(strings.Repeat("é", memstore.MaxDreamInstructions+1))}, "1 to 4096 characters; 4097 were given"},
		{"another workspace's session", anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1, "sesn_elsewhere"),
			Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}}, "sesn_elsewhere of the sessions input is not in this workspace"},
	} {
		_, err := dreams.New(ctx, c.p)
		body := sdkError(t, err, 400, "invalid_request_error", c.name)
		if msg, _ := body["message"].(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, msg, c.want)
		}
	}
	for _, c := range []struct{ name, body, want string }{
		{"an unknown field", `{"inputs": [], "model": "m", "priority": 1}`, `"priority" is not a field of a dream create`},
		{"an input's unknown field", `{"inputs": [{"type": "memory_store", "memory_store_id": "` + store.ID + `", "access": "read_only"}], "model": "m"}`, "inputs[0] must be"},
		{"model of the wrong type", `{"inputs": [], "model": 7}`, "model must be a model ID"},
		{"output_behavior without type", `{"inputs": [], "model": "m", "output_behavior": {}}`, "output_behavior.type is required"},
		{"output_behavior's unknown field", `{"inputs": [], "model": "m", "output_behavior": {"type": "create_new", "name": "x"}}`, "output_behavior must be"},
	} {
		err := e.sdk.Post(ctx, "v1/dreams", []byte(c.body), nil, option.WithHeader("content-type", "application/json"))
		body := sdkError(t, err, 400, "invalid_request_error", c.name)
		if msg, _ := body["message"].(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, msg, c.want)
		}
	}
	// A session token may not.
	agent := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(e.h.URL),
		option.WithAuthToken(token), option.WithHTTPClient(e.h.srv.Client()))
	_, err = agent.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}})
	sdkError(t, err, 403, "permission_error", "a session token's create")
	_, err = agent.Beta.Dreams.List(ctx, anthropic.BetaDreamListParams{})
	sdkError(t, err, 403, "permission_error", "a session token's list")
	_, err = agent.Beta.Dreams.Cancel(ctx, u.ID, anthropic.BetaDreamCancelParams{})
	sdkError(t, err, 403, "permission_error", "a session token's cancel")
	// Another workspace can neither read A's dreams nor dream of A's
	// store and sessions.
	_, _, secretB := e.h.newKey(t, "B")
	b := e.client(secretB)
	_, err = b.Beta.Dreams.Get(ctx, u.ID, anthropic.BetaDreamGetParams{})
	sdkError(t, err, 404, "not_found_error", "another workspace's get")
	_, err = b.Beta.Dreams.Cancel(ctx, u.ID, anthropic.BetaDreamCancelParams{})
	sdkError(t, err, 404, "not_found_error", "another workspace's cancel")
	sB, _ := newSDKSession(t, b)
	_, err = b.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, sB),
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}})
	sdkError(t, err, 400, "invalid_request_error", "a dream of another workspace's store")
	bStore, err := b.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "B's"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(bStore.ID, s1),
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}})
	sdkError(t, err, 400, "invalid_request_error", "a dream of another workspace's session")
	if n := e.countDreams(t); n != before {
		t.Errorf("refused creates made dreams: %d, want %d", n, before)
	}
	if got, _ := b.Beta.Dreams.List(ctx, anthropic.BetaDreamListParams{IncludeArchived: anthropic.Bool(true)}); got == nil || len(got.Data) != 0 {
		t.Errorf("workspace B's list: %v", got)
	}
}

// countDreams counts the dreams of e's workspace, archived ones
// included.
func (e *sdkEnv) countDreams(t *testing.T) int {
	t.Helper()
	n := 0
	pager := e.sdk.Beta.Dreams.ListAutoPaging(t.Context(), anthropic.BetaDreamListParams{IncludeArchived: anthropic.Bool(true), Limit: anthropic.Int(100)})
	for pager.Next() {
		n++
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSDKDreamsWithoutModel: a server with no model refuses a dream,
// saying how to configure one, and makes nothing; the other routes
// answer.
func TestSDKDreamsWithoutModel(t *testing.T) {
	e := newSDKEnv(t, onSQLite)
	ctx := t.Context()
	store := e.newStore(t, "Notes")
	s1, _ := newSDKSession(t, e.sdk)
	_, err := e.sdk.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: dreamInputs(store.ID, s1),
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-test")}})
	body := sdkError(t, err, 400, "invalid_request_error", "a dream on a server without a model")
	if msg, _ := body["message"].(string); !strings.Contains(msg, "dreams are not enabled on this server") || !strings.Contains(msg, "ANTHROPIC_API_KEY") {
		t.Errorf("the refusal: %q, want it to say dreams are off and how to turn them on", msg)
	}
	if n := e.countDreams(t); n != 0 {
		t.Errorf("%d dreams made", n)
	}
}

// TestSDKDreamsStrictHeaders: a strict server takes the dream beta the
// SDK sends, and refuses a dream request without any beta it knows.
func TestSDKDreamsStrictHeaders(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{core: []memstore.CoreOption{memstore.WithDreams(true)},
		configure: func(c *httpapi.Config) { c.StrictHeaders = true }})
	_, _, secret := h.newKey(t, "strict")
	sdk := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(h.URL), option.WithAPIKey(secret),
		option.WithHTTPClient(h.srv.Client()))
	if _, err := sdk.Beta.Dreams.List(t.Context(), anthropic.BetaDreamListParams{}); err != nil {
		t.Errorf("the SDK's list on a strict server: %v", err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.URL+"/v1/dreams", nil)
	req.Header.Set("x-api-key", secret)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a dream request without a beta on a strict server: %d, want 400", resp.StatusCode)
	}
}

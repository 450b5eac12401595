package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storetest"
)

// feedFixture is a server with a store, and a client of its key.
type feedFixture struct {
	h     *apiHarness
	c     *httpapi.Client
	store *memstore.Store
}

func newFeedFixture(t *testing.T, o harnessOptions) *feedFixture {
	t.Helper()
	h := newAPIHarness(t, o)
	_, _, secret := h.newKey(t, "feed")
	c := h.client(secret)
	st, err := c.CreateStore(t.Context(), nil, memstore.StoreCreate{Name: "feed"})
	if err != nil {
		t.Fatal(err)
	}
	return &feedFixture{h: h, c: c, store: st}
}

// write makes n memories through the API, one request each.
func (f *feedFixture) write(t *testing.T, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := f.c.CreateMemory(context.Background(), nil, f.store.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%s/%d.md", prefix, i), Content: "x"}); err != nil {
			t.Error(err)
			return
		}
	}
}

// get sends a GET of the store's events with headers, and returns the
// response.
func (f *feedFixture) get(t *testing.T, ctx context.Context, secret, query string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.h.URL+"/v1/memory_stores/"+f.store.ID+"/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", secret)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := f.h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEventsPage: the JSON page of a store's feed, its cursor, and who
// may read it.
func TestEventsPage(t *testing.T) {
	ctx := t.Context()
	f := newFeedFixture(t, harnessOptions{})
	m, err := f.c.CreateMemory(ctx, nil, f.store.ID, memstore.MemoryCreate{Path: "/a.md", Content: "secret words"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeleteMemory(ctx, nil, f.store.ID, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	res := f.get(t, ctx, f.c.APIKey, "?limit=1")
	defer res.Body.Close()
	var raw map[string]any
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET events: %d %v", res.StatusCode, err)
	}
	data := raw["data"].([]any)
	first := data[0].(map[string]any)
	if len(data) != 1 || raw["has_more"] != true || raw["cursor"] != first["id"] || first["event"] != "memory.created" ||
		first["sequence"] != 1.0 || first["path"] != "/a.md" || first["content_sha256"] != memstore.ContentSHA256("secret words") ||
		first["memory_version_id"] != m.VersionID || first["actor"].(map[string]any)["type"] != "api_actor" {
		t.Errorf("the first page: %v", raw)
	}
	if _, ok := first["content"]; ok {
		t.Errorf("an event holds content: %v", first)
	}
	page, err := f.c.Events(ctx, nil, f.store.ID, memstore.EventFilter{After: first["id"].(string)})
	if err != nil || len(page.Events) != 1 || page.Events[0].Type != memstore.EventMemoryDeleted || page.Events[0].ContentSHA256 != "" || page.More {
		t.Errorf("the rest: %+v %v", page, err)
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?after=nonsense"} {
		res := f.get(t, ctx, f.c.APIKey, q)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("GET events%s: %d, want 400", q, res.StatusCode)
		}
	}

	// A session token reads the feeds of its stores, and no other.
	other, err := f.c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, token, err := f.c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.store.ID, Access: memstore.AccessReadOnly}}})
	if err != nil {
		t.Fatal(err)
	}
	agent := f.h.client(token)
	if page, err := agent.Events(ctx, nil, f.store.ID, memstore.EventFilter{}); err != nil || len(page.Events) != 2 {
		t.Errorf("a session reads its store's feed: %+v %v", page, err)
	}
	if _, err := agent.Events(ctx, nil, other.ID, memstore.EventFilter{}); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session reads another store's feed: %v", err)
	}
	err = agent.StreamEvents(ctx, nil, other.ID, "", func(memstore.Event) error { return nil })
	if memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session streams another store's feed: %v", err)
	}
}

// TestEventsStreamRacingWrites: writes race a stream that is cut in the
// middle and resumed from the last event it delivered; every change
// arrives exactly once, in order.
func TestEventsStreamRacingWrites(t *testing.T) {
	f := newFeedFixture(t, harnessOptions{})
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { f.write(t, fmt.Sprint("w", w), each) })
	}
	var (
		seen   []memstore.Event
		cursor string
	)
	// The first stream is cut after a third of the changes.
	ctx, cancel := context.WithCancel(t.Context())
	err := f.c.StreamEvents(ctx, nil, f.store.ID, "", func(e memstore.Event) error {
		seen, cursor = append(seen, e), e.Cursor
		if len(seen) == writers*each/3 {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the first stream: %v", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = f.c.StreamEvents(ctx, nil, f.store.ID, cursor, func(e memstore.Event) error {
		seen = append(seen, e)
		if len(seen) == writers*each {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the resumed stream: %v", err)
	}
	wg.Wait()
	if len(seen) != writers*each {
		t.Fatalf("%d events, want %d", len(seen), writers*each)
	}
	paths := map[string]bool{}
	for i, e := range seen {
		if e.Seq != int64(i+1) || e.Type != memstore.EventMemoryCreated || paths[e.Path] {
			t.Fatalf("event %d: %+v (a gap, a repeat or out of order)", i, e)
		}
		paths[e.Path] = true
	}
	// Nothing more after the last.
	page, err := f.c.Events(t.Context(), nil, f.store.ID, memstore.EventFilter{After: seen[len(seen)-1].Cursor})
	if err != nil || len(page.Events) != 0 {
		t.Errorf("after the last event: %+v %v", page, err)
	}
}

// TestEventsStreamLive: a stream opened at the end hears a change well
// within the re-read interval (a notice wakes it), sends heartbeats while
// idle, outlives the server's write timeout, and resumes by
// Last-Event-ID.
// Over HTTP/2 too, where the server's write timeout is a timer of each
// stream rather than a deadline of the connection's writes.
func TestEventsStreamLive(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) { testEventsStreamLive(t, proto == "HTTP/2") })
	}
}

func testEventsStreamLive(t *testing.T, http2 bool) {
	f := newFeedFixture(t, harnessOptions{
		configure: func(c *httpapi.Config) { c.StreamHeartbeat = 50 * time.Millisecond },
		server: func(s *http.Server) {
			s.WriteTimeout, s.ReadTimeout = 300*time.Millisecond, 300*time.Millisecond
		},
		http2: http2,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res := f.get(t, ctx, f.c.APIKey, "?after=now", "Accept", "text/event-stream")
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if http2 != (res.ProtoMajor == 2) {
		t.Fatalf("the stream is %s", res.Proto)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			return l
		case <-ctx.Done():
			t.Fatal("no line in time")
		}
		return ""
	}
	// Idle past the write timeout, then heartbeats only.
	time.Sleep(500 * time.Millisecond)
	heartbeats := 0
	for heartbeats < 3 {
		if l := next(); l == ": heartbeat" {
			heartbeats++
		}
	}
	var id string
	for range 2 {
		m, err := f.c.CreateMemory(ctx, nil, f.store.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/late%d.md", len(id)), Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var typ, data string
		for data == "" {
			l := next()
			switch {
			case strings.HasPrefix(l, "id: "):
				id = strings.TrimPrefix(l, "id: ")
			case strings.HasPrefix(l, "event: "):
				typ = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				data = strings.TrimPrefix(l, "data: ")
			}
		}
		if d := time.Since(start); d > httpapi.StreamRecheck/2 {
			t.Errorf("a change reached the stream after %v: no notice woke it", d)
		}
		var e httpapi.EventJSON
		if err := json.Unmarshal([]byte(data), &e); err != nil || typ != "memory.created" || e.VersionID == nil || *e.VersionID != m.VersionID || e.ID != id {
			t.Errorf("the event: %s %s %v (id %s)", typ, data, err, id)
		}
	}
	cancel()

	// Resuming by Last-Event-ID from the first of the two.
	page, err := f.c.Events(t.Context(), nil, f.store.ID, memstore.EventFilter{})
	if err != nil || len(page.Events) != 2 {
		t.Fatal(page, err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res = f.get(t, ctx, f.c.APIKey, "?after=nonsense-overridden", "Accept", "text/event-stream", "Last-Event-ID", page.Events[0].Cursor)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "id: ") {
			if got := strings.TrimPrefix(l, "id: "); got != page.Events[1].Cursor {
				t.Errorf("resumed at %s, want the second event, %s", got, page.Events[1].Cursor)
			}
			break
		}
	}
}

// TestEventsStreamLimits: streams are bounded per credential (429) and
// in all (529), before any byte of a stream; a refused or ended stream
// frees its place.
func TestEventsStreamLimits(t *testing.T) {
	f := newFeedFixture(t, harnessOptions{configure: func(c *httpapi.Config) {
		c.MaxStreamsPerCredential, c.MaxStreams = 1, 2
	}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, _, other := f.h.newKey(t, "feed-2")
	_, _, third := f.h.newKey(t, "feed-3")
	open := func(secret string) *http.Response {
		return f.get(t, ctx, secret, "", "Accept", "text/event-stream")
	}
	first := open(f.c.APIKey)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %d", first.StatusCode)
	}
	again := open(f.c.APIKey)
	again.Body.Close()
	if again.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second stream of one key: %d, want 429", again.StatusCode)
	}
	// Another workspace's store is not found, whatever the limits.
	second := f.get(t, ctx, other, "", "Accept", "text/event-stream")
	second.Body.Close()
	if second.StatusCode != http.StatusNotFound {
		t.Errorf("another workspace's stream: %d, want 404", second.StatusCode)
	}
	// Two streams in all: the third credential finds the server full
	// while the first two are open.
	st2, err := f.h.client(other).CreateStore(ctx, nil, memstore.StoreCreate{Name: "two"})
	if err != nil {
		t.Fatal(err)
	}
	f2 := &feedFixture{h: f.h, store: st2}
	s2 := f2.get(t, ctx, other, "", "Accept", "text/event-stream")
	defer s2.Body.Close()
	st3, err := f.h.client(third).CreateStore(ctx, nil, memstore.StoreCreate{Name: "three"})
	if err != nil {
		t.Fatal(err)
	}
	f3 := &feedFixture{h: f.h, store: st3}
	s3 := f3.get(t, ctx, third, "", "Accept", "text/event-stream")
	s3.Body.Close()
	if s2.StatusCode != http.StatusOK || s3.StatusCode != 529 || s3.Header.Get("X-Should-Retry") != "false" && s3.Header.Get("X-Should-Retry") != "true" {
		t.Errorf("streams in all: %d then %d (%s), want 200 then 529", s2.StatusCode, s3.StatusCode, s3.Header.Get("X-Should-Retry"))
	}
	first.Body.Close()
	// The first stream's place frees once the server sees it gone.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := open(f.c.APIKey)
		r.Body.Close()
		if r.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place never freed: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEventsResumeAfterRestart: a consumer resumes from its cursor after
// the server stops and starts again on the same SQLite file, and sees
// exactly the changes it had not.
func TestEventsResumeAfterRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	start := func() (*httptest.Server, *sqlite.DB) {
		db, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		core := memstore.NewCore(db)
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Feed: core, Keys: core}))
		return srv, db
	}
	srv, db := start()
	ws, err := db.CreateWorkspace(ctx, "restart")
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := memstore.NewCore(db).CreateAPIKey(ctx, ws.ID, "k")
	if err != nil {
		t.Fatal(err)
	}
	c := httpapi.NewClient(srv.URL, secret)
	st, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "restart"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		sqlitetest.Create(t, db, ws.ID, st.ID, fmt.Sprintf("/before/%d.md", i), "x", memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_x"})
	}
	var cursor string
	stop := errors.New("two handled")
	err = c.StreamEvents(ctx, nil, st.ID, "", func(e memstore.Event) error {
		if cursor = e.Cursor; e.Seq == 2 {
			return stop // the consumer has handled two when the server goes
		}
		return nil
	})
	if err != stop {
		t.Fatal(err)
	}
	srv.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	srv, db = start()
	defer func() { srv.Close(); db.Close() }()
	c.BaseURL = srv.URL
	sqlitetest.Create(t, db, ws.ID, st.ID, "/after.md", "x", memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_x"})
	var got []string
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = c.WatchEvents(sctx, nil, st.ID, cursor, func(e memstore.Event) error {
		if got = append(got, fmt.Sprint(e.Seq, " ", e.Path)); len(got) == 2 {
			cancel()
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3 /before/2.md", "4 /after.md"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("after the restart: %v, want %v", got, want)
	}
}

// TestEventsStreamEndsOnRevocation: revoking the session token that
// opened a stream ends the stream at once.
func TestEventsStreamEndsOnRevocation(t *testing.T) {
	f := newFeedFixture(t, harnessOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, tok, token, err := f.c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.store.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		ended <- f.h.client(token).StreamEvents(ctx, nil, f.store.ID, "", func(memstore.Event) error { return nil })
	}()
	time.Sleep(300 * time.Millisecond) // the stream is open
	select {
	case err := <-ended:
		t.Fatalf("the stream ended before the revocation: %v", err)
	default:
	}
	if _, err := f.c.RevokeSessionToken(ctx, nil, tok.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the stream ended without saying so")
		}
	case <-time.After(2 * time.Second):
		t.Error("the stream of a revoked token goes on")
	}
}

// feedReplicas are the server a stream is open on (there) and the one
// changes are made through (here): one server over SQLite, two replicas
// over PostgreSQL.
func feedReplicas(t *testing.T, backend harnessBackend, o harnessOptions) (here, there *apiHarness) {
	t.Helper()
	if backend == onPostgres {
		hs := postgresReplicas(t, 2, o)
		return hs[0], hs[1]
	}
	o.backend = backend
	h := newAPIHarness(t, o)
	return h, h
}

// TestEventsStreamEndsOnStoreDeletion: deleting a store ends its streams
// at once, on the replica that deleted it and on the others, with an
// "error" event saying the store is not found, rather than at their next
// re-read of the feed.
func TestEventsStreamEndsOnStoreDeletion(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		here, there := feedReplicas(t, backend, harnessOptions{})
		_, _, secret := here.newKey(t, "feed")
		c := here.client(secret)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		st, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "doomed"})
		if err != nil {
			t.Fatal(err)
		}
		seen, ended := make(chan memstore.Event, 1), make(chan error, 1)
		go func() {
			ended <- there.client(secret).StreamEvents(ctx, nil, st.ID, "", func(e memstore.Event) error {
				seen <- e
				return nil
			})
		}()
		// An event through the stream: it is open and has just read its
		// feed, so that its next re-read is a whole StreamRecheck away.
		if _, err := c.CreateMemory(ctx, nil, st.ID, memstore.MemoryCreate{Path: "/a.md", Content: "x"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
		case err := <-ended:
			t.Fatalf("the stream ended: %v", err)
		case <-ctx.Done():
			t.Fatal("no event through the stream")
		}
		start := time.Now()
		if err := c.DeleteStore(ctx, nil, st.ID); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ended:
			if took := time.Since(start); took > httpapi.StreamRecheck/2 {
				t.Errorf("the stream ended %v after the deletion: at a re-read, not on a notice", took)
			}
			if memstore.ErrorCode(err) != memstore.ENotFound || !strings.Contains(err.Error(), st.ID) {
				t.Errorf("the stream ended with %v, want not_found naming the store", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the stream of a deleted store goes on")
		}
	})
}

// deafToRevocations makes a server hear no revocation but those told
// through deaf.
func deafToRevocations(deaf **storetest.DeafSessions) func(*httpapi.Config) {
	return func(c *httpapi.Config) {
		*deaf = &storetest.DeafSessions{SessionService: c.Sessions}
		c.Sessions = *deaf
		c.Keys = struct{ memstore.KeyService }{c.Keys} // not a RevocationNotifier
	}
}

// TestEventsStreamRechecksWhenUnheard: a stream whose session token or
// API key was revoked unheard (the notice lost) goes on, but ends as soon
// as the server learns that notices went unheard, which it does once it
// listens again: it reads the stream's credential again. The streams of
// credentials still valid go on.
func TestEventsStreamRechecksWhenUnheard(t *testing.T) {
	var deaf *storetest.DeafSessions
	f := newFeedFixture(t, harnessOptions{configure: deafToRevocations(&deaf)})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stream := func(secret string) chan error {
		ended := make(chan error, 1)
		go func() {
			ended <- f.h.client(secret).StreamEvents(ctx, nil, f.store.ID, "", func(memstore.Event) error { return nil })
		}()
		return ended
	}
	token := func() (tokenID, secret string) {
		_, tok, secret, err := f.c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.store.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID, secret
	}
	revokedToken, secret := token()
	endedToken := stream(secret)
	_, secret = token()
	endedKeptToken := stream(secret)
	key, keySecret := f.h.newAPIKey(t, f.store.WorkspaceID, "revoked unheard")
	endedKey := stream(keySecret)
	endedKeptKey := stream(f.c.APIKey)
	time.Sleep(300 * time.Millisecond) // the streams are open

	if _, err := f.c.RevokeSessionToken(ctx, nil, revokedToken); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.Keys.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	for what, ended := range map[string]chan error{"token": endedToken, "key": endedKey} {
		select {
		case err := <-ended:
			t.Fatalf("the stream of the %s ended on a notice the server should not have heard: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	deaf.Notices.Revoked(memstore.Revocation{Unheard: true})
	for what, ended := range map[string]chan error{"token": endedToken, "key": endedKey} {
		select {
		case err := <-ended:
			if err == nil {
				t.Errorf("the stream of the %s ended without saying so", what)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("the stream of a %s revoked unheard goes on after notices were said to be unheard", what)
		}
	}
	for what, ended := range map[string]chan error{"token": endedKeptToken, "key": endedKeptKey} {
		select {
		case err := <-ended:
			t.Errorf("the stream of a valid %s ended: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// TestEventsStreamIdleOverHTTP2: over HTTP/2, where a write deadline is
// a timer of the stream, a stream idle for longer than a write may take
// (StreamWriteTimeout) between two heartbeats is not reset: no deadline
// runs between writes.
func TestEventsStreamIdleOverHTTP2(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out StreamWriteTimeout")
	}
	t.Parallel()
	f := newFeedFixture(t, harnessOptions{
		configure: func(c *httpapi.Config) { c.StreamHeartbeat = httpapi.StreamWriteTimeout + time.Second },
		http2:     true,
	})
	ctx, cancel := context.WithTimeout(t.Context(), httpapi.StreamWriteTimeout+10*time.Second)
	defer cancel()
	res := f.get(t, ctx, f.c.APIKey, "?after=now", "Accept", "text/event-stream")
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
		t.Fatalf("the stream: %d %s", res.StatusCode, res.Proto)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if sc.Text() == ": heartbeat" {
			return
		}
	}
	t.Errorf("the stream ended before its first heartbeat: %v", sc.Err())
}

// TestEventsStreamEndsWhenStoreDetached: a session token's stream of a
// store ends soon after the store is detached from the session, as a new
// request would be refused; a stream of a store still attached goes on.
func TestEventsStreamEndsWhenStoreDetached(t *testing.T) {
	f := newFeedFixture(t, harnessOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	other, err := f.c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	ses, _, secret, err := f.c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.store.ID}, {StoreID: other.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	stream := func(storeID string) chan error {
		ended := make(chan error, 1)
		go func() {
			ended <- f.h.client(secret).StreamEvents(ctx, nil, storeID, "", func(memstore.Event) error { return nil })
		}()
		return ended
	}
	detached, kept := stream(f.store.ID), stream(other.ID)
	time.Sleep(300 * time.Millisecond) // the streams are open

	if _, err := f.c.DetachStore(ctx, nil, ses.ID, f.store.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-detached:
		if err == nil {
			t.Error("the stream of the detached store ended without saying so")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream of a store detached from its session goes on")
	}
	f.write(t, "after", 1)
	select {
	case err := <-kept:
		t.Errorf("the stream of a store still attached ended: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}

// slowChecks is a session service whose every reading again of a
// credential takes until it is ended: it tells when one began, and when
// it returned.
type slowChecks struct {
	*storetest.DeafSessions
	started  chan struct{}
	once     sync.Once
	returned chan struct{}
}

func (s *slowChecks) CheckCaller(ctx context.Context, c *memstore.Caller) error {
	s.once.Do(func() { close(s.started) })
	<-ctx.Done()
	time.Sleep(50 * time.Millisecond) // a lookup slow to notice
	select {
	case <-s.returned:
	default:
		close(s.returned)
	}
	return ctx.Err()
}

// TestCloseWaitsForStreamRechecks: the server's Close ends the readings
// again of streams' credentials under way and returns only once they have
// returned, so that none reads a database closed after it.
func TestCloseWaitsForStreamRechecks(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	core := memstore.NewCore(db)
	slow := &slowChecks{DeafSessions: &storetest.DeafSessions{SessionService: core}, started: make(chan struct{}), returned: make(chan struct{})}
	api := httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: struct{ memstore.KeyService }{core},
		Sessions: slow, Feed: core})
	srv := httptest.NewServer(api)
	defer srv.Close()
	ws, err := core.CreateWorkspace(t.Context(), "recheck")
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := core.CreateAPIKey(t.Context(), ws.ID, "streams")
	if err != nil {
		t.Fatal(err)
	}
	c := httpapi.NewClient(srv.URL, secret)
	st, err := c.CreateStore(t.Context(), nil, memstore.StoreCreate{Name: "recheck"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go c.StreamEvents(ctx, nil, st.ID, "", func(memstore.Event) error { return nil })
	time.Sleep(300 * time.Millisecond) // the stream is open

	slow.Notices.Revoked(memstore.Revocation{Unheard: true})
	select {
	case <-slow.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream's credential was not read again after notices went unheard")
	}
	closed := make(chan struct{})
	go func() { api.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(memstore.RecheckTimeout / 2):
		t.Fatal("Close did not end the reading again under way")
	}
	select {
	case <-slow.returned:
	default:
		t.Error("Close returned before the reading again under way")
	}
}

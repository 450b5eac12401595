package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
)

// migrationSource is what buildMigrationSource made, for the checks.
type migrationSource struct {
	keys         []string // a working API key of each workspace
	revokedKey   string
	tokens       []string // the working session tokens: one without expiry, one with
	revokedToken string
	sessionID    string
	notesStore   string // a store with a memory whose content has "spaces"
	spacesMemory string
	userPassword string // of the console user "ann", an admin
	consoleToken string // ann's console session
	counts       map[memstore.RecordKind]int64
	live         []liveMemories // of each store not archived
}

// liveMemories is how many live memories a store holds, and a key of its
// workspace.
type liveMemories struct {
	store, key string
	n          int
}

// buildMigrationSource makes a SQLite database at path through the
// services: two workspaces, keys (one revoked, one used), stores (one
// archived, with metadata), memories with several versions, a deleted
// memory and a redacted version, sessions (one archived) with two stores
// attached (one read-only) and fields, tokens (one revoked, one that
// expires), and dreams (one pending, one canceled and archived, one that
// ran and failed, with its session).
func buildMigrationSource(t *testing.T, path string) migrationSource {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	co := memstore.NewCore(db, memstore.WithDreams(true))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var src migrationSource
	var callers []*memstore.Caller
	for _, name := range []string{"default", "team"} {
		w, err := db.CreateWorkspace(ctx, name)
		must(err)
		_, secret, err := co.CreateAPIKey(ctx, w.ID, name+"-laptop")
		must(err)
		c, err := co.Authenticate(ctx, secret) // notes the key's last use
		must(err)
		src.keys, callers = append(src.keys, secret), append(callers, c)
	}
	old, secret, err := co.CreateAPIKey(ctx, callers[0].WorkspaceID, "old")
	must(err)
	_, err = co.RevokeAPIKey(ctx, old.ID)
	must(err)
	src.revokedKey = secret
	c := callers[0]

	notes, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "Team notes", Description: "what we agreed", Metadata: map[string]string{"team": "core"}})
	must(err)
	ref, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "Reference"})
	must(err)
	old2, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "Old", Metadata: map[string]string{"era": "2025"}})
	must(err)
	other, err := co.CreateStore(ctx, callers[1], memstore.StoreCreate{Name: "Team two"})
	must(err)
	src.notesStore = notes.ID

	style, err := co.CreateMemory(ctx, c, notes.ID, memstore.MemoryCreate{Path: "/prefs/style.md", Content: "use tabs"})
	must(err)
	spaces, newPath := "indent with spaces, never tabs", "/prefs/format.md"
	_, err = co.UpdateMemory(ctx, c, notes.ID, style.ID, memstore.MemoryUpdate{Content: &spaces})
	must(err)
	_, err = co.UpdateMemory(ctx, c, notes.ID, style.ID, memstore.MemoryUpdate{Path: &newPath})
	must(err)
	src.spacesMemory = style.ID
	todo, err := co.CreateMemory(ctx, c, notes.ID, memstore.MemoryCreate{Path: "/todo.md", Content: "buy milk"})
	must(err)
	must(co.DeleteMemory(ctx, c, notes.ID, todo.ID, ""))
	_, err = co.CreateMemory(ctx, c, notes.ID, memstore.MemoryCreate{Path: "/empty.md", Content: ""})
	must(err)
	first, err := co.Versions(ctx, c, notes.ID, memstore.VersionFilter{MemoryID: style.ID, Operation: memstore.OpCreated})
	must(err)
	_, err = co.RedactVersion(ctx, c, notes.ID, first.Items[0].ID)
	must(err)
	_, err = co.CreateMemory(ctx, c, ref.ID, memstore.MemoryCreate{Path: "/api.md", Content: "GET /v1/memory_stores"})
	must(err)
	_, err = co.CreateMemory(ctx, c, old2.ID, memstore.MemoryCreate{Path: "/old.md", Content: "from before"})
	must(err)
	_, err = co.ArchiveStore(ctx, c, old2.ID)
	must(err)
	_, err = co.CreateMemory(ctx, callers[1], other.ID, memstore.MemoryCreate{Path: "/two.md", Content: "the other workspace"})
	must(err)

	s, _, tok, err := co.CreateSession(ctx, c, memstore.SessionCreate{
		Title:    "nightly run",
		Metadata: map[string]string{"run": "42"},
		Stores: []memstore.AttachmentCreate{
			{StoreID: notes.ID, Instructions: "keep the notes tidy"},
			{StoreID: ref.ID, Access: memstore.AccessReadOnly},
		},
		Fields: map[string]json.RawMessage{"agent": json.RawMessage(`{"name":"helper","version":2}`), "environment_id": json.RawMessage(`"env_1"`)},
	})
	must(err)
	src.sessionID = s.ID
	_, expiring, err := co.CreateSessionToken(ctx, c, s.ID, 24*time.Hour)
	must(err)
	src.tokens = []string{tok, expiring}
	revoked, secret, err := co.CreateSessionToken(ctx, c, s.ID, 0)
	must(err)
	_, err = co.RevokeSessionToken(ctx, c, revoked.ID)
	must(err)
	src.revokedToken = secret
	_, err = co.AppendSessionTurn(ctx, c, s.ID, memstore.Turn{Messages: []memstore.TurnMessage{
		{Role: "user", Content: json.RawMessage(`"tidy the notes"`)},
		{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"toolu_1","name":"memory_list","input":{"path":"/"}}]`)},
		{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","tool_use_id":"toolu_1","content":"notes.md"}]`)},
	}})
	must(err)
	ended, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Title: "ended", Stores: []memstore.AttachmentCreate{{StoreID: ref.ID}}})
	must(err)
	_, err = co.ArchiveSession(ctx, c, ended.ID)
	must(err)

	dream := func(behavior string) *memstore.Dream {
		t.Helper()
		in := "merge duplicates"
		d, err := co.CreateDream(ctx, c, memstore.DreamCreate{
			Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: ref.ID},
				{Type: memstore.DreamInputSessions, SessionIDs: []string{s.ID, ended.ID}}},
			Model: memstore.DreamModel{ID: "claude-test"}, Instructions: &in, OutputBehavior: behavior, OutputStoreID: ref.ID})
		must(err)
		return d
	}
	dream(memstore.OutputUpdateExisting)
	ran, err := co.ClaimDream(ctx, "worker", time.Hour)
	must(err)
	_, err = co.BeginDream(ctx, ran, "worker")
	must(err)
	must(co.FinishDream(ctx, ran.ID, "worker", memstore.DreamFailed, memstore.DreamUsage{InputTokens: 12, OutputTokens: 3},
		&memstore.DreamError{Type: memstore.EOverloaded, Message: "the model endpoint was overloaded"}))
	canceled := dream(memstore.OutputUpdateExisting)
	_, err = co.CancelDream(ctx, c, canceled.ID)
	must(err)
	_, err = co.ArchiveDream(ctx, c, canceled.ID)
	must(err)
	dream(memstore.OutputUpdateExisting)

	// Console users: an admin with a password, signed in, and an auditor
	// who has only a sign-in link so far.
	us := memstore.NewUsers(db)
	src.userPassword = "correct horse battery"
	_, err = us.CreateUser(ctx, c, memstore.UserCreate{Name: "ann", Role: memstore.RoleAdmin, Password: src.userPassword})
	must(err)
	src.consoleToken, _, err = us.SignIn(ctx, "default", "ann", src.userPassword)
	must(err)
	_, err = us.CreateUser(ctx, c, memstore.UserCreate{Name: "bob", Role: memstore.RoleAuditor})
	must(err)
	_, _, err = us.CreateSignInLink(ctx, c, "bob")
	must(err)

	src.live = []liveMemories{{notes.ID, src.keys[0], 2}, {ref.ID, src.keys[0], 1}, {other.ID, src.keys[1], 1}}
	src.counts = map[memstore.RecordKind]int64{
		memstore.KindWorkspaces: 2, memstore.KindAPIKeys: 3, memstore.KindUsers: 2, memstore.KindSignIns: 2, memstore.KindStores: 4,
		memstore.KindMemories: 5, memstore.KindVersions: 9, memstore.KindEvents: 11, memstore.KindSessions: 3, memstore.KindSessionTokens: 4,
		memstore.KindSessionEvents: 3, memstore.KindDreams: 3, memstore.KindWebhooks: 0, memstore.KindCursors: 0, memstore.KindDeliveries: 0,
	}
	return src
}

// dumpRecords is every record of the database at name as Dump hands it
// over, one JSON line each, for an exact comparison of two databases.
func dumpRecords(t *testing.T, name string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := openDatabase(ctx, name, dbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var r recorder
	if err := db.Dump(ctx, &r); err != nil {
		t.Fatal(err)
	}
	return r.lines
}

// recorder is a memstore.RecordSink that keeps each record as JSON.
type recorder struct{ lines []string }

func (r *recorder) add(kind string, v any) error {
	b, err := json.Marshal(v)
	r.lines = append(r.lines, kind+" "+string(b))
	return err
}

func (r *recorder) Begin(k memstore.RecordKind, n int64) error {
	return r.add("begin", fmt.Sprintf("%s %d", k, n))
}
func (r *recorder) Workspace(v *memstore.Workspace) error             { return r.add("workspace", v) }
func (r *recorder) APIKey(v *memstore.APIKeyRecord) error             { return r.add("key", v) }
func (r *recorder) User(v *memstore.User) error                       { return r.add("user", v) }
func (r *recorder) SignIn(v *memstore.SignIn) error                   { return r.add("sign-in", v) }
func (r *recorder) Store(v *memstore.Store) error                     { return r.add("store", v) }
func (r *recorder) Memory(v *memstore.Memory) error                   { return r.add("memory", v) }
func (r *recorder) Version(v *memstore.Version) error                 { return r.add("version", v) }
func (r *recorder) Event(v *memstore.Event) error                     { return r.add("event", v) }
func (r *recorder) Session(v *memstore.Session) error                 { return r.add("session", v) }
func (r *recorder) SessionToken(v *memstore.SessionTokenRecord) error { return r.add("token", v) }
func (r *recorder) Dream(v *memstore.Dream) error                     { return r.add("dream", v) }
func (r *recorder) SessionEvent(v *memstore.SessionEvent) error       { return r.add("session event", v) }
func (r *recorder) Webhook(v *memstore.WebhookEndpoint) error         { return r.add("webhook", v) }
func (r *recorder) WebhookCursor(v *memstore.WebhookCursor) error     { return r.add("cursor", v) }
func (r *recorder) WebhookDelivery(v *memstore.WebhookDelivery) error { return r.add("delivery", v) }

// apiView is everything the API shows of a database to the keys given,
// one workspace each: every list, followed page by page, as JSON.
func apiView(t *testing.T, base string, keys []string) string {
	t.Helper()
	var b strings.Builder
	for _, key := range keys {
		a := newAPI(base, key)
		stores := pages(t, a, "/v1/memory_stores?include_archived=true&limit=100", &b)
		for _, s := range stores {
			pages(t, a, "/v1/memory_stores/"+s+"/memories?view=full&limit=20", &b)
			pages(t, a, "/v1/memory_stores/"+s+"/memory_versions?view=full&limit=20", &b)
			// The feed, whose cursors a consumer holds: one page holds
			// the few events of each store here.
			var feed json.RawMessage
			a.must(t, "GET", "/v1/memory_stores/"+s+"/events?limit=100", nil, &feed)
			fmt.Fprintf(&b, "events of %s\n%s\n", s, feed)
		}
		for _, s := range pages(t, a, "/v1/sessions?include_archived=true&limit=100", &b) {
			pages(t, a, "/v1/sessions/"+s+"/tokens?limit=100", &b)
		}
	}
	return b.String()
}

// sessionDuration is a session's stats.duration_seconds.
var sessionDuration = regexp.MustCompile(`"duration_seconds":[0-9.e+-]+`)

// pages writes every page of a list to b and returns the IDs listed.
func pages(t *testing.T, a *api, path string, b *strings.Builder) []string {
	t.Helper()
	var ids []string
	for page := ""; ; {
		p := path
		if page != "" {
			p += "&page=" + url.QueryEscape(page)
		}
		var raw json.RawMessage
		a.must(t, "GET", p, nil, &raw)
		// A live session's age grows between two servers' answers.
		raw = sessionDuration.ReplaceAll(raw, []byte(`"duration_seconds":0`))
		fmt.Fprintf(b, "%s\n%s\n", p, raw)
		var list struct {
			Data     []struct{ ID string }
			NextPage *string `json:"next_page"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		for _, d := range list.Data {
			ids = append(ids, d.ID)
		}
		if list.NextPage == nil {
			return ids
		}
		page = *list.NextPage
	}
}

// checkCredentials checks on a server that the keys and tokens that
// worked on the source work, and that the revoked ones do not.
func checkCredentials(t *testing.T, base string, src migrationSource) {
	t.Helper()
	for _, tok := range src.tokens {
		newAPI(base, tok).must(t, "GET", "/v1/sessions/"+src.sessionID, nil, nil)
	}
	for _, secret := range []string{src.revokedKey, src.revokedToken} {
		status, body, err := newAPI(base, secret).call("GET", "/v1/sessions/"+src.sessionID, nil, nil)
		if err != nil || status != http.StatusUnauthorized {
			t.Errorf("a revoked credential: %d %s %v; want 401", status, body, err)
		}
	}
	// The console: ann's session goes on, and her password signs her in.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, base+"/console/stores", nil)
	req.AddCookie(&http.Cookie{Name: "memstore_console", Value: src.consoleToken})
	if res, err := noRedirect.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("a console session of the source: %v %v; want 200", res.Status, err)
	} else {
		res.Body.Close()
	}
	consoleSignIn(t, noRedirect, base, "ann", src.userPassword)
	var found struct {
		Data []struct{ Memory struct{ ID string } }
	}
	newAPI(base, src.keys[0]).must(t, "GET", "/v1/memory_stores/"+src.notesStore+"/memories/search?q=spaces", nil, &found)
	if len(found.Data) != 1 || found.Data[0].Memory.ID != src.spacesMemory {
		t.Errorf("a search for a word of %s found %+v", src.spacesMemory, found.Data)
	}
}

// checkRoom checks on a copy of the source that each store takes exactly
// as many new memories as a limit of memories per store of limit leaves
// room for: the copy's count of each store's memories is exact. The
// memories it creates stay.
func checkRoom(t *testing.T, db string, src migrationSource, limit int) {
	t.Helper()
	base := startServer(t, "--db", db, "--max-memories-per-store", strconv.Itoa(limit)).url
	for _, l := range src.live {
		made := 0
		for i := 0; made <= limit; i++ {
			status, body, err := newAPI(base, l.key).call("POST", "/v1/memory_stores/"+l.store+"/memories",
				map[string]string{"path": fmt.Sprintf("/room/%d.md", i), "content": "x"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusOK {
				if status != http.StatusBadRequest || !strings.Contains(string(body), "its limit") {
					t.Errorf("%s: a create in store %s: %d %s, want 200 or 400 at the limit", databaseName(db), l.store, status, body)
				}
				break
			}
			made++
		}
		if made != limit-l.n {
			t.Errorf("%s: store %s with %d memories took %d more under a limit of %d, want %d", databaseName(db), l.store, l.n, made, limit, limit-l.n)
		}
	}
}

// migrate runs memstore migrate --json and returns its counts.
func migrate(t *testing.T, from, to, password string) map[memstore.RecordKind]int64 {
	t.Helper()
	code, stdout, stderr := run(t, "", "migrate", "--from", from, "--to", to, "--json")
	if code != 0 {
		t.Fatalf("migrate %s to %s: exit %d\n%s%s", databaseName(from), databaseName(to), code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, password) {
		t.Errorf("migrate shows the password:\n%s%s", stdout, stderr)
	}
	var counts map[memstore.RecordKind]int64
	if err := json.Unmarshal([]byte(stdout), &counts); err != nil {
		t.Fatalf("migrate --json printed %q: %v", stdout, err)
	}
	return counts
}

// TestMigrate copies a database from SQLite to PostgreSQL and back to
// another file, and finds each copy the same as the source, record for
// record and through the API, with the same credentials working; a
// database that is not empty is refused and left as it was.
func TestMigrate(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	const password = "pg-migr4te"
	srcFile, backFile := filepath.Join(dir, "source.db"), filepath.Join(dir, "back.db")
	pg := postgresDB(t, password)
	src := buildMigrationSource(t, srcFile)

	if got := migrate(t, srcFile, pg, password); fmt.Sprint(got) != fmt.Sprint(src.counts) {
		t.Errorf("migrate to PostgreSQL copied %v; want %v", got, src.counts)
	}
	// The copy is indexed for search before migrate returns.
	var queued, indexed int
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM search_queue), (SELECT count(*) FROM memory_search)`).Scan(&queued, &indexed); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())
	if want := src.counts[memstore.KindMemories]; queued != 0 || int64(indexed) != want {
		t.Errorf("after migrate to PostgreSQL, %d memories queued for search and %d indexed, want 0 and %d", queued, indexed, want)
	}
	records := dumpRecords(t, srcFile)
	if got := dumpRecords(t, pg); strings.Join(got, "\n") != strings.Join(records, "\n") {
		t.Errorf("PostgreSQL holds other records than the source:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(records, "\n"))
	}
	keysOf := func(db string) string {
		code, stdout, stderr := run(t, "", "keys", "ls", "--db", db, "--json")
		if code != 0 {
			t.Fatalf("keys ls: exit %d, %s", code, stderr)
		}
		return stdout
	}
	if got, want := keysOf(pg), keysOf(srcFile); got != want {
		t.Errorf("keys on PostgreSQL:\n%s\nwant\n%s", got, want)
	}

	want := apiView(t, startServer(t, "--db", srcFile).url, src.keys)
	pgServer := startServer(t, "--db", pg)
	if got := apiView(t, pgServer.url, src.keys); got != want {
		t.Errorf("the API on PostgreSQL shows\n%s\nwant\n%s", got, want)
	}
	checkCredentials(t, pgServer.url, src)

	// Back from PostgreSQL into a new file: the same again, with the
	// console session that checkCredentials signed in.
	back := maps.Clone(src.counts)
	back[memstore.KindSignIns]++
	if got := migrate(t, pg, backFile, password); fmt.Sprint(got) != fmt.Sprint(back) {
		t.Errorf("migrate to a file copied %v; want %v", got, back)
	}
	pgRecords := dumpRecords(t, pg) // the keys' last use moved on the server
	if got := dumpRecords(t, backFile); strings.Join(got, "\n") != strings.Join(pgRecords, "\n") {
		t.Errorf("the file holds other records than PostgreSQL:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(pgRecords, "\n"))
	}
	backServer := startServer(t, "--db", backFile)
	if got := apiView(t, backServer.url, src.keys); got != want {
		t.Errorf("the API on the file copied back shows\n%s\nwant\n%s", got, want)
	}
	checkCredentials(t, backServer.url, src)

	// A database that holds anything is refused, and left as it was.
	for _, target := range []string{pg, backFile} {
		before := dumpRecords(t, target)
		code, stdout, stderr := run(t, "", "migrate", "--from", srcFile, "--to", target)
		if code != 1 || !strings.Contains(stderr, "not empty") || !strings.Contains(stderr, "give an empty one") || strings.Contains(stdout+stderr, password) {
			t.Errorf("migrate into %s, not empty: exit %d, %q %q", databaseName(target), code, stdout, stderr)
		}
		if after := dumpRecords(t, target); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("a refused migrate changed %s", databaseName(target))
		}
	}

	// Each copy knows how many memories each store holds.
	for _, target := range []string{pg, backFile} {
		checkRoom(t, target, src, 4)
	}
}

// TestRestoreAllOrNothing: a restore that fails part way, because its
// source fails or because the target refuses a record, leaves the target
// empty, on either backend, and the target is usable afterwards.
func TestRestoreAllOrNothing(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	for _, name := range []string{filepath.Join(t.TempDir(), "target.db"), postgresDB(t, "unused")} {
		db, err := openDatabase(ctx, name, dbOptions{create: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		w := &memstore.Workspace{ID: "wrkspc_01jbcdefghjkmnpqrstvwxyz0", Name: "default", CreatedAt: time.Unix(1, 2)}
		broken := fmt.Errorf("the source broke")
		for _, fill := range []func(memstore.RecordSink) error{
			func(s memstore.RecordSink) error { // the source fails
				if err := s.Begin(memstore.KindWorkspaces, 1); err != nil {
					return err
				}
				if err := s.Workspace(w); err != nil {
					return err
				}
				return broken
			},
			func(s memstore.RecordSink) error { // the target refuses the second
				if err := s.Begin(memstore.KindWorkspaces, 2); err != nil {
					return err
				}
				if err := s.Workspace(w); err != nil {
					return err
				}
				if err := s.Workspace(w); err != nil {
					return err
				}
				return s.Begin(memstore.KindAPIKeys, 0)
			},
		} {
			err := db.Restore(ctx, fill)
			var bad *memstore.RecordError
			if err == nil || errors.As(err, &bad) {
				t.Fatalf("%s: a failed restore returned %v; want the source's or the target's error", databaseName(name), err)
			}
			var r recorder
			if err := db.Dump(ctx, &r); err != nil {
				t.Fatal(err)
			}
			for _, l := range r.lines {
				if !strings.HasSuffix(l, ` 0"`) {
					t.Errorf("%s: a failed restore left %s", databaseName(name), l)
				}
			}
		}
		if _, err := db.CreateWorkspace(ctx, "after"); err != nil {
			t.Errorf("%s: after a failed restore: %v", databaseName(name), err)
		}
	}
}

// TestMigrateWebhooks checks that migrate copies webhook endpoints, with
// their signing secrets and states, and their logs, pending deliveries
// included: on PostgreSQL, a server makes the retry that was pending in
// the file under the same webhook-id, signed with the same secret, as it
// signs new events, and the disabled endpoint stays disabled.
func TestMigrateWebhooks(t *testing.T) {
	clearEnv(t)
	const password = "pg-h00ks"
	srcFile := filepath.Join(t.TempDir(), "source.db")
	pg := postgresDB(t, password)
	var mu sync.Mutex
	status := http.StatusServiceUnavailable
	rcv := newHookReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return status })

	s1 := startServer(t, "--db", srcFile, "--webhook-allow-private", "--webhook-retry-min", "1s")
	a := s1.api(t)
	var live, off httpapi.WebhookEndpointJSON
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": rcv.URL, "enabled_events": []string{"memory_store.created"}}, &live)
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": rcv.URL + "/off", "enabled_events": []string{"memory_store.created"}}, &off)
	a.must(t, "POST", "/v1/organizations/webhooks/"+off.ID, map[string]any{"state": "disabled"}, &off)
	owedRcv := newHookReceiver(t, func(int) int { return http.StatusNoContent })
	var owed httpapi.WebhookEndpointJSON
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": owedRcv.URL, "enabled_events": []string{"memstore.memory.created"}}, &owed)
	store := a.createStore(t, "before")
	waitUntil(t, "a failed attempt, its retry pending", func() bool {
		l := deliveryLog(t, a, live.ID)
		return len(l) == 1 && l[0].Attempts == 1 && l[0].State == "pending"
	})
	s1.wait(t)
	owedChange(t, srcFile, store, owed.ID)

	got := migrate(t, srcFile, pg, password)
	if got[memstore.KindWebhooks] != 3 || got[memstore.KindDeliveries] != 1 || got[memstore.KindCursors] != 3 {
		t.Errorf("migrate copied %v; want 3 webhooks, 3 cursors and 1 delivery", got)
	}
	if src, dst := dumpRecords(t, srcFile), dumpRecords(t, pg); strings.Join(dst, "\n") != strings.Join(src, "\n") {
		t.Errorf("PostgreSQL holds other records than the source:\n%s\nwant\n%s", strings.Join(dst, "\n"), strings.Join(src, "\n"))
	}

	mu.Lock()
	status = http.StatusNoContent
	mu.Unlock()
	s2 := startServer(t, "--db", pg, "--webhook-allow-private")
	a = newAPI(s2.url, s1.key)
	waitUntil(t, "the pending delivery made on PostgreSQL", func() bool {
		l := deliveryLog(t, a, live.ID)
		return len(l) == 1 && l[0].State == "delivered"
	})
	a.createStore(t, "after")
	waitUntil(t, "a new event delivered", func() bool { return len(rcv.requests()) == 3 })
	reqs := rcv.requests()
	if id := reqs[0].header.Get("webhook-id"); reqs[1].header.Get("webhook-id") != id || reqs[2].header.Get("webhook-id") == id {
		t.Errorf("webhook-ids %q: want the retry under the first attempt's, the new event under its own", rcv.received())
	}
	for i, q := range reqs {
		if !q.signedBy(live.SigningSecret) || q.header.Get("webhook-signature") == "" {
			t.Errorf("request %d is not signed with the endpoint's secret: %s", i, q.header.Get("webhook-signature"))
		}
	}
	if l := deliveryLog(t, a, live.ID); l[len(l)-1].Attempts != 2 {
		t.Errorf("the log on PostgreSQL: %+v; want the first delivery's two attempts", l)
	}
	var got2 httpapi.WebhookEndpointJSON
	a.must(t, "GET", "/v1/organizations/webhooks/"+off.ID, nil, &got2)
	if got2.State != "disabled" {
		t.Errorf("the disabled endpoint on PostgreSQL: %+v", got2)
	}

	// Enabled again on PostgreSQL, the endpoint is sent the change it
	// was owed in the file, once.
	a.must(t, "POST", "/v1/organizations/webhooks/"+owed.ID, map[string]any{"state": "enabled"}, &got2)
	waitUntil(t, "the owed change delivered", func() bool { return len(owedRcv.requests()) == 1 })
	time.Sleep(300 * time.Millisecond)
	if n := len(owedRcv.requests()); n != 1 {
		t.Errorf("the owed endpoint got %d requests, want 1", n)
	}
}

// owedChange makes, in the database file path with no server running, a
// memory in store and then disables endpoint: the endpoint is owed the
// change, which no deliverer took.
func owedChange(t *testing.T, path, store, endpoint string) {
	t.Helper()
	inDefaultWorkspace(t, path, "apikey_test", func(ctx context.Context, db memstore.Database, c *memstore.Caller) {
		if _, err := memstore.NewCore(db).CreateMemory(ctx, c, store, memstore.MemoryCreate{Path: "/owed.md", Content: "x"}); err != nil {
			t.Fatal(err)
		}
		off := memstore.WebhookDisabled
		if _, err := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)).UpdateWebhook(ctx, c, endpoint, memstore.WebhookUpdate{State: &off}); err != nil {
			t.Fatal(err)
		}
	})
}

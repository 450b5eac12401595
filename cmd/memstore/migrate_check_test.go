package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
)

// emptyAfter checks that a refused migrate left target empty and usable.
func emptyAfter(t *testing.T, target string) {
	t.Helper()
	for _, l := range dumpRecords(t, target) {
		if !strings.HasPrefix(l, "begin ") || !strings.HasSuffix(l, ` 0"`) {
			t.Errorf("a refused migrate left %s in %s", l, databaseName(target))
		}
	}
	if code, _, stderr := run(t, "", "keys", "create", "--db", target); code != 0 {
		t.Errorf("%s after a refused migrate: exit %d: %s", databaseName(target), code, stderr)
	}
}

// TestMigrateChecksRecords: migrate refuses a source whose records the
// API would never have written (a crafted file or database), naming the
// record and what is wrong, and copies nothing of it: from a file to
// PostgreSQL and to a file, and from PostgreSQL to a file.
func TestMigrateChecksRecords(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	pg := postgresDB(t, "unused")
	for _, tc := range []struct {
		name string
		sql  string
		want []string // in the message, in order; regexps
	}{
		{"PathTraversal", `UPDATE memories SET path = '/../../etc/cron.d/x' WHERE path = '/api.md'`,
			[]string{`memory mem_\w+ at "/\.\./\.\./etc/cron\.d/x" in store memstore_\w+: path must not contain \. or \.\. segments \(path "/\.\./\.\./etc/cron\.d/x" has a "\.\." segment\)`}},
		{"VersionPath", `UPDATE versions SET path = '/ok/../../x' WHERE path = '/api.md'`,
			[]string{`version memver_\w+ at "/ok/\.\./\.\./x" in store memstore_\w+: path must not contain \. or \.\. segments \(path "/ok/\.\./\.\./x" has a "\.\." segment\)`}},
		{"ControlInPath", `UPDATE memories SET path = '/a' || char(27) || '[2J.md' WHERE path = '/api.md'`,
			[]string{`memory mem_\w+ at "/a\\x1b\[2J\.md"`, `control or format character U\+001B`}},
		{"ContentTampered", `UPDATE memories SET content = 'tampered' WHERE path = '/api.md'`,
			[]string{`memory mem_\w+ at /api\.md in store memstore_\w+: content_sha256 "[0-9a-f]{64}" is not the content's`}},
		{"StoreName", `UPDATE stores SET name = 'x' || char(27) || ']52;c;aGk=' || char(7) WHERE name = 'Reference'`,
			[]string{`store memstore_\w+: name must not contain control characters`}},
		{"UserName", `UPDATE users SET name = '../root' WHERE name = 'ann'`,
			[]string{`user user_\w+ \(\.\./root\): user name "\.\./root" may hold only`}},
		{"PasswordHash", `UPDATE users SET password_hash = '$argon2id$v=19$m=999999999,t=1,p=1$AAAA$AAAA' WHERE name = 'ann'`,
			[]string{`user user_\w+ \(ann\): the password hash is not an argon2id hash`}},
		{"MountPath", `UPDATE session_stores SET mount_path = '/etc/cron.d' WHERE instructions = 'keep the notes tidy'`,
			[]string{`session sesn_\w+: resources\[0\]\.mount_path "/etc/cron\.d" is not /mnt/memory/ and a name`}},
		{"ActorID", `UPDATE versions SET actor_id = 'apikey_../x' WHERE path = '/api.md'`,
			[]string{`version memver_\w+ at /api\.md in store memstore_\w+: created_by id "apikey_\.\./x" is not an ID`}},
		{"SessionEventType", `UPDATE session_events SET type = 'agent.message' WHERE seq = 1`,
			[]string{`session event sevt_\w+: the event's type "agent\.message" is not its body's "user\.message"`}},
		{"SecretHash", `UPDATE api_keys SET secret_sha256 = 'x' WHERE name = 'old'`,
			[]string{`API key apikey_\w+: the secret's hash is not a lowercase hex SHA-256`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "crafted.db")
			buildMigrationSource(t, src)
			db, err := sql.Open("sqlite", "file:"+src)
			if err != nil {
				t.Fatal(err)
			}
			res, err := db.ExecContext(ctx, tc.sql)
			if err != nil {
				t.Fatalf("craft: %v", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("craft: %d rows changed", n)
			}
			db.Close()
			for _, target := range []string{pg, filepath.Join(dir, "target.db")} {
				code, stdout, stderr := run(t, "", "migrate", "--from", src, "--to", target)
				msg := stdout + stderr
				if code != 1 || !strings.Contains(msg, "crafted.db holds a record that memstore refuses: ") ||
					!strings.Contains(msg, "Nothing was copied: "+databaseName(target)+" is left as it was, empty") {
					t.Errorf("migrate to %s: exit %d, %q; want a refusal", databaseName(target), code, msg)
				}
				for _, w := range tc.want {
					if !regexp.MustCompile(w).MatchString(msg) {
						t.Errorf("migrate to %s: %q does not say %s", databaseName(target), msg, w)
					}
				}
				emptyAfter(t, target)
				// The next case needs an empty PostgreSQL again.
				if target == pg {
					emptyPostgres(t, pg)
				}
			}
		})
	}

	// A crafted PostgreSQL source is refused as well.
	src := filepath.Join(t.TempDir(), "source.db")
	buildMigrationSource(t, src)
	if code, _, stderr := run(t, "", "migrate", "--from", src, "--to", pg); code != 0 {
		t.Fatalf("migrate to PostgreSQL: exit %d: %s", code, stderr)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE memories SET path = '/../../etc/cron.d/x' WHERE path = '/api.md'`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	target := filepath.Join(t.TempDir(), "target.db")
	code, _, stderr := run(t, "", "migrate", "--from", pg, "--to", target)
	if code != 1 || !regexp.MustCompile(`holds a record that memstore refuses: memory mem_\w+ at "/\.\./\.\./etc/cron\.d/x" in store memstore_\w+: path must not contain \. or \.\. segments \(path "/\.\./\.\./etc/cron\.d/x" has a "\.\." segment\)`).MatchString(stderr) {
		t.Errorf("migrate from a crafted PostgreSQL: exit %d, %q", code, stderr)
	}
	emptyAfter(t, target)
}

// emptyPostgres removes every row of the database at dsn, as a fresh one.
func emptyPostgres(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Every table refers to workspaces, directly or not.
	if _, err := conn.Exec(ctx, `TRUNCATE workspaces CASCADE`); err != nil {
		t.Fatal(err)
	}
}

// TestCheckRecordsOrder: a dump's kinds come in the order of
// RecordKinds, each record within its kind's announcement.
func TestCheckRecordsOrder(t *testing.T) {
	var r recorder
	sink := memstore.CheckRecords(&r)
	w := &memstore.Workspace{ID: "wrkspc_01jbcdefghjkmnpqrstvwxyz0", Name: "default"}
	if err := sink.Workspace(w); err == nil || !strings.Contains(err.Error(), "outside the workspaces") {
		t.Errorf("a workspace before its kind: %v", err)
	}
	if err := sink.Begin(memstore.KindStores, 0); err != nil {
		t.Fatal(err)
	}
	if err := sink.Begin(memstore.KindWorkspaces, 1); err == nil || !strings.Contains(err.Error(), "after the stores") {
		t.Errorf("workspaces after stores: %v", err)
	}
	if err := sink.Begin("secrets", 1); err == nil {
		t.Errorf("an unknown kind was taken")
	}
	if len(r.lines) != 1 {
		t.Errorf("the sink saw %q", r.lines)
	}
}

// TestMigrateWhileWritten copies a database while a server keeps writing
// to it, from a file and from PostgreSQL: without --snapshot the copy is
// refused, saying why, and the target stays empty; with --snapshot the
// target holds the source as it stood at one moment, every memory with
// its version and its event, and the command says so.
func TestMigrateWhileWritten(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "source.db")
	src := buildMigrationSource(t, file)
	seed(t, file, src.notesStore, 300)
	pg := postgresDB(t, "unused")
	if code, _, stderr := run(t, "", "migrate", "--from", file, "--to", pg); code != 0 {
		t.Fatalf("migrate to PostgreSQL: exit %d: %s", code, stderr)
	}
	for i, source := range []string{file, pg} {
		t.Run(map[bool]string{true: "file", false: "postgres"}[i == 0], func(t *testing.T) {
			srv := startServer(t, "--db", source, "--max-memories-per-store", "0")
			a := newAPI(srv.url, src.keys[0])
			stop, written := make(chan struct{}), make(chan int)
			go func() {
				n := 0
				defer func() { written <- n }()
				for {
					select {
					case <-stop:
						return
					default:
					}
					status, body, err := a.call("POST", "/v1/memory_stores/"+src.notesStore+"/memories",
						map[string]string{"path": fmt.Sprintf("/w/%d.md", n), "content": "written during the copy"}, nil)
					if err != nil || status != 200 {
						t.Errorf("a write during the copy: %d %s %v", status, body, err)
						return
					}
					n++
				}
			}()
			// Wait for the first writes, so that the copies overlap them.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				var page struct{ Data []any }
				a.must(t, "GET", "/v1/memory_stores/"+src.notesStore+"/memories?path_prefix=/w/&limit=5", nil, &page)
				if len(page.Data) >= 3 || time.Now().After(deadline) {
					break
				}
			}

			refused := filepath.Join(t.TempDir(), "refused.db")
			code, _, stderr := run(t, "", "migrate", "--from", source, "--to", refused)
			if want := databaseName(source) + " was written to while it was copied (is a server still running on it?). Nothing was copied: " +
				databaseName(refused) + " is left as it was, empty. Stop every server on"; code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--snapshot") {
				t.Errorf("migrate while written: exit %d, %q; want a refusal saying %q", code, stderr, want)
			}
			emptyAfter(t, refused)

			snap := filepath.Join(t.TempDir(), "snapshot.db")
			code, _, stderr = run(t, "", "migrate", "--from", source, "--to", snap, "--snapshot")
			close(stop)
			n := <-written
			if code != 0 || !regexp.MustCompile(`copied \S+ as it stood at \S+: what was written to it since is not in \S+snapshot\.db`).MatchString(stderr) {
				t.Fatalf("migrate --snapshot: exit %d, %q", code, stderr)
			}
			checkSnapshot(t, snap, src.notesStore, n)
		})
	}
}

// seed adds n memories to a store of the database file at path.
func seed(t *testing.T, path, store string, n int) {
	t.Helper()
	inDefaultWorkspace(t, path, "apikey_seed", func(ctx context.Context, db memstore.Database, c *memstore.Caller) {
		co := memstore.NewCore(db)
		for i := range n {
			if _, err := co.CreateMemory(ctx, c, store, memstore.MemoryCreate{Path: fmt.Sprintf("/seed/%d.md", i), Content: strings.Repeat("seed ", 400)}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// inDefaultWorkspace opens the database file at path, with no server
// running, and calls f with it and the caller of an API key keyID of its
// default workspace; the database is closed when f returns.
func inDefaultWorkspace(t *testing.T, path, keyID string, f func(ctx context.Context, db memstore.Database, c *memstore.Caller)) {
	t.Helper()
	ctx := context.Background()
	db, err := openDatabase(ctx, path, dbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, err := db.Workspace(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	f(ctx, db, &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: keyID}})
}

// checkSnapshot checks that the copy at path holds the writes to /w/ of
// store as they stood at one moment: /w/0.md to /w/k-1.md for some k of
// at most written, each with its version and its memory.created event,
// and nothing of a later write.
func checkSnapshot(t *testing.T, path, store string, written int) {
	t.Helper()
	memories, versions, events := map[string]bool{}, map[string]bool{}, 0
	for _, l := range dumpRecords(t, path) {
		kind, js, _ := strings.Cut(l, " ")
		switch kind {
		case "memory":
			var m memstore.Memory
			json.Unmarshal([]byte(js), &m)
			if strings.HasPrefix(m.Path, "/w/") {
				memories[m.Path] = true
			}
		case "version":
			var v memstore.Version
			json.Unmarshal([]byte(js), &v)
			if strings.HasPrefix(v.Path, "/w/") {
				versions[v.Path] = true
			}
		case "event":
			var e memstore.Event
			json.Unmarshal([]byte(js), &e)
			if e.StoreID == store && e.Type == memstore.EventMemoryCreated {
				events++
			}
		}
	}
	k := len(memories)
	if k == 0 || k > written {
		t.Errorf("the snapshot holds %d of the %d memories written during the copy; want some", k, written)
	}
	for i := range k {
		p := fmt.Sprintf("/w/%d.md", i)
		if !memories[p] || !versions[p] {
			t.Errorf("the snapshot holds %d memories written during the copy, but not %s (memory %v, version %v)", k, p, memories[p], versions[p])
		}
	}
	// The store's events: the source's 3 creations and 300 seeded, and one
	// for each memory written.
	if len(versions) != k || events != 3+300+k {
		t.Errorf("the snapshot holds %d memories written during the copy, %d versions of them and %d creation events; want %d, %d", k, len(versions), events, k, 3+300+k)
	}
}

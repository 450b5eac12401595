package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// secretToken is the text redacted in the erasure tests: lower case, so
// that the indexes hold it as written, and a word the stemmer leaves
// alone. The search index may store a word after the letters it shares
// with the word before it, so the files are searched for it without its
// first three (secretNeedle).
const (
	secretToken  = "qjzx7kvb3wtrmq"
	secretNeedle = "x7kvb3wtrmq"
)

// holding lists the files of dir that hold secretNeedle, whatever they
// are: the database, the index, SQLite's -wal and -shm files of both, and
// anything else.
func holding(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.Contains(b, []byte(secretNeedle)) {
			names = append(names, e.Name())
		}
	}
	return names
}

// mainFiles keeps the names of the database's own files: the database
// and its -wal and -shm, not the search index's.
func mainFiles(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, filepath.Base(sqlite.IndexPath("m.db"))) {
			out = append(out, n)
		}
	}
	return out
}

// Stages of erasureScenario at which a test looks at the files.
const (
	stageRedacted = "redacted" // RedactVersion (or DeleteStore) has returned
	stagePurged   = "purged"   // and WaitSearchIndex too
)

// What erasureScenario erases.
const (
	eraseRedact        = "redact"                // a version that the memory no longer has
	eraseStore         = "delete store"          // the store that holds it
	eraseArchivedStore = "delete archived store" // the same, archived first
)

// erasureScenario writes secretToken into a memory of the database at
// path, indexes it, replaces it, and erases it as how says: redacts the
// version that held it, or deletes its store (which still has another
// memory whose current text holds secretToken, and the one whose former
// version does). It calls at(stage) when RedactVersion or DeleteStore has
// returned and when the purge of the indexes has finished. It returns the
// database, still open.
func erasureScenario(tb testing.TB, path, how string, at func(stage string)) *sqlite.DB {
	tb.Helper()
	ctx := context.Background()
	db := mustOpenAt(tb, path, sqlite.Options{})
	s := mustStore(tb, db)
	// Another store, which stays, shares the pages of every index and
	// table with the one erased.
	kept := sqlitetest.Store(tb, db, ws, memstore.StoreCreate{Name: "kept"})
	for i := range 50 { // several pages in every index
		mustCreate(tb, db, s.ID, fmt.Sprintf("/filler/%d.md", i), strings.Repeat(fmt.Sprintf("filler%d words ", i), 40))
		mustCreate(tb, db, kept.ID, fmt.Sprintf("/kept/%d.md", i), strings.Repeat(fmt.Sprintf("kept%d words ", i), 40))
	}
	m := mustCreate(tb, db, s.ID, "/notes/code.md", "the door code is "+secretToken+" for now")
	if how != eraseRedact {
		mustCreate(tb, db, s.ID, "/notes/spare.md", "the spare code is "+secretToken+" too")
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		tb.Fatal(err)
	}
	if !found(tb, db, s.ID, secretToken, m.Path) {
		tb.Fatal("the token is not found to begin with: the check proves nothing")
	}
	dir := filepath.Dir(path)
	if got := holding(tb, dir); len(mainFiles(got)) == 0 || len(mainFiles(got)) == len(got) {
		tb.Fatalf("the token is in %v to begin with, want files of both the database and the index: the check proves nothing", got)
	}
	if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("the door code is changed")}, alice); err != nil {
		tb.Fatal(err)
	}
	switch how {
	case eraseRedact:
		if _, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, admin); err != nil {
			tb.Fatal(err)
		}
	case eraseStore, eraseArchivedStore:
		if how == eraseArchivedStore {
			if _, err := sqlitetest.Writer(db).ArchiveStore(ctx, ws, s.ID, alice); err != nil {
				tb.Fatal(err)
			}
		}
		if err := db.DeleteStore(ctx, ws, s.ID); err != nil {
			tb.Fatal(err)
		}
	default:
		tb.Fatalf("no erasure %q", how)
	}
	at(stageRedacted)
	if err := db.WaitSearchIndex(ctx); err != nil {
		tb.Fatal(err)
	}
	at(stagePurged)
	if !found(tb, db, kept.ID, "kept7", "/kept/7.md") {
		tb.Error("the store that stays is no longer found by search")
	}
	return db
}

// TestRedactionErasesEveryFile: when RedactVersion returns, the redacted
// text is in no file of the database (the database, its -wal and -shm);
// when the purge of the search indexes it asks for has finished, in no
// file of the directory at all. And so it stays after the database is
// closed.
func TestRedactionErasesEveryFile(t *testing.T) { testErasesEveryFile(t, eraseRedact) }

// TestStoreDeletionErasesEveryFile: the same for the content of a deleted
// store, live or archived, when DeleteStore returns and when the purge of
// the search indexes it asks for has finished.
func TestStoreDeletionErasesEveryFile(t *testing.T) {
	for _, how := range []string{eraseStore, eraseArchivedStore} {
		t.Run(how, func(t *testing.T) { testErasesEveryFile(t, how) })
	}
}

func testErasesEveryFile(t *testing.T, how string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	db := erasureScenario(t, path, how, func(stage string) {
		got := holding(t, dir)
		if stage == stageRedacted {
			got = mainFiles(got)
		}
		if len(got) > 0 {
			t.Errorf("%s: the erased text is still in %v", stage, got)
		}
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := holding(t, dir); len(got) > 0 {
		t.Errorf("closed: the erased text is still in %v", got)
	}
}

// TestRedactionOfCurrentVersion: redacting the current version of a live
// memory leaves the memory, and so its text, as it is; once the memory is
// changed or deleted, the text leaves every file when the purge it asks
// for has finished.
func TestRedactionOfCurrentVersion(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"changed", "deleted"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			db := mustOpenAt(t, filepath.Join(dir, "m.db"), sqlite.Options{})
			s := mustStore(t, db)
			for i := range 50 {
				mustCreate(t, db, s.ID, fmt.Sprintf("/filler/%d.md", i), strings.Repeat(fmt.Sprintf("filler%d words ", i), 40))
			}
			m := mustCreate(t, db, s.ID, "/notes/code.md", "the door code is "+secretToken+" for now")
			if err := db.WaitSearchIndex(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, admin); err != nil {
				t.Fatal(err)
			}
			if !found(t, db, s.ID, secretToken, m.Path) {
				t.Fatal("the live memory no longer has the text of its redacted current version")
			}
			if len(holding(t, dir)) == 0 {
				t.Fatal("the live memory's text is in no file: the check proves nothing")
			}
			var err error
			if how == "changed" {
				_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("the door code is changed")}, alice)
			} else {
				err = sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := db.WaitSearchIndex(ctx); err != nil {
				t.Fatal(err)
			}
			if got := holding(t, dir); len(got) > 0 {
				t.Errorf("the text of the redacted version is still in %v", got)
			}
		})
	}
}

// TestRedactionWhileLogBusy: a redaction whose checkpoint cannot empty
// the log, because a reader of another connection keeps reading from it,
// says so with a retryable error; redacting again once the reader is done
// finishes the erasure.
func TestRedactionWhileLogBusy(t *testing.T) {
	ctx := context.Background()
	db, dir, path := openWithShortBusyTimeout(t)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/notes/code.md", "the door code is "+secretToken+" for now")
	if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("the door code is changed")}, alice); err != nil {
		t.Fatal(err)
	}
	reader := holdLog(t, path, "memories")
	_, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, admin)
	if e := wantCode(t, err, memstore.EConflict); !e.Retry || !strings.Contains(e.Message, "redact it again") {
		t.Errorf("redaction while the log is in use: %+v, want a retryable error that says to redact again", e)
	}
	if err := reader.Rollback(); err != nil {
		t.Fatal(err)
	}
	if v, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, admin); err != nil || !v.Redacted() {
		t.Fatalf("redacting again: %v %+v", err, v)
	}
	if got := mainFiles(holding(t, dir)); len(got) > 0 {
		t.Errorf("redacted again: the redacted text is still in %v", got)
	}
}

// helperEnv names, in the environment of a child process running this
// test binary, the stage after which TestErasureHelperProcess waits to be
// killed, and the database it works on.
const helperEnv, helperDBEnv, helperHowEnv = "MEMSTORE_ERASURE_HELPER", "MEMSTORE_ERASURE_DB", "MEMSTORE_ERASURE_HOW"

// TestErasureHelperProcess is not a test: run by
// testErasesEveryFileAfterKill in a child process, it runs
// erasureScenario, says "ready" at the stage it was given and waits to be
// killed.
func TestErasureHelperProcess(t *testing.T) {
	stop := os.Getenv(helperEnv)
	if stop == "" {
		t.Skip("run by the tests of erasure after a kill")
	}
	erasureScenario(t, os.Getenv(helperDBEnv), os.Getenv(helperHowEnv), func(stage string) {
		if stage == stop {
			fmt.Println("ready")
			select {} // until killed
		}
	})
}

// TestRedactionErasesEveryFileAfterKill: the same as
// TestRedactionErasesEveryFile, for a process killed with SIGKILL just
// after each stage, which leaves every file as it was: the redacted text
// is in none that the stage promises. A process killed before the purge
// finished leaves the request in the database: the next one to open it
// finishes the purge.
func TestRedactionErasesEveryFileAfterKill(t *testing.T) {
	testErasesEveryFileAfterKill(t, eraseRedact)
}

// TestStoreDeletionErasesEveryFileAfterKill: the same for a deleted
// store.
func TestStoreDeletionErasesEveryFileAfterKill(t *testing.T) {
	testErasesEveryFileAfterKill(t, eraseStore)
}

func testErasesEveryFileAfterKill(t *testing.T, how string) {
	for _, stage := range []string{stageRedacted, stagePurged} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "m.db")
			cmd := exec.Command(os.Args[0], "-test.run=^TestErasureHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+stage, helperDBEnv+"="+path, helperHowEnv+"="+how)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ready := make(chan bool, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == "ready" {
						ready <- true
						return
					}
				}
				ready <- false
			}()
			select {
			case ok := <-ready:
				if !ok {
					cmd.Wait()
					t.Fatalf("the helper process ended before the stage:\n%s", stderr.String())
				}
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the helper process did not reach the stage within 60s:\n%s", stderr.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			got := holding(t, dir)
			if stage == stageRedacted {
				got = mainFiles(got)
			}
			if len(got) > 0 {
				t.Errorf("killed after the stage: the erased text is still in %v", got)
			}
			if stage == stagePurged {
				return
			}
			db := mustOpenAt(t, path, sqlite.Options{})
			if err := db.WaitSearchIndex(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := holding(t, dir); len(got) > 0 {
				t.Errorf("reopened and purged: the erased text is still in %v", got)
			}
		})
	}
}

// TestSessionDeletionErasesEveryFile: what a deleted session kept (its
// title, metadata, fields, its stores' instructions and its transcript)
// is in no file of the database when DeleteSession returns.
func TestSessionDeletionErasesEveryFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpenAt(t, filepath.Join(dir, "m.db"), sqlite.Options{})
	st := mustStore(t, db)
	core := memstore.NewCore(db)
	for i := range 50 {
		if _, _, _, err := core.CreateSession(ctx, asAlice, memstore.SessionCreate{Title: fmt.Sprintf("filler %d", i), Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}}); err != nil {
			t.Fatal(err)
		}
	}
	s, _, _, err := core.CreateSession(ctx, asAlice, memstore.SessionCreate{
		Title:    "title " + secretToken,
		Metadata: map[string]string{"note": "metadata " + secretToken},
		Fields:   map[string]json.RawMessage{"agent": json.RawMessage(`{"system":"field ` + secretToken + `"}`)},
		Stores:   []memstore.AttachmentCreate{{StoreID: st.ID, Instructions: "instructions " + secretToken}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.AppendSessionTurn(ctx, asAlice, s.ID, memstore.Turn{Messages: []memstore.TurnMessage{
		{Role: "user", Content: json.RawMessage(`"transcript ` + secretToken + `"`)},
		{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"t1","name":"memory_read","input":{"path":"/` + secretToken + `"}}]`)},
	}}); err != nil {
		t.Fatal(err)
	}
	if len(holding(t, dir)) == 0 {
		t.Fatal("the session's text is in no file: the check proves nothing")
	}
	if err := core.DeleteSession(ctx, asAlice, s.ID); err != nil {
		t.Fatal(err)
	}
	if got := holding(t, dir); len(got) > 0 {
		t.Errorf("the deleted session's text is still in %v", got)
	}
}

// openWithShortBusyTimeout opens a database in a fresh directory, with a
// short busy timeout so that a checkpoint blocked by a reader gives up soon.
func openWithShortBusyTimeout(t *testing.T) (db *sqlite.DB, dir, path string) {
	timeout := *sqlite.BusyTimeout
	*sqlite.BusyTimeout = 200 * time.Millisecond
	t.Cleanup(func() { *sqlite.BusyTimeout = timeout })
	dir = t.TempDir()
	path = filepath.Join(dir, "m.db")
	return mustOpenAt(t, path, sqlite.Options{}), dir, path
}

// holdLog starts a read of table on another connection of the database at
// path, which keeps its log from being emptied until the transaction ends.
func holdLog(t *testing.T, path, table string) *sql.Tx {
	t.Helper()
	reader, err := rawDB(t, path).BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return reader
}

// TestDeletionWhileLogBusy: a deletion whose checkpoint cannot empty the
// log, because a reader of another connection keeps reading from it,
// stands; the log is emptied in the background once the reader is done.
func TestDeletionWhileLogBusy(t *testing.T) {
	ctx := context.Background()
	db, dir, path := openWithShortBusyTimeout(t)
	st := mustStore(t, db)
	core := memstore.NewCore(db)
	s, _, _, err := core.CreateSession(ctx, asAlice, memstore.SessionCreate{Title: "title " + secretToken, Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	reader := holdLog(t, path, "sessions")
	if err := core.DeleteSession(ctx, asAlice, s.ID); err != nil {
		t.Fatalf("deletion while the log is in use: %v", err)
	}
	if len(mainFiles(holding(t, dir))) == 0 {
		t.Fatal("the deleted session's text left the files while the log was in use: the check proves nothing")
	}
	if err := reader.Rollback(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := mainFiles(holding(t, dir))
		if len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after the reader was done, the deleted session's text is still in %v", got)
		}
	}
}

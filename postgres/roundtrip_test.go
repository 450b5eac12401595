package postgres_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// A wire sits between the clients and the server and records the round
// trips of the frontend protocol: each simple query ('Q') and each Sync
// ('S'), which the client sends and then waits for the server's
// ReadyForQuery, ends one. A trip is the SQL it ran, whatever the driver
// does: the statements it parsed or bound since the last one.
type wire struct {
	target string
	ln     net.Listener
	mu     sync.Mutex
	trips  [][]string
}

func newWire(t *testing.T, dbURL string) (w *wire, proxied string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w = &wire{target: u.Host, ln: ln}
	t.Cleanup(func() { ln.Close() })
	go w.accept()
	u.Host = ln.Addr().String()
	return w, u.String()
}

// openWired opens the database at dbURL through a new wire, with the
// search indexer stopped: its rounds, which a write wakes, would go over
// the wire too, and into the count of a write after it. With oneConn,
// the pool has one connection, so that the statements a warm-up
// prepares are prepared for the writes counted.
func openWired(t *testing.T, dbURL string, oneConn bool) (*wire, *postgres.DB) {
	t.Helper()
	w, proxied := newWire(t, dbURL)
	if oneConn {
		u, _ := url.Parse(proxied)
		q := u.Query()
		q.Set("pool_max_conns", "1")
		u.RawQuery = q.Encode()
		proxied = u.String()
	}
	db := mustOpenAt(t, proxied, postgres.Options{})
	db.StopIndexer()
	return w, db
}

func (w *wire) accept() {
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", w.target)
		if err != nil {
			c.Close()
			continue
		}
		go func() {
			io.Copy(c, s)
			c.Close()
		}()
		go func() {
			w.frontend(c, s)
			s.Close()
		}()
	}
}

// frontend reads one client's messages from r and passes each on to the
// server, whole, once it is recorded: a trip is in the record before the
// server can answer it, and so before the client goes on.
func (w *wire) frontend(r io.Reader, server io.Writer) {
	var head [4]byte
	// read reads a message's length and body after the type byte(s)
	// already in msg, and returns the whole message and its body.
	read := func(msg []byte) ([]byte, []byte, bool) {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, nil, false
		}
		body := make([]byte, binary.BigEndian.Uint32(head[:])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, false
		}
		return append(append(msg, head[:]...), body...), body, true
	}
	// The startup message, after any requests for encryption, which the
	// server declines with one byte.
	for {
		msg, body, ok := read(nil)
		if !ok {
			return
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body[:4]); code != 80877103 && code != 80877104 {
			break
		}
	}
	stmts := map[string]string{} // this connection's prepared statements
	var trip []string
	for {
		var typ [1]byte
		if _, err := io.ReadFull(r, typ[:]); err != nil {
			return
		}
		msg, body, ok := read(typ[:])
		if !ok {
			return
		}
		fields := bytes.Split(body, []byte{0})
		switch typ[0] {
		case 'P': // Parse: name, query
			stmts[string(fields[0])] = string(fields[1])
			if len(fields[0]) > 0 {
				trip = append(trip, "PREPARE "+string(fields[1]))
			}
		case 'B': // Bind: portal, statement
			trip = append(trip, stmts[string(fields[1])])
		case 'Q':
			trip = append(trip, string(fields[0]))
			fallthrough
		case 'S':
			w.mu.Lock()
			w.trips = append(w.trips, trip)
			w.mu.Unlock()
			trip = nil
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// count runs f and returns the round trips it made, those of the notices
// to other processes (which follow a write, outside it) left out, and the
// pool's ping of a connection idle for a second before it hands it out.
func (w *wire) count(f func()) [][]string {
	w.mu.Lock()
	from := len(w.trips)
	w.mu.Unlock()
	f()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]string
	for _, trip := range w.trips[from:] {
		if len(trip) == 1 && (strings.Contains(trip[0], "pg_notify") || trip[0] == "-- ping") {
			continue
		}
		out = append(out, trip)
	}
	return out
}

// TestMemoryWriteRoundTrips counts the round trips between memstore and
// PostgreSQL of each kind of write of a memory, once the connection has
// prepared its statements: a write in a transaction holds its store's
// lock for all but the first of them, so they bound the writes of a
// store. A create is one statement (memory.go, "Writes in one round
// trip"); an update or a delete is a transaction of two, its BEGIN sent
// with the lock and the memory's read, its write with the COMMIT; a
// rename reads the new path's overlaps in between; an upsert over a
// memory tries the create's statement first.
func TestMemoryWriteRoundTrips(t *testing.T) {
	w, db := openWired(t, pgtest.DB(t, migrate), true)
	co := memstore.NewCore(db)
	c := &memstore.Caller{WorkspaceID: "wrkspc_trips", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_trips"}}
	ctx := context.Background()
	st := mustCreateStore(t, co, c)
	create := func(path string) *memstore.Memory {
		m, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Each kind's setup makes what its write needs (not counted) and
	// returns the write.
	kinds := []struct {
		name  string
		want  int
		setup func(i int) func() error
	}{
		{"create", 1, func(i int) func() error {
			return func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/create/%d.md", i), Content: "hello"})
				return err
			}
		}},
		{"create if not exists", 1, func(i int) func() error {
			return func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/ine/%d.md", i), Content: "hello", IfNotExists: true})
				return err
			}
		}},
		{"upsert of a new path", 1, func(i int) func() error {
			return func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/upsert-new/%d.md", i), Content: "hello", Upsert: true})
				return err
			}
		}},
		{"upsert over a memory", 3, func(i int) func() error {
			path := fmt.Sprintf("/upsert/%d.md", i)
			create(path)
			return func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "changed", Upsert: true})
				return err
			}
		}},
		{"update content", 2, func(i int) func() error {
			m := create(fmt.Sprintf("/update/%d.md", i))
			return func() error {
				_, err := co.UpdateMemory(ctx, c, st.ID, m.ID, memstore.MemoryUpdate{Content: ptr("changed"), IfSHA256: m.ContentSHA256})
				return err
			}
		}},
		{"rename", 3, func(i int) func() error {
			m := create(fmt.Sprintf("/rename/%d.md", i))
			return func() error {
				_, err := co.UpdateMemory(ctx, c, st.ID, m.ID, memstore.MemoryUpdate{Path: ptr(fmt.Sprintf("/renamed/%d.md", i))})
				return err
			}
		}},
		{"update refused by its precondition", 2, func(i int) func() error {
			m := create(fmt.Sprintf("/refused/%d.md", i))
			return func() error {
				_, err := co.UpdateMemory(ctx, c, st.ID, m.ID, memstore.MemoryUpdate{Content: ptr("changed"), IfSHA256: memstore.ContentSHA256("other")})
				if memstore.ErrorCode(err) != memstore.EPreconditionFailed {
					return fmt.Errorf("update: %v, want its precondition's failure", err)
				}
				return nil
			}
		}},
		{"delete", 2, func(i int) func() error {
			m := create(fmt.Sprintf("/delete/%d.md", i))
			return func() error { return co.DeleteMemory(ctx, c, st.ID, m.ID, m.ContentSHA256) }
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			if err := k.setup(0)(); err != nil { // prepares the statements
				t.Fatal(err)
			}
			write := k.setup(1)
			trips := w.count(func() {
				if err := write(); err != nil {
					t.Fatal(err)
				}
			})
			for i, trip := range trips {
				t.Logf("trip %d: %q", i+1, trip)
			}
			if len(trips) != k.want {
				t.Errorf("%s took %d round trips, want %d", k.name, len(trips), k.want)
			}
		})
	}
}

// TestMemoryCreateAtItsQuota holds memory_create's check of a store's
// count to the quota's rule: every create the rule allows is made by the
// statement, in one round trip, up to the last place under the cap; the
// next one, which the statement declines, gets the rule's own refusal
// from a transaction, the same as without the statement, and changes
// nothing. A deletion makes room for one more, in one round trip again.
func TestMemoryCreateAtItsQuota(t *testing.T) {
	const limit = 3
	w, db := openWired(t, pgtest.DB(t, migrate), true)
	co := memstore.NewCore(db, memstore.MaxMemoriesPerStore(limit))
	c := &memstore.Caller{WorkspaceID: "wrkspc_quota", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_quota"}}
	ctx := context.Background()
	create := func(st *memstore.Store, path string) (m *memstore.Memory, trips [][]string, err error) {
		trips = w.count(func() {
			m, err = co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "hello"})
		})
		return m, trips, err
	}
	// A store of its own prepares the statements of every kind of
	// create, the refused one included.
	warm := mustCreateStore(t, co, c)
	for i := range limit {
		if _, _, err := create(warm, fmt.Sprintf("/warm/%d.md", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := create(warm, "/warm/over.md"); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Fatalf("create over the cap: %v, want the quota's refusal", err)
	}
	st := mustCreateStore(t, co, c)
	var made []*memstore.Memory
	for i := range limit {
		m, trips, err := create(st, fmt.Sprintf("/m%d.md", i))
		if err != nil {
			t.Fatalf("create %d of %d: %v", i+1, limit, err)
		}
		made = append(made, m)
		if len(trips) != 1 || !strings.Contains(trips[0][0], "memory_create") {
			t.Errorf("create %d of %d took %d round trips (%q), want 1, memory_create's", i+1, limit, len(trips), trips)
		}
	}
	_, trips, err := create(st, "/over.md")
	want := memstore.ErrMemoryLimit(st.ID, limit)
	var e *memstore.Error
	if !errors.As(err, &e) || *e != *want {
		t.Fatalf("create over the cap: %v, want %v", err, want)
	}
	if len(trips) < 2 || !strings.Contains(trips[0][0], "memory_create") {
		t.Errorf("the create over the cap took round trips %q, want memory_create's, then the transaction's", trips)
	}
	got, err := co.Store(ctx, c, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryCount != limit {
		t.Errorf("the store counts %d memories after the refusal, want %d", got.MemoryCount, limit)
	}
	if err := co.DeleteMemory(ctx, c, st.ID, made[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, trips, err := create(st, "/again.md"); err != nil || len(trips) != 1 {
		t.Errorf("create after a deletion: %v in %d round trips, want success in 1", err, len(trips))
	}
}

// TestStoreWritesTogetherRoundTrips counts the round trips of a batch of
// a store's writes (batch.go) that met in the process while another
// held the store's lock: two, whatever their number, the reads of every
// write made with BEGIN and the lock, and every write sent with the
// COMMIT, when no write reads what one before it changed.
func TestStoreWritesTogetherRoundTrips(t *testing.T) {
	dbURL := pgtest.DB(t, migrate)
	w, db := openWired(t, dbURL, false)
	co := memstore.NewCore(db)
	c := &memstore.Caller{WorkspaceID: "wrkspc_batchtrips", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_batchtrips"}}
	ctx := context.Background()
	st := mustCreateStore(t, co, c)
	// batch makes a lone write wait for the store's lock, held elsewhere,
	// while two creates, two updates and two deletes queue behind it, and
	// returns the round trips of them all once the lock is let go.
	batch := func(round int) [][]string {
		var targets []*memstore.Memory
		for i := range 4 {
			m, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d/target-%d.md", round, i), Content: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			targets = append(targets, m)
		}
		writes := []func() error{
			func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d/new-a.md", round), Content: "a"})
				return err
			},
			func() error {
				_, err := co.UpdateMemory(ctx, c, st.ID, targets[0].ID, memstore.MemoryUpdate{Content: ptr("changed")})
				return err
			},
			func() error { return co.DeleteMemory(ctx, c, st.ID, targets[1].ID, targets[1].ContentSHA256) },
			func() error {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d/new-b.md", round), Content: "b"})
				return err
			},
			func() error {
				_, err := co.UpdateMemory(ctx, c, st.ID, targets[2].ID, memstore.MemoryUpdate{Content: ptr("changed"), IfSHA256: targets[2].ContentSHA256})
				return err
			},
			func() error { return co.DeleteMemory(ctx, c, st.ID, targets[3].ID, "") },
		}
		h := holdLock(t, dbURL, `SELECT FROM stores WHERE id = $1 FOR NO KEY UPDATE`, st.ID)
		errs := make(chan error, len(writes)+1)
		return w.count(func() {
			go func() {
				_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d/lone.md", round), Content: "lone"})
				errs <- err
			}()
			waitingOne(t, h, "the store's lock")
			for i, write := range writes {
				go func() { errs <- write() }()
				for deadline := time.Now().Add(20 * time.Second); db.QueuedWrites(c.WorkspaceID, st.ID) < i+1; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%d writes queued, want %d", db.QueuedWrites(c.WorkspaceID, st.ID), i+1)
					}
				}
			}
			h.release(t)
			for range len(writes) + 1 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
	batch(0) // prepares the statements
	// A connection of the pool that has not run them yet prepares them
	// first, a trip each time, once; and the pool pings a connection idle
	// for a second before handing it out.
	var trips [][]string
	for i, trip := range batch(1) {
		t.Logf("trip %d: %q", i+1, trip)
		if !slices.ContainsFunc(trip, func(s string) bool { return !strings.HasPrefix(s, "PREPARE ") && s != "-- ping" }) {
			continue
		}
		trips = append(trips, trip)
	}
	if len(trips) != 3 {
		t.Fatalf("a lone write and a batch of six took %d round trips, want 3", len(trips))
	}
	begin, commit := strings.Join(trips[1], "\n"), trips[2][len(trips[2])-1]
	if !strings.HasPrefix(begin, "begin") || strings.Count(begin, "FROM memories") != 4 || strings.Count(begin, "memory_overlapping") != 2 {
		t.Errorf("the batch's first trip: %q, want BEGIN, the lock, and the four memories' and the two paths' reads", trips[1])
	}
	if commit != "commit" || len(trips[2]) != 7 {
		t.Errorf("the batch's last trip: %q, want its six writes and the COMMIT", trips[2])
	}
}

func ptr[T any](v T) *T { return &v }

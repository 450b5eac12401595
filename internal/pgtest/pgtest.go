// Package pgtest gives each test a fresh PostgreSQL database of its own.
//
// With MEMSTORE_TEST_POSTGRES set to a postgres:// URL of a server on
// which its user may create databases, the databases are made there.
// Otherwise the test binary starts a throwaway server of its own, once,
// from Debian's PostgreSQL binaries (/usr/lib/postgresql/*/bin, the
// newest), listening on 127.0.0.1 only, without durability (fsync off):
// its data is a temporary directory, gone when the server stops. Without
// either, the tests that need PostgreSQL are skipped, saying how to
// provide it.
//
// Each database is a copy of a template that a prepare function (a
// schema migration) set up once per test binary: a copy takes
// milliseconds, a migration longer. A database is dropped when its test
// ends. A test binary calls Stop from TestMain once its tests have run;
// should it die first, a watchdog process stops the server anyway.
//
// A test that restarts PostgreSQL starts a throwaway server of its own
// (NewServer), the same way, and shuts it down and starts it again (Down,
// Up) as an operator would.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memstore/memstore/internal/freeport"
)

// EnvURL names the variable that points the tests at a server of one's
// own instead of a throwaway one.
const EnvURL = "MEMSTORE_TEST_POSTGRES"

// binGlob finds Debian's PostgreSQL binaries, one directory per major
// version.
const binGlob = "/usr/lib/postgresql/*/bin"

// startTimeout bounds the start of the throwaway server.
const startTimeout = time.Minute

// notFound is why a test is skipped when there is no server to use.
const notFound = "PostgreSQL not found: install Debian's postgresql package or set " + EnvURL

var (
	mu       sync.Mutex
	srv      *server // the server in use, nil until the first DB
	srvErr   error   // why it could not be had, for every later test
	template string  // the migrated template's name, "" until made
)

// A server is where the databases are made: its admin URL and, for a
// throwaway one, the watchdog that stops it.
type server struct {
	admin    *url.URL
	watchdog *exec.Cmd
	stop     io.WriteCloser // closing it tells the watchdog to stop the server
	cluster  *cluster       // nil for the server of MEMSTORE_TEST_POSTGRES
}

// A cluster is a throwaway server's files and how to run its binaries.
type cluster struct {
	bin, dir     string   // the binaries; the directory of all its files
	data, log    string   // its data directory and its log file
	as           []string // the command prefix that runs a binary as the server's user
	startOptions string   // the server's options, its port among them
}

// DB returns the URL of a new database for tb, a copy of the template
// that prepare, called once per test binary with the template's URL, has
// set up; prepare must leave no connection to it open. The database is
// dropped when tb ends. tb is skipped when there is no PostgreSQL to use
// (see the package doc) and fails when the server or the copy fails.
func DB(tb testing.TB, prepare func(ctx context.Context, url string) error) string {
	tb.Helper()
	ctx := context.Background()
	mu.Lock()
	defer mu.Unlock()
	if srv == nil && srvErr == nil {
		srv, srvErr = start(ctx)
	}
	if errors.Is(srvErr, errNotFound) {
		tb.Skip(notFound)
	}
	if srvErr != nil {
		tb.Fatalf("pgtest: %v", srvErr)
	}
	if template == "" {
		name := newName("tmpl")
		if err := srv.create(ctx, name, ""); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		if err := prepare(ctx, srv.url(name)); err != nil {
			srv.drop(ctx, name)
			tb.Fatalf("pgtest: preparing the template database: %v", err)
		}
		template = name
	}
	name := newName("t")
	if err := srv.create(ctx, name, template); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.drop(context.Background(), name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return srv.url(name)
}

// Stop drops the template and stops the throwaway server, if one was
// started; TestMain calls it after m.Run. The next DB starts afresh.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv == nil {
		srvErr = nil
		return
	}
	if template != "" && srv.watchdog == nil {
		srv.drop(context.Background(), template)
	}
	srv.close()
	srv, srvErr, template = nil, nil, ""
}

// Outage makes database dsn (a URL DB returned) refuse new connections
// and ends every connection it has, as a restart or a failover of its
// server would, until the returned function lets it take connections
// again (also called when tb ends).
func Outage(tb testing.TB, dsn string) (end func()) {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	name := pgx.Identifier{u.Path[1:]}.Sanitize()
	mu.Lock()
	s := srv
	mu.Unlock()
	ctx := context.Background()
	for _, q := range []string{
		"ALTER DATABASE " + name + " ALLOW_CONNECTIONS false",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + u.Path[1:] + "' AND pid <> pg_backend_pid()",
	} {
		if err := s.exec(ctx, q); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			if err := s.exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true"); err != nil {
				tb.Errorf("pgtest: %v", err)
			}
		})
	}
	tb.Cleanup(end)
	return end
}

// Server is a throwaway PostgreSQL server of one test's own, which the
// test may shut down and start again as an operator restarts theirs.
type Server struct {
	srv *server
}

// ownNotFound is why a test that needs a server of its own is skipped.
const ownNotFound = "PostgreSQL not found: install Debian's postgresql package (this test starts and restarts a PostgreSQL server of its own)"

// NewServer starts a throwaway server for tb alone, as DB starts the
// shared one (whatever MEMSTORE_TEST_POSTGRES says: that server is not
// this test's to restart); it is stopped and its files removed when tb
// ends. tb is skipped where there are no PostgreSQL binaries.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	bin, err := binDir()
	if errors.Is(err, errNotFound) {
		tb.Skip(ownNotFound)
	}
	s, err := startLocal(context.Background(), bin)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(s.close)
	return &Server{srv: s}
}

// DB returns the URL of a new database on s, which prepare, called with
// that URL, has set up.
func (s *Server) DB(tb testing.TB, prepare func(ctx context.Context, url string) error) string {
	tb.Helper()
	ctx := context.Background()
	name := newName("t")
	if err := s.srv.create(ctx, name, ""); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	url := s.srv.url(name)
	if err := prepare(ctx, url); err != nil {
		tb.Fatalf("pgtest: preparing the database: %v", err)
	}
	return url
}

// Down shuts s down in fast mode (pg_ctl stop -m fast): the server ends
// every session, rolling back the transactions under way, writes a
// checkpoint and exits; connections are refused until Up.
func (s *Server) Down(tb testing.TB) {
	tb.Helper()
	c := s.srv.cluster
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.run(ctx, "pg_ctl", "-D", c.data, "-w", "-t", strconv.Itoa(int(startTimeout/time.Second)), "-m", "fast", "stop"); err != nil {
		tb.Fatalf("pgtest: %v", c.withLog(err))
	}
}

// Up starts s again, on the same port, after Down, and waits until it
// takes connections.
func (s *Server) Up(tb testing.TB) {
	tb.Helper()
	c := s.srv.cluster
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		tb.Fatalf("pgtest: %v", c.withLog(err))
	}
}

var errNotFound = errors.New(notFound)

// newName returns a database name that no other test binary sharing a
// server picks.
func newName(kind string) string {
	var b [8]byte
	rand.Read(b[:])
	return "memstore_" + kind + "_" + hex.EncodeToString(b[:])
}

// url is the URL of database name on the server.
func (s *server) url(name string) string {
	u := *s.admin
	u.Path = "/" + name
	return u.String()
}

// close stops a throwaway server and removes its files.
func (s *server) close() {
	if s.watchdog != nil {
		s.stop.Close()
		s.watchdog.Wait()
	}
}

// exec runs one statement on the server's admin database.
func (s *server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.admin.String())
	if err != nil {
		return fmt.Errorf("connect to the server: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// create makes database name, a copy of template unless that is "".
func (s *server) create(ctx context.Context, name, template string) error {
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := s.exec(ctx, q); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// drop removes database name, closing any connection left to it.
func (s *server) drop(ctx context.Context, name string) error {
	if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// start returns the server of MEMSTORE_TEST_POSTGRES, or a throwaway one.
func start(ctx context.Context) (*server, error) {
	if env := os.Getenv(EnvURL); env != "" {
		u, err := url.Parse(env)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			// The value may hold a password: it is not repeated.
			return nil, fmt.Errorf("%s must be a postgres:// URL", EnvURL)
		}
		return &server{admin: u}, nil
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	return startLocal(ctx, bin)
}

// binDir returns the newest directory of PostgreSQL binaries.
func binDir() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	var best string
	bestV := -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || v <= bestV {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			best, bestV = d, v
		}
	}
	if best == "" {
		return "", errNotFound
	}
	return best, nil
}

// startLocal initialises a cluster in a new temporary directory and
// starts it on a free port, as the postgres user when running as root
// (PostgreSQL refuses to run as root), then leaves a watchdog to stop it
// and remove the directory once this process has gone.
func startLocal(ctx context.Context, bin string) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "memstore-pgtest-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "server.log")}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, the server needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	fail := func(err error) (*server, error) {
		err = c.withLog(err)
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.run(ctx, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		return fail(err)
	}
	var port int
	for try := 0; ; try++ {
		if port, err = freeport.Port(); err != nil {
			return fail(err)
		}
		c.startOptions = fmt.Sprintf("-F -p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300", port, dir)
		err = c.start(ctx)
		if err == nil {
			break
		}
		// Another process may have taken the port in between.
		if try == 2 {
			return fail(err)
		}
	}
	// The watchdog waits for its standard input to close, which happens
	// when Stop closes it or this process ends, however it ends.
	stopArgs := append(slices.Clone(c.as), filepath.Join(bin, "pg_ctl"), "-D", c.data, "-m", "immediate", "stop")
	w := exec.Command("sh", append([]string{"-c", `read -r _; "$@" >/dev/null 2>&1; rm -rf "$0"`, dir}, stopArgs...)...)
	ownGroup(w)
	stop, err := w.StdinPipe()
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		c.run(ctx, "pg_ctl", "-D", c.data, "-m", "immediate", "stop")
		return fail(fmt.Errorf("start the watchdog: %w", err))
	}
	admin := &url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	return &server{admin: admin, watchdog: w, stop: stop, cluster: c}, nil
}

// run runs one of the cluster's binaries as the server's user.
func (c *cluster) run(ctx context.Context, name string, args ...string) error {
	argv := append(slices.Clone(c.as), append([]string{filepath.Join(c.bin, name)}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// Its own process group: an interrupt of the tests must not reach
	// the server, which the watchdog stops.
	ownGroup(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	return nil
}

// start starts the cluster's server and waits until it takes connections.
func (c *cluster) start(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", c.data, "-l", c.log, "-w", "-t", strconv.Itoa(int(startTimeout/time.Second)), "-o", c.startOptions, "start")
}

// withLog adds the server's log, if any, to err.
func (c *cluster) withLog(err error) error {
	if b, _ := os.ReadFile(c.log); len(b) > 0 {
		return fmt.Errorf("%w\nserver log:\n%s", err, b)
	}
	return err
}

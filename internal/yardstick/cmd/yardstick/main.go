// Command yardstick serves the requests of `memstore bench`'s mixes as
// simply as a server can, for `memstore bench --compare` to measure
// memstore against (package internal/yardstick says what it leaves out):
//
//	go run ./internal/yardstick/cmd/yardstick --engine sqlite --db /tmp/y.db --addr 127.0.0.1:6399
//	memstore bench --url http://127.0.0.1:6366 --api-key KEY --compare http://127.0.0.1:6399 --mix write
//
// It accepts any API key, and is no server to keep memories in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/memstore/memstore/internal/yardstick"
)

func main() {
	fs := flag.NewFlagSet("yardstick", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: yardstick [--engine sqlite|postgres|map] [--db FILE|URL] [--addr HOST:PORT]")
		fs.PrintDefaults()
	}
	if slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		fs.SetOutput(os.Stdout) // help asked for goes to stdout, a usage error's to stderr
	}
	engine := fs.String("engine", yardstick.EngineSQLite, "`ENGINE`: sqlite (memstore's driver and pragmas), postgres (pgx) or map (in memory)")
	db := fs.String("db", "", "the sqlite engine's database `FILE`, made if missing, or the postgres engine's database URL")
	addr := fs.String("addr", "127.0.0.1:6399", "`ADDRESS` to listen on")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "yardstick: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	if err := run(*engine, *db, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "yardstick:", err)
		os.Exit(1)
	}
}

func run(engine, db, addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := yardstick.New(ctx, engine, db)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "yardstick: %s engine serving http://%s\n", engine, ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

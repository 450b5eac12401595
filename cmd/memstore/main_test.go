package main

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/freeport"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run memstore as a command inside the scripts
// (and the tests that start a server as a child process find it on PATH).
// It runs main itself, so that signals stop the command as they stop the
// real binary.
func TestMain(m *testing.M) {
	testscript.Main(stopPostgresAfter{m}, map[string]func(){"memstore": main, "fake-claude": fakeClaude})
}

// stopPostgresAfter runs the tests, then stops the PostgreSQL server they
// may have started: testscript.Main exits as soon as they end.
type stopPostgresAfter struct{ m *testing.M }

func (s stopPostgresAfter) Run() int {
	defer pgtest.Stop()
	return s.m.Run()
}

// TestScripts runs the command-line behaviour described in
// testdata/script/*.txtar against the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"freeport": cmdFreePort,
			"waithttp": cmdWaitHTTP,
			"perm":     cmdPerm,
			"grab":     cmdGrab,
		},
	})
}

// cmdFreePort sets the variable args[0] to a TCP port free on 127.0.0.1,
// for a server started in the background.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	port, err := freeport.Port()
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdWaitHTTP waits up to 10 seconds for GET args[0] to answer 200.
func cmdWaitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waithttp URL")
	}
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		res, err := http.Get(args[0])
		if err != nil {
			last = err.Error()
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return
		}
		last = res.Status
	}
	ts.Fatalf("%s did not answer 200 within 10s: %s", args[0], last)
}

// cmdPerm checks that file args[1] has the permission bits args[0] (octal).
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: perm MODE FILE")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	got := fi.Mode().Perm()
	if (got == os.FileMode(want)) == neg {
		ts.Fatalf("%s has mode %#o; want %s%#o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// cmdGrab sets the variable args[0] to the first submatch of the regular
// expression args[1] in the standard output of the last command, so that a
// script can use an ID it was given.
func cmdGrab(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: grab VAR REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("no match of %s (with a submatch) in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestClaudeSignal: SIGTERM sent to memstore claude reaches Claude Code,
// whose exit status is passed through, and the session still ends.
func TestClaudeSignal(t *testing.T) {
	_, team, _, fake, _ := claudeSetup(t)
	marker := filepath.Join(t.TempDir(), "waiting")
	t.Setenv("FAKE_CLAUDE_WAIT", marker)
	var out, errOut bytes.Buffer
	var wg sync.WaitGroup
	var code int
	wg.Add(1)
	go func() {
		defer wg.Done()
		code = Main(context.Background(), []string{"claude", "--claude", fake, "--store", team, "--json"}, strings.NewReader(""), &out, &errOut)
	}()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake Claude Code did not start within 60s")
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	wg.Wait()
	if code != 42 {
		t.Fatalf("exit %d; want Claude Code's 42 after SIGTERM: %s", code, errOut.String())
	}
	if ev := jsonLines(t, errOut.String()); len(ev) != 2 || ev[1]["session_ended"] != true {
		t.Errorf("events %v; want the session ended", ev)
	}
}

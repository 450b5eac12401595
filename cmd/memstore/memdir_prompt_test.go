package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkMemdirPrompt measures memstore memdir prompt, flags to output,
// on a 1 MB index, as a command and as a SessionStart hook.
func BenchmarkMemdirPrompt(b *testing.B) {
	dir := b.TempDir()
	var idx strings.Builder
	for i := 0; idx.Len() < 1<<20; i++ {
		fmt.Fprintf(&idx, "- [Memory %d](memory_%d.md) — what memory %d is about, in one line of about a hundred chars\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(idx.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"command", []string{"memdir", "prompt", "--dir", dir}, ""},
		{"hook", []string{"memdir", "prompt", "--hook", "session-start", "--dir", dir}, `{"hook_event_name":"SessionStart","source":"startup"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if code := Main(context.Background(), tc.args, strings.NewReader(tc.stdin), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit status %d", code)
				}
			}
		})
	}
}

// BenchmarkMemdirRecall measures memstore memdir recall over 2,000 topic
// files, as a command and as a UserPromptSubmit hook.
func BenchmarkMemdirRecall(b *testing.B) {
	dir := b.TempDir()
	words := strings.Fields("deploy database cluster latency release incident review style tabs python golang schema backup dashboard alert budget roadmap customer onboarding migration")
	for i := range 2000 {
		w1, w2, w3 := words[i%len(words)], words[(i/7)%len(words)], words[(i/31)%len(words)]
		content := fmt.Sprintf("---\nname: %s %s %d\ndescription: how the team handles %s when %s meets %s\nmetadata:\n  type: project\n---\n%s\n",
			w1, w2, i, w1, w2, w3, strings.Repeat("Some body text about "+w3+" and more. ", 40))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("topic_%04d.md", i)), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	const prompt = "how do we handle a database migration incident?"
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"command", []string{"memdir", "recall", "--dir", dir, prompt}, ""},
		{"command-body", []string{"memdir", "recall", "--body", "--dir", dir, prompt}, ""},
		{"hook", []string{"memdir", "recall", "--hook", "user-prompt-submit", "--dir", dir}, `{"hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if code := Main(context.Background(), tc.args, strings.NewReader(tc.stdin), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit status %d", code)
				}
			}
		})
	}
}

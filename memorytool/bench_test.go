package memorytool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

// benchFileLines and the line format make a file of about 100 KB.
const benchFileLines = 1500

// benchMarker sits on one line of the benchmark file only; str_replace
// alternates it with benchMarkerAlt.
const (
	benchMarker    = "MARKER-AAAA"
	benchMarkerAlt = "MARKER-BBBB"
)

// benchText is the benchmark file: benchFileLines lines of plain text, with
// benchMarker on the middle one.
func benchText() string {
	var sb strings.Builder
	for i := range benchFileLines {
		fmt.Fprintf(&sb, "line %04d: the agent noted that the quick brown fox jumps over the dog", i+1)
		if i == benchFileLines/2 {
			sb.WriteString(" " + benchMarker)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// benchTool opens a fresh memory root in b.TempDir().
func benchTool(b *testing.B) (*memorytool.Local, string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "memories")
	tool, err := memorytool.OpenLocal(dir, memorytool.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tool.Close() })
	return tool, dir
}

func benchInput(b *testing.B, fields map[string]any) json.RawMessage {
	b.Helper()
	raw, err := json.Marshal(fields)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// benchRun executes input once, failing the benchmark on an error result.
func benchRun(b *testing.B, tool memorytool.Handler, input json.RawMessage) memorytool.Result {
	res := memorytool.Execute(context.Background(), tool, input)
	if res.IsError {
		b.Fatalf("%s: %s", input, res.Content)
	}
	return res
}

// BenchmarkView measures view of a whole 100 KB file and of a directory
// with 200 entries.
func BenchmarkView(b *testing.B) {
	b.Run("file-100KB", func(b *testing.B) {
		tool, dir := benchTool(b)
		text := benchText()
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
		input := benchInput(b, map[string]any{"command": "view", "path": "/memories/notes.md"})
		if res := benchRun(b, tool, input); strings.Count(res.Content, "\n") != benchFileLines+1 {
			b.Fatalf("view shows %d lines, want %d", strings.Count(res.Content, "\n"), benchFileLines+1)
		}
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			benchRun(b, tool, input)
		}
	})
	b.Run("dir-200", func(b *testing.B) {
		tool, dir := benchTool(b)
		// 10 directories of 9 files each and 100 files beside them: 200
		// entries within view's two levels.
		for d := range 10 {
			sub := filepath.Join(dir, fmt.Sprintf("topic-%02d", d))
			if err := os.Mkdir(sub, 0o700); err != nil {
				b.Fatal(err)
			}
			for f := range 9 {
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("note-%02d.md", f)), []byte("a short note\n"), 0o600); err != nil {
					b.Fatal(err)
				}
			}
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%03d.md", f)), []byte("a short note\n"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
		input := benchInput(b, map[string]any{"command": "view", "path": "/memories"})
		if res := benchRun(b, tool, input); strings.Count(res.Content, "\n") != 201 {
			b.Fatalf("view lists %d lines, want 201", strings.Count(res.Content, "\n"))
		}
		b.ReportAllocs()
		for b.Loop() {
			benchRun(b, tool, input)
		}
	})
}

// BenchmarkStrReplace measures a unique replacement in a 100 KB file. It
// alternates between two values so that every iteration edits the file.
func BenchmarkStrReplace(b *testing.B) {
	b.Run("file-100KB", func(b *testing.B) {
		tool, dir := benchTool(b)
		text := benchText()
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
		inputs := [2]json.RawMessage{
			benchInput(b, map[string]any{"command": "str_replace", "path": "/memories/notes.md", "old_str": benchMarker, "new_str": benchMarkerAlt}),
			benchInput(b, map[string]any{"command": "str_replace", "path": "/memories/notes.md", "old_str": benchMarkerAlt, "new_str": benchMarker}),
		}
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			benchRun(b, tool, inputs[i%2])
			i++
		}
	})
}

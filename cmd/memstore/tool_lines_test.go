package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/lines"
	"github.com/memstore/memstore/memorytool"
)

// TestToolLongLine: a line over the limit is answered with an error and
// nothing else happens; the lines around it are carried out.
func TestToolLongLine(t *testing.T) {
	root := t.TempDir()
	tool, err := memorytool.OpenLocal(root, memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	huge := `{"command":"create","path":"/memories/huge.md","file_text":"` + strings.Repeat("x", lines.Max) + `"}`
	in := `{"command":"create","path":"/memories/a.md","file_text":"a"}` + "\n" + huge + "\n" +
		`{"command":"view","path":"/memories"}` + "\n"
	var out bytes.Buffer
	if err := serveJSONLines(t.Context(), tool, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var answers []toolAnswer
	dec := json.NewDecoder(&out)
	for dec.More() {
		var a toolAnswer
		if err := dec.Decode(&a); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	if len(answers) != 3 || !answers[0].OK || answers[1].OK || !answers[2].OK {
		t.Fatalf("answers %+v; want ok, refused, ok", answers)
	}
	if !strings.Contains(answers[1].Error, "longer than") {
		t.Errorf("the long line's answer does not say why: %q", answers[1].Error)
	}
	if strings.Contains(answers[2].Output, "huge.md") {
		t.Errorf("the refused line made a file:\n%s", answers[2].Output)
	}
}

// TestToolConverses: a caller that waits for each answer before sending
// the next command gets it, although answers to commands sent together
// are written together; and a command sent in two parts is answered once
// it is whole.
func TestToolConverses(t *testing.T) {
	tool, err := memorytool.OpenLocal(t.TempDir(), memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serveJSONLines(t.Context(), tool, inR, outW)
		outW.Close()
	}()
	defer inR.Close()
	defer outR.Close() // on a failure, unblocks whatever still waits
	answers := bufio.NewReader(outR)
	ask := func(parts ...string) toolAnswer {
		t.Helper()
		got := make(chan []byte, 1)
		go func() {
			line, _ := answers.ReadBytes('\n')
			got <- line
		}()
		// The pipe passes each part only once the server reads it, which
		// it does after answering what it read before: write meanwhile.
		go func() {
			for _, p := range parts {
				if _, err := io.WriteString(inW, p); err != nil {
					return
				}
			}
		}()
		select {
		case line := <-got:
			var a toolAnswer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("answer %q: %v", line, err)
			}
			return a
		case <-time.After(30 * time.Second):
			t.Fatal("no answer within 30 s: the answer was not flushed")
		}
		return toolAnswer{}
	}
	if a := ask(`{"command":"create","path":"/memories/a.md","file_text":"one"}` + "\n"); !a.OK {
		t.Fatalf("create: %+v", a)
	}
	// The second command arrives in the buffer with half of the third.
	if a := ask(`{"command":"view","path":"/memories/a.md"}`+"\n", `{"command":"view",`); !a.OK || !strings.Contains(a.Output, "one") {
		t.Fatalf("view: %+v", a)
	}
	if a := ask(`"path":"/memories/b.md"}` + "\n"); a.OK || !strings.Contains(a.Error, "does not exist") {
		t.Fatalf("view of a missing file: %+v", a)
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

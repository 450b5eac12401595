package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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

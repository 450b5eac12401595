package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
)

// What an agent may write to make a terminal act instead of show: ESC
// and CSI sequences (clear, recolour), OSC 52 (set the clipboard), OSC 8
// (a link hiding its target), BEL, backspaces and a carriage return that
// overwrite what was printed, the C1 CSI (U+009B), bidirectional
// overrides and isolates, a form feed, DEL and SOH.
const (
	hostileCSI   = "\x1b[2J\x1b[31m"
	hostileOSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
	hostileOSC8  = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
	hostileBS    = "sudo\b\b\b\b"
	hostileCR    = "safe\rEVIL"
	hostileC1    = "\u009b31m"
	hostileBidi  = "\u202eevil\u202c \u2066x\u2069 \u200fy"
	hostileMisc  = "\f\x7f\x01"
	hostileText  = hostileCSI + hostileOSC52 + hostileOSC8 + hostileBS + hostileCR + hostileC1 + hostileBidi + hostileMisc
)

// obeyed returns the characters of s a terminal would act on: C0
// controls but tab, newline and the CR of a CR LF, DEL, C1 controls and
// the bidirectional controls.
func obeyed(s string) []string {
	var bad []string
	for i, r := range s {
		switch {
		case r == '\t' || r == '\n':
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case r < 0x20, r >= 0x7f && r <= 0x9f,
			r == '\u061c', r == '\u200e', r == '\u200f',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		}
	}
	return bad
}

func TestTermText(t *testing.T) {
	for _, tc := range []struct {
		in, multi, one string
	}{
		{"plain text, ünïcode, 日本語 and 👩‍💻\n", "plain text, ünïcode, 日本語 and 👩‍💻\n", "plain text, ünïcode, 日本語 and 👩‍💻 "},
		{"a\tb\r\nc\n", "a\tb\r\nc\n", "a b  c "},
		{hostileCSI, "␛[2J␛[31m", "␛[2J␛[31m"},
		{hostileOSC52, "␛]52;c;cm0gLXJmIH4=␇", "␛]52;c;cm0gLXJmIH4=␇"},
		{hostileOSC8, "␛]8;;https://evil.example/␛\\click␛]8;;␛\\", "␛]8;;https://evil.example/␛\\click␛]8;;␛\\"},
		{hostileBS, "sudo␈␈␈␈", "sudo␈␈␈␈"},
		{hostileCR, "safe␍EVIL", "safe EVIL"},
		{"end\r", "end␍", "end "},
		{hostileC1, "<U+009B>31m", "<U+009B>31m"},
		{hostileBidi, "<U+202E>evil<U+202C> <U+2066>x<U+2069> <U+200F>y", "<U+202E>evil<U+202C> <U+2066>x<U+2069> <U+200F>y"},
		{hostileMisc, "␌␡␁", " ␡␁"},
		{"nul\x00", "nul␀", "nul␀"},
		{"line\u2028sep\u0085", "line<U+2028>sep<U+0085>", "line sep "},
		{"\ufeffbom", "<U+FEFF>bom", "<U+FEFF>bom"},
		{"bad \x9b\xff byte", "bad <9B><FF> byte", "bad <9B><FF> byte"},
	} {
		if got := termText(tc.in, false); got != tc.multi {
			t.Errorf("termText(%q, false) = %q; want %q", tc.in, got, tc.multi)
		}
		if got := termText(tc.in, true); got != tc.one {
			t.Errorf("termText(%q, true) = %q; want %q", tc.in, got, tc.one)
		}
		for _, got := range []string{termText(tc.in, false), termText(tc.in, true)} {
			if bad := obeyed(got); len(bad) > 0 {
				t.Errorf("termText(%q) = %q still has %v", tc.in, got, bad)
			}
		}
	}
}

// TestTermWriter: a character or a CR LF split between writes is
// neutralised as if written at once.
func TestTermWriter(t *testing.T) {
	var b bytes.Buffer
	w := newTermWriter(&b)
	in := "a\u202e\r\nb\x1b[1m\r" + "日"
	for i := range len(in) {
		w.Write([]byte(in[i : i+1]))
	}
	w.Flush()
	if want := "a<U+202E>\r\nb␛[1m␍日"; b.String() != want {
		t.Errorf("wrote %q; want %q", b.String(), want)
	}

	b.Reset()
	w = newJSONWriter(&b)
	line, _ := json.Marshal(map[string]string{"c": hostileText})
	line = append(line, '\n')
	for i := range len(line) {
		w.Write(line[i : i+1])
	}
	w.Flush()
	var got map[string]string
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || got["c"] != hostileText {
		t.Errorf("JSON %q decodes to %q, %v; want the text unchanged", b.String(), got["c"], err)
	}
	if bad := obeyed(b.String()[:b.Len()-1]); len(bad) > 0 || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("JSON %q has %v", b.String(), bad)
	}
}

// TestHostileTextShownNotObeyed writes agent-written text holding every
// kind of terminal control into each field an agent or a client can fill
// (content, store name, description and metadata, session title,
// instructions and metadata), on a database and on a server, and runs
// every command that prints them: none lets a control through, each shows
// it as visible symbols; --json keeps the exact text, escaped, and --raw
// prints the content exactly.
func TestHostileTextShownNotObeyed(t *testing.T) {
	onDatabaseAndServer(t, func(t *testing.T, name string, backend []string) {
		cli := func(stdin string, args ...string) (string, string) {
			t.Helper()
			// watch runs until interrupted: give every command a deadline.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			var out, errs bytes.Buffer
			code := Main(ctx, append(args, backend...), strings.NewReader(stdin), &out, &errs)
			if code != 0 && args[0] != "watch" {
				t.Fatalf("%v: exit %d: %s %s", args, code, out.String(), errs.String())
			}
			return out.String(), errs.String()
		}
		shown := func(what, out string) {
			t.Helper()
			if bad := obeyed(out); len(bad) > 0 {
				t.Errorf("%s prints what a terminal obeys (%v):\n%q", what, bad, out)
			}
			if !strings.Contains(out, "␛]52;c;") && !strings.Contains(out, "<U+202E>") {
				t.Errorf("%s does not show the hostile text:\n%q", what, out)
			}
		}

		out, _ := cli("", "stores", "create", "notes \u202eevil\u202c", "--description", hostileText, "--metadata", "k="+hostileText, "--json")
		var store httpapi.StoreJSON
		if err := json.Unmarshal([]byte(out), &store); err != nil {
			t.Fatalf("stores create --json: %v: %q", err, out)
		}
		if bad := obeyed(out); len(bad) > 0 {
			t.Errorf("stores create --json prints %v: %q", bad, out)
		}
		if store.Description != hostileText || store.Metadata["k"] != hostileText {
			t.Errorf("--json changed the text: %+v", store)
		}
		st := []string{"--store", store.ID}
		cli("first\n"+hostileText+"\n", append([]string{"put", "/notes/a.md"}, st...)...)
		cli("second\n"+hostileText+"\nmore "+hostileC1+"\n", append([]string{"put", "/notes/a.md"}, st...)...)
		out, _ = cli("", "sessions", "create", "--store", store.ID, "--instructions", hostileText, "--title", hostileText)
		sess := regexp.MustCompile(`sesn_\w+`).FindString(out)
		shown("sessions create", out)
		cli("", "sessions", "update", sess, "--metadata", "k="+hostileText)

		out, _ = cli("", "log", "/notes/a.md", "--json", "--store", store.ID)
		var versions []httpapi.VersionJSON
		if err := json.Unmarshal([]byte(out), &versions); err != nil || len(versions) != 2 {
			t.Fatalf("log --json: %v: %q", err, out)
		}
		newest := versions[0].ID
		out, _ = cli("", "stores", "create", "empty", "--json")
		empty := regexp.MustCompile(`memstore_\w+`).FindString(out)

		for _, args := range [][]string{
			{"stores", "diff", store.ID, empty},
			{"cat", "/notes/a.md"},
			{"show", newest},
			{"diff", newest},
			{"grep", "second"},
			{"stores", "ls"},
			{"stores", "show", store.ID},
			{"sessions", "ls"},
			{"sessions", "show", sess},
			{"memdir", "sync", "--dir", filepath.Join(t.TempDir(), name+"-memdir")},
		} {
			if args[0] == "memdir" && name == "db" {
				continue // memdir sync works with a server
			}
			if args[0] != "stores" && args[0] != "sessions" {
				args = append(args, st...)
			}
			stdout, stderr := cli("", args...)
			if args[0] == "memdir" {
				// It prints no content: the files it wrote hold it exactly.
				if bad := obeyed(stdout + stderr); len(bad) > 0 {
					t.Errorf("memdir sync prints %v", bad)
				}
				b, err := os.ReadFile(filepath.Join(args[3], "notes", "a.md"))
				if err != nil || !strings.Contains(string(b), hostileText) {
					t.Errorf("memdir sync wrote %q (%v); want the content exactly", b, err)
				}
				continue
			}
			shown(strings.Join(args[:2], " "), stdout)
			if bad := obeyed(stderr); len(bad) > 0 {
				t.Errorf("%v: stderr has %v: %q", args, bad, stderr)
			}
		}
		// What prints paths, IDs and sizes only.
		for _, args := range [][]string{{"ls", "--depth", "0"}, {"log"}, {"redact", "--yes", versions[1].ID}} {
			stdout, stderr := cli("", append(args, st...)...)
			if bad := obeyed(stdout + stderr); len(bad) > 0 || stdout == "" {
				t.Errorf("%v prints %v: %q", args, bad, stdout)
			}
		}
		if name == "url" {
			// The server's feed carries no content; what it names is shown.
			stdout, stderr := cli("", append([]string{"watch", "--from-start"}, st...)...)
			if bad := obeyed(stdout + stderr); len(bad) > 0 || !strings.Contains(stdout, "/notes/a.md") {
				t.Errorf("watch: %v in %q", bad, stdout)
			}
		}

		// --raw prints the content exactly.
		if out, _ := cli("", append([]string{"cat", "/notes/a.md", "--raw"}, st...)...); out != "second\n"+hostileText+"\nmore "+hostileC1+"\n" {
			t.Errorf("cat --raw = %q", out)
		}
		if out, _ := cli("", append([]string{"show", newest, "--raw"}, st...)...); !strings.HasSuffix(out, "\n\nsecond\n"+hostileText+"\nmore "+hostileC1+"\n") {
			t.Errorf("show --raw = %q", out)
		}
		if out, _ := cli("", append([]string{"diff", newest, "--raw"}, st...)...); !strings.Contains(out, "\n+more "+hostileC1+"\n") {
			t.Errorf("diff --raw = %q", out)
		}
		if out, _ := cli("", "stores", "diff", store.ID, empty, "--raw"); !strings.Contains(out, "\n-more "+hostileC1+"\n") {
			t.Errorf("stores diff --raw = %q", out)
		}
		// --json escapes it, and decodes to it.
		out, _ = cli("", append([]string{"cat", "/notes/a.md", "--json"}, st...)...)
		var m httpapi.MemoryJSON
		if err := json.Unmarshal([]byte(out), &m); err != nil || m.Content == nil || *m.Content != "second\n"+hostileText+"\nmore "+hostileC1+"\n" {
			t.Errorf("cat --json = %q (%v)", out, err)
		}
		if bad := obeyed(strings.TrimSuffix(out, "\n")); len(bad) > 0 || !strings.Contains(out, `\u009b31m`) || !strings.Contains(out, `\u202eevil`) {
			t.Errorf("cat --json prints %v: %q", bad, out)
		}
		out, _ = cli("", append([]string{"export", "-"}, st...)...)
		if bad := obeyed(strings.ReplaceAll(out, "\n", "")); len(bad) > 0 || !strings.Contains(out, `\u009b31m`) {
			t.Errorf("export - prints %v: %q", bad, out)
		}
	})
}

// TestMemdirTextShownNotObeyed: memdir prompt and recall print what an
// agent wrote in the memory directory with its terminal controls shown,
// exactly with --raw, and escaped in a hook's JSON.
func TestMemdirTextShownNotObeyed(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	topic := "---\nname: Deploys " + hostileC1 + "\ndescription: how we deploy " + hostileCSI + "\ntype: project\n---\n\nWe deploy on Fridays. " + hostileText + "\n"
	index := "- [Deploys](deploy.md) " + hostileOSC52 + hostileBidi + "\n"
	if err := os.WriteFile(filepath.Join(dir, "deploy.md"), []byte(topic), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"memdir", "prompt", "--dir", dir},
		{"memdir", "recall", "--dir", dir, "deploy"},
	} {
		code, out, errs := run(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if bad := obeyed(out + errs); len(bad) > 0 || !strings.Contains(out, "␛]52;c;") {
			t.Errorf("%v prints %v:\n%q", args, bad, out)
		}
		code, out, _ = run(t, "", append(args, "--raw")...)
		if code != 0 || !strings.Contains(out, hostileOSC52) || !strings.Contains(out, hostileBidi) {
			t.Errorf("%v --raw: exit %d, %q; want the text exactly", args, code, out)
		}
	}
	code, out, _ := run(t, `{"hook_event_name":"UserPromptSubmit","prompt":"how do we deploy"}`, "memdir", "recall", "--hook", "user-prompt-submit", "--dir", dir)
	var hook struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &hook); code != 0 || err != nil || !strings.Contains(hook.HookSpecificOutput.AdditionalContext, hostileText) {
		t.Errorf("recall hook: exit %d, %q (%v); want the text in the JSON", code, out, err)
	}
	if bad := obeyed(strings.TrimSuffix(out, "\n")); len(bad) > 0 {
		t.Errorf("recall hook prints %v: %q", bad, out)
	}
}

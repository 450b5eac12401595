package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// subcommandsIn finds the subcommands a command's help names: in its
// usage lines ("memstore users create ..."), its list of subcommands
// ("  path  print ...", after "Subcommands:") and where it sends the
// reader ("'memstore bench recall --help'").
func subcommandsIn(cmd, help string) []string {
	q := regexp.QuoteMeta(cmd)
	res := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^(?:Usage:)?\s+memstore ` + q + ` \[?([a-z][a-z-]*)\b`),
		regexp.MustCompile(`'memstore ` + q + ` ([a-z][a-z-]*)\b`),
	}
	var subs []string
	add := func(s string) {
		if s != "" && !slices.Contains(subs, s) {
			subs = append(subs, s)
		}
	}
	for _, re := range res {
		for _, m := range re.FindAllStringSubmatch(help, -1) {
			add(m[1])
		}
	}
	if _, list, ok := strings.Cut(help, "\nSubcommands:\n"); ok {
		for _, line := range strings.Split(list, "\n") {
			if !strings.HasPrefix(line, "  ") {
				break
			}
			add(strings.Fields(line)[0])
		}
	}
	return subs
}

// checkHelp checks one help: on stdout, exit 0, nothing on stderr, flags
// in the double-dash style, and an example.
func checkHelp(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(t, "", args...)
	name := strings.Join(args, " ")
	if code != 0 || stderr != "" {
		t.Fatalf("%s: exit %d, stderr %q; want 0 and nothing on stderr", name, code, stderr)
	}
	t.Logf("%s: ok", name)
	if !strings.HasPrefix(stdout, "Usage: memstore ") {
		t.Errorf("%s: stdout does not start with its usage: %.200q", name, stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if regexp.MustCompile(`^\s+-[a-z]`).MatchString(line) {
			t.Errorf("%s: flag in single-dash style: %q", name, line)
		}
	}
	i := strings.Index(stdout, "\nExamples:\n")
	if i < 0 || !regexp.MustCompile(`(?m)^  memstore `).MatchString(stdout[i:]) {
		t.Errorf("%s: no example (an Examples: section with a 'memstore' command line)", name)
	}
	// Each flag's default is said once: a flag's entry is its --name
	// line and the indented description below.
	if _, flags, ok := strings.Cut(stdout, "\nFlags:\n"); ok {
		for _, entry := range regexp.MustCompile(`(?m)^  --`).Split(flags, -1) {
			if strings.Contains(entry, "(default ") && strings.Count(entry, "default") > 1 {
				t.Errorf("%s: default said twice: %q", name, entry)
			}
		}
	}
	return stdout
}

// TestHelpEveryCommand runs every command's and subcommand's help, in
// each of its three forms, from the command table.
func TestHelpEveryCommand(t *testing.T) {
	clearEnv(t)
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			out := checkHelp(t, c.name, "--help")
			if h := checkHelp(t, "help", c.name); h != out {
				t.Errorf("memstore help %s differs from %s --help", c.name, c.name)
			}
			for _, sub := range subcommandsIn(c.name, out) {
				sout := checkHelp(t, c.name, sub, "--help")
				if h := checkHelp(t, "help", c.name, sub); h != sout {
					t.Errorf("memstore help %s %s differs from %s %s --help", c.name, sub, c.name, sub)
				}
			}
		})
	}
}

// TestHelpTopLevel: memstore --help and memstore help list the commands
// on stdout with exit 0; memstore alone is a usage error on stderr.
func TestHelpTopLevel(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, stdout, stderr := run(t, "", args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Commands:") || !strings.Contains(stdout, "  serve ") {
			t.Errorf("%q: exit %d, stdout %.100q, stderr %q; want the command list on stdout, exit 0", args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := run(t, "")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "Commands:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %.100q; want the command list on stderr, exit 2", code, stdout, stderr)
	}
	// A usage error is on stderr, exit 2, with the usage and where the
	// help is, not the whole help.
	code, stdout, stderr = run(t, "", "ls", "--bogus")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "flag provided but not defined: -bogus\n") || !strings.Contains(stderr, "Usage: memstore ls") || !strings.Contains(stderr, "memstore ls --help") || strings.Contains(stderr, "Examples:") {
		t.Errorf("ls --bogus: exit %d, stdout %q, stderr %q; want exit 2, the usage and a hint on stderr", code, stdout, stderr)
	}
	code, _, stderr = run(t, "", "help", "frob")
	if code != 2 || !strings.Contains(stderr, `unknown command "frob"`) {
		t.Errorf("help frob: exit %d, stderr %q; want exit 2, unknown command", code, stderr)
	}
}

// TestWriteHelpAnyFlagSet: the help of a flag set made anywhere groups
// its flags and says each default once.
func TestWriteHelpAnyFlagSet(t *testing.T) {
	var out strings.Builder
	fs := newFlags(env{}, "x", "")
	fs.String("store", "", "store `NAME` or ID")
	fs.Bool("yes", false, "do not ask")
	fs.Int("limit", 20, "at most `N`")
	fs.String("mode", "fast", "the `MODE`; default fast")
	writeHelp(&out, "x", fs, "Usage: memstore x\n")
	want := `Usage: memstore x

Flags:
  --limit N
      at most N (default 20)
  --mode MODE
      the MODE; default fast
  --yes
      do not ask

Backend flags:
  --store NAME
      store NAME or ID
`
	if out.String() != want {
		t.Errorf("help:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestExamplesUseTheirFlags: every flag an example gives is one its
// command's help lists, and every example names a command that exists.
func TestExamplesUseTheirFlags(t *testing.T) {
	clearEnv(t)
	for name, lines := range examples {
		code, help, stderr := run(t, "", append(strings.Fields(name), "--help")...)
		if code != 0 {
			t.Errorf("examples of %q: no such command (%d %s)", name, code, stderr)
			continue
		}
		for _, l := range lines {
			_, cmd, ok := strings.Cut(l, "memstore "+name)
			if !ok {
				t.Errorf("example of %q runs another command: %s", name, l)
				continue
			}
			cmd, _, _ = strings.Cut(cmd, " -- ") // Claude Code's own arguments
			cmd, _, _ = strings.Cut(cmd, " | ")
			cmd, _, _ = strings.Cut(cmd, " > ")
			cmd, _, _ = strings.Cut(cmd, " # ")
			full, flags := name, help
			// An example of a command may run one of its subcommands.
			if words := strings.Fields(cmd); !strings.Contains(name, " ") && len(words) > 0 && slices.Contains(subcommandsIn(name, help), words[0]) {
				full = name + " " + words[0]
				_, flags, _ = run(t, "", name, words[0], "--help")
			}
			for _, f := range regexp.MustCompile(`(?:^| )(--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(cmd, -1) {
				if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f[1]) + `( |$)`).MatchString(flags) {
					t.Errorf("example %q gives %s, which memstore %s does not take", l, f[1], full)
				}
			}
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completionScript writes memstore completion SHELL to a file and returns
// its path.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errs := run(t, "", "completion", shell)
	if code != 0 || out == "" {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errs)
	}
	path := filepath.Join(t.TempDir(), "memstore."+shell)
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompletionBash loads the bash script into a real bash, which calls
// the real binary (memstore __complete), and completes lines as bash
// would: commands, subcommands, each command's flags as its flag set
// defines them, and store names and IDs after --store.
func TestCompletionBash(t *testing.T) {
	clearEnv(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	script := completionScript(t, "bash")
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	db := notesDatabase(t)
	if code, _, errs := run(t, "", "--db", db, "stores", "create", "work"); code != 0 {
		t.Fatal(errs)
	}
	ids := strings.Fields(func() string {
		_, out, _ := run(t, "", "--db", db, "stores", "ls", "--json")
		return strings.Join(idPattern.FindAllString(out, -1), " ")
	}())

	// complete runs _memstore on the words of a line, the last being the
	// one completed, in a bash without bash-completion's helpers.
	complete := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		prog := `source "$1" || exit 9
COMP_WORDS=(` + strings.Join(quoted, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_memstore
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", script)
		cmd.Env = append(os.Environ(), "MEMSTORE_DB=", "MEMSTORE_URL=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completing %q: %v\n%s", words, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		return got
	}
	tests := []struct {
		words      []string
		want, not  []string
		exactWants bool
	}{
		{words: []string{"memstore", "sto"}, want: []string{"stores"}, exactWants: true},
		{words: []string{"memstore", "comp"}, want: []string{"completion"}, exactWants: true},
		{words: []string{"memstore", ""}, want: []string{"serve", "put", "stores", "sessions", "completion", "help"}, not: []string{"__complete"}},
		{words: []string{"memstore", "stores", ""}, want: []string{"ls", "create", "show", "update", "archive", "rm"}},
		{words: []string{"memstore", "sessions", "r"}, want: []string{"revoke", "rm"}, exactWants: true},
		{words: []string{"memstore", "keys", ""}, want: []string{"create", "ls", "revoke"}},
		{words: []string{"memstore", "users", ""}, want: []string{"create", "ls", "rm", "passwd"}},
		{words: []string{"memstore", "webhooks", ""}, want: []string{"ls", "create", "rm", "deliveries"}},
		{words: []string{"memstore", "memdir", "sy"}, want: []string{"sync"}, exactWants: true},
		{words: []string{"memstore", "completion", ""}, want: []string{"bash", "fish", "zsh"}, exactWants: true},
		{words: []string{"memstore", "help", "red"}, want: []string{"redact"}, exactWants: true},
		// Flags, per command, from its flag set.
		{words: []string{"memstore", "put", "--st"}, want: []string{"--store"}, exactWants: true},
		{words: []string{"memstore", "redact", "--"}, want: []string{"--yes", "--store", "--db", "--json", "--help"}, not: []string{"--depth"}},
		{words: []string{"memstore", "ls", "--de"}, want: []string{"--depth"}, exactWants: true},
		{words: []string{"memstore", "stores", "rm", "--y"}, want: []string{"--yes"}, exactWants: true},
		{words: []string{"memstore", "stores", "create", "--"}, want: []string{"--description", "--metadata"}, not: []string{"--yes"}},
		{words: []string{"memstore", "keys", "revoke", "--"}, want: []string{"--yes", "--db"}},
		{words: []string{"memstore", "webhooks", "create", "--"}, want: []string{"--url", "--event", "--webhook-allow-private"}},
		{words: []string{"memstore", "--db", db, "stores", "update", "--"}, want: []string{"--name", "--unset-metadata"}},
		{words: []string{"memstore", "tool", "prune", "--"}, want: []string{"--root", "--older-than", "--dry-run", "--yes"}},
		// Store names and IDs after --store, from the database the line names.
		{words: []string{"memstore", "cat", "--db", db, "--store", ""}, want: append([]string{"notes", "work"}, ids...), exactWants: true},
		{words: []string{"memstore", "--db", db, "ls", "--store", "wo"}, want: []string{"work"}, exactWants: true},
		{words: []string{"memstore", "--db", db, "stores", "show", "n"}, want: []string{"notes"}, exactWants: true},
		{words: []string{"memstore", "sessions", "create", "--db", db, "--store", "no"}, want: []string{"notes"}, exactWants: true},
		// A flag's value is not a subcommand; a path is left to the shell.
		{words: []string{"memstore", "--db", db, "cat", "/"}, want: nil, exactWants: true},
		{words: []string{"memstore", "ls", "--db", ""}, want: nil, exactWants: true},
	}
	for _, tt := range tests {
		got := complete(tt.words...)
		if tt.exactWants {
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("completing %q: %q; want %q", tt.words, got, tt.want)
			}
			continue
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q: %q lacks %q", tt.words, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("completing %q: %q holds %q", tt.words, got, n)
			}
		}
	}
}

// TestCompletionShells checks the zsh and fish scripts' syntax with the
// shells themselves, where they are installed, and fish's completions;
// and that an unknown shell is refused.
func TestCompletionShells(t *testing.T) {
	for shell, check := range map[string][]string{"zsh": {"-n"}, "fish": {"--no-execute"}} {
		t.Run(shell, func(t *testing.T) {
			script := completionScript(t, shell)
			bin, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed here: its script's syntax is not checked", shell)
			}
			if out, err := exec.Command(bin, append(check, script)...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", shell, strings.Join(check, " "), err, out)
			}
			if shell != "fish" {
				return
			}
			// fish completes a line on demand: memstore's words, and
			// file names only where memstore has none.
			for line, want := range map[string]string{"memstore stores r": "rm\n", "memstore redact --y": "--yes\n"} {
				out, err := exec.Command(bin, "--no-config", "-c", `source "$argv[1]"; complete -C "$argv[2]"`, script, line).CombinedOutput()
				if err != nil || string(out) != want {
					t.Errorf("fish completing %q: %q, %v; want %q", line, out, err, want)
				}
			}
		})
	}
	if code, _, errs := run(t, "", "completion", "tcsh"); code != 2 || !strings.Contains(errs, "name one shell: bash, fish, zsh") {
		t.Errorf("completion tcsh: exit %d: %s", code, errs)
	}
}

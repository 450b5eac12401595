package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/memstore/memstore"
)

const completionHelp = `Usage: memstore completion bash|zsh|fish

Prints a script that completes memstore's commands, subcommands and
flags in the shell, and the names and IDs of stores after --store (read
from the database or server that the line, or the environment, names).

  bash  in ~/.bashrc
  zsh   in ~/.zshrc, after compinit: source <(memstore completion zsh)
  fish  into ~/.config/fish/completions/memstore.fish

The script asks memstore itself what fits (memstore __complete), so it
stays right as memstore changes.
`

// completeCommand is the hidden command that the completion scripts
// call: memstore __complete WORD... CURRENT prints, one a line, what may
// replace CURRENT after the words before it.
const completeCommand = "__complete"

// storeCompletionTimeout bounds the look-up of store names for
// completion: a shell must never hang on a slow server.
const storeCompletionTimeout = 2 * time.Second

// completionScripts are the scripts of each shell; each calls
// memstore __complete with the words of the line.
var completionScripts = map[string]string{
	"bash": `# bash completion for memstore: source <(memstore completion bash)
_memstore() {
    local cur words cword
    if declare -F _get_comp_words_by_ref >/dev/null; then
        _get_comp_words_by_ref -n =: cur words cword
    else
        cur=${COMP_WORDS[COMP_CWORD]} words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    local IFS=$'\n'
    COMPREPLY=($("${words[0]}" __complete "${words[@]:1:cword-1}" "$cur" 2>/dev/null))
}
complete -o default -F _memstore memstore
`,
	"zsh": `#compdef memstore
# zsh completion for memstore: source <(memstore completion zsh), after compinit
_memstore() {
    local -a cands
    cands=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
    if (( ${#cands} )) && [[ -n ${cands[1]} ]]; then
        compadd -Q -S '' -a cands
    else
        _files
    fi
}
if [[ "${funcstack[1]}" == _memstore ]]; then
    _memstore "$@"
else
    compdef _memstore memstore
fi
`,
	"fish": `# fish completion for memstore: memstore completion fish > ~/.config/fish/completions/memstore.fish
function __memstore_complete
    set -l tokens (commandline -opc)
    set -l out ($tokens[1] __complete $tokens[2..-1] (commandline -ct) 2>/dev/null)
    printf '%s\n' $out
    test (count $out) -gt 0
end
complete -c memstore -f -a '(__memstore_complete)'
complete -c memstore -F -n 'not __memstore_complete >/dev/null'
`,
}

func runCompletion(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "completion", completionHelp)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	shells := slices.Sorted(maps.Keys(completionScripts))
	if len(pos) != 1 || completionScripts[pos[0]] == "" {
		return usageError(e, "memstore completion: name one shell: %s", strings.Join(shells, ", "))
	}
	_, err = io.WriteString(e.raw(), completionScripts[pos[0]])
	return err
}

// runComplete prints the completions of the last argument after the
// others: commands, subcommands, flags (--name) and, after --store,
// stores. Nothing printed leaves the shell to complete file names.
func runComplete(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		args = []string{""}
	}
	words, cur := args[:len(args)-1], args[len(args)-1]
	var out []string
	for _, c := range complete(ctx, e, words, cur) {
		if strings.HasPrefix(c, cur) {
			out = append(out, c)
		}
	}
	for _, c := range out {
		fmt.Fprintln(e.raw(), c)
	}
	return nil
}

// complete is what may follow words, before the prefix cur is applied.
func complete(ctx context.Context, e env, words []string, cur string) []string {
	cmdAt := commandIndex(words, nil)
	if cmdAt < 0 {
		if strings.HasPrefix(cur, "-") {
			return flagNames(backendOnlyFlags())
		}
		return commandNames()
	}
	name := words[cmdAt]
	if name == "help" {
		if len(words) == cmdAt+1 {
			return commandNames()
		}
		return nil
	}
	if name == "completion" {
		return slices.Sorted(maps.Keys(completionScripts))
	}
	rest := words[cmdAt+1:]
	fs := commandFlags(ctx, name, "")
	subs := subcommands(ctx, name)
	sub := ""
	if len(subs) > 0 {
		if i := commandIndex(rest, fs); i >= 0 {
			sub = rest[i]
			if sfs := commandFlags(ctx, name, sub); sfs != nil {
				fs = sfs
			}
		} else if !strings.HasPrefix(cur, "-") && !takesValue(fs, rest) {
			return subs
		}
	}
	if takesValue(fs, rest) {
		if prev := rest[len(rest)-1]; strings.TrimLeft(prev, "-") == "store" {
			return storeNames(ctx, e, words)
		}
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		return flagNames(fs)
	}
	if name == "stores" && slices.Contains(storeArgSubcommands, sub) && commandIndex(rest[slices.Index(rest, sub)+1:], fs) < 0 {
		return storeNames(ctx, e, words)
	}
	return nil
}

// storeArgSubcommands are the stores subcommands whose argument is a
// store.
var storeArgSubcommands = []string{"show", "update", "archive", "rm", "diff"}

// commandIndex is the index of the first word that is neither a flag nor
// the value of one (per fs, else the shared backend flags), -1 if none.
func commandIndex(words []string, fs *flag.FlagSet) int {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return -1
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return i
		}
		if flagTakesValue(fs, w) {
			i++
		}
	}
	return -1
}

// takesValue reports whether the last of words is a flag waiting for its
// value.
func takesValue(fs *flag.FlagSet, words []string) bool {
	if len(words) == 0 {
		return false
	}
	w := words[len(words)-1]
	if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
		return false
	}
	// It takes a value unless the word before made it one.
	if len(words) > 1 && flagTakesValue(fs, words[len(words)-2]) {
		return false
	}
	return flagTakesValue(fs, w)
}

// flagTakesValue reports whether flag word (-name or --name, without
// =value) takes a value: per fs, or the shared backend flags without one.
func flagTakesValue(fs *flag.FlagSet, w string) bool {
	name := strings.TrimLeft(w, "-")
	if name == "" || strings.Contains(name, "=") {
		return false
	}
	if fs == nil {
		return backendValueFlags[name]
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// commandNames are the commands of the command table, and help.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return append(names, "help")
}

// flagNames are fs's flags as --name, and --help.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	}
	return append(names, "--help")
}

// backendOnlyFlags are the flags that may come before the command.
func backendOnlyFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("memstore", flag.ContinueOnError)
	addBackendFlags(fs, "", true)
	return fs
}

// commandFlags is the flag set of a command (or of its subcommand sub):
// the one it defines when run with --help, which returns before it acts.
func commandFlags(ctx context.Context, name, sub string) *flag.FlagSet {
	var last *flag.FlagSet
	e := quietEnv()
	e.onFlags = func(fs *flag.FlagSet) { last = fs }
	args := []string{"--help"}
	if sub != "" {
		args = []string{sub, "--help"}
	}
	runQuiet(ctx, e, name, args)
	return last
}

// subcommandTables are the commands whose subcommands are in a table; the
// others' are read from the usage lines of their help.
var subcommandTables = map[string]func() []command{
	"stores": storesCommands, "sessions": sessionsCommands, "memdir": memdirCommands, "dreams": dreamsCommands,
}

// subcommands are the subcommands of command name: from its table, else
// the words after "memstore NAME" in the usage lines its help begins with
// (Usage: memstore keys create ..., memstore keys ls ...).
func subcommands(ctx context.Context, name string) []string {
	var subs []string
	if table := subcommandTables[name]; table != nil {
		for _, c := range table() {
			subs = append(subs, c.name)
		}
		return subs
	}
	e := quietEnv()
	var help bytes.Buffer
	e.stdout, e.stderr, e.rawStdout, e.rawStderr = &help, &help, &help, &help
	runQuiet(ctx, e, name, []string{"--help"})
	usage := regexp.MustCompile(`^(?:Usage:)?\s+memstore ` + regexp.QuoteMeta(name) + ` \[?([a-z][a-z-]*)\b`)
	inUsage := false
	for _, line := range strings.Split(help.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "Usage:"):
			inUsage = true
		case !inUsage:
			continue
		case !strings.HasPrefix(line, " "):
			return subs // the usage lines end at the first line that is not one
		}
		if m := usage.FindStringSubmatch(line); m != nil && !slices.Contains(subs, m[1]) {
			subs = append(subs, m[1])
		}
	}
	return subs
}

// quietEnv is an environment that prints nothing and reads nothing.
func quietEnv() env {
	return env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
}

// runQuiet runs command name with args in e, for what it defines.
func runQuiet(ctx context.Context, e env, name string, args []string) {
	for _, c := range commands() {
		if c.name == name {
			c.run(ctx, e, args)
		}
	}
}

// storeNames are the names and IDs of the live stores of the database
// or server that words (or the environment) name, for --store; none when
// they cannot be listed within storeCompletionTimeout.
func storeNames(ctx context.Context, e env, words []string) []string {
	fs := flag.NewFlagSet("complete", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bf := addBackendFlags(fs, "complete", true)
	var args []string
	for i := 0; i < len(words); i++ { // the backend flags of the line, wherever they are
		name, _, hasValue := strings.Cut(strings.TrimLeft(words[i], "-"), "=")
		if !strings.HasPrefix(words[i], "-") || !backendValueFlags[name] || name == "store" {
			continue
		}
		args = append(args, words[i])
		if !hasValue && i+1 < len(words) {
			i++
			args = append(args, words[i])
		}
	}
	if fs.Parse(args) != nil {
		return nil
	}
	e.stderr = io.Discard
	ctx, cancel := context.WithTimeout(ctx, storeCompletionTimeout)
	defer cancel()
	c, err := bf.open(ctx, e)
	if err != nil {
		return nil
	}
	defer c.Close()
	page, err := c.Stores(ctx, c.caller, memstore.StoreFilter{Limit: memstore.MaxPageSize})
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range page.Items {
		if !slices.Contains(out, s.Name) && !strings.ContainsAny(s.Name, " \t\n") {
			out = append(out, s.Name)
		}
	}
	for _, s := range page.Items {
		out = append(out, s.ID)
	}
	return out
}

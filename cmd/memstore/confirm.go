package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// The rule of confirmation: a command asks before it does what no command
// can undo, and only then. Those commands are stores rm and stores
// archive, redact, sessions revoke and sessions rm, keys revoke, users rm,
// webhooks rm and tool prune. Whatever leaves a version behind is not
// asked for: rm of a memory (its versions stay, and put brings it back),
// mv, put, edit, import, and the updates, attach and detach. On a
// terminal the command asks; --yes answers for scripts; without a
// terminal to ask on and without --yes it refuses, changing nothing.

// addYesFlag defines --yes on fs, for a command that confirms.
func addYesFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("yes", false, "do it without asking: for scripts (without a terminal, required)")
}

// errDeclined ends a command that was not confirmed.
var errDeclined = errors.New("not confirmed; nothing was changed")

// confirm asks before command cmd does what, which cannot be undone
// ("delete memory store memstore_... and all its memories"): nil when yes
// (--yes) was given or the answer on the terminal is y or yes; otherwise
// an error, and the command changes nothing.
func confirm(e env, cmd string, yes bool, what string) error {
	if yes {
		return nil
	}
	f, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return usageError(e, "memstore %s: this would %s, which cannot be undone; add --yes to confirm (there is no terminal to ask on)", cmd, what)
	}
	fmt.Fprintf(e.stderr, "memstore %s: %s? This cannot be undone. [y/N] ", cmd, upperFirst(what))
	// A line longer than any answer is read no further.
	line, err := bufio.NewReader(io.LimitReader(f, 64)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errDeclined
}

// upperFirst is s with its first letter in upper case, for a question.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

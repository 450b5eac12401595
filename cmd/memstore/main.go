// Command memstore is persistent memory for AI agents: the memory tool, memory
// stores and the memory directory, in one binary.
//
// Each subcommand lives in its own file, with its help text beside it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is what a command may touch of the process: its standard streams and
// its environment.
type env struct {
	stdin io.Reader
	// stdout and stderr show every control character a terminal would
	// obey (termText): what commands print for people goes there.
	stdout, stderr io.Writer
	// rawStdout and rawStderr are the streams as they are, for what a
	// command prints exactly when asked (--raw), for JSON lines (through
	// newJSONWriter) and for an editor; nil means stdout and stderr.
	rawStdout, rawStderr io.Writer
	getenv               func(string) string
	// onFlags, when set, is given each flag set a command makes
	// (newFlags), for completion to learn the command's flags.
	onFlags func(*flag.FlagSet)
}

// raw is standard output as it is.
func (e env) raw() io.Writer {
	if e.rawStdout != nil {
		return e.rawStdout
	}
	return e.stdout
}

// rawErr is standard error as it is.
func (e env) rawErr() io.Writer {
	if e.rawStderr != nil {
		return e.rawStderr
	}
	return e.stderr
}

// command is one subcommand: its name, a one-line summary for the command
// list, and run, which parses its own flags.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "serve the memory stores API (/v1/memory_stores) over HTTP on a database", runServe},
		{"mcp", "serve the agent memory tools to an MCP client over stdio", runMCP},
		{"keys", "create, list and revoke the API keys of a database", runKeys},
		{"users", "create, list and remove the console's users, and set their passwords", runUsers},
		{"webhooks", "create, list and remove webhook endpoints, and see their deliveries", runWebhooks},
		{"vacuum", "give back the space of what was changed, deleted or redacted", runVacuum},
		{"tool", "serve the memory tool (memory_20250818) over JSON lines on a directory or a store", runTool},
		{"stores", "list, create, show, update, archive and delete memory stores", runStores},
		{"ls", "list the memories of a store", runLs},
		{"cat", "print a memory's content", runCat},
		{"put", "create or replace a memory from a file or standard input", runPut},
		{"edit", "edit a memory in $EDITOR", runEdit},
		{"mv", "rename a memory", runMv},
		{"rm", "delete a memory", runRm},
		{"log", "list the versions of a memory", runLog},
		{"show", "print a version and its content", runShow},
		{"diff", "compare a version with the one before it, or two versions", runDiff},
		{"redact", "erase a version's path and content for good", runRedact},
		{"grep", "search the memories of a store", runGrep},
		{"watch", "print the changes of a store as they happen", runWatch},
		{"sessions", "create, list, show and revoke sessions: agents' access to stores", runSessions},
		{"dream", "run a dream: the server's model consolidates a store from session transcripts", runDream},
		{"dreams", "list, show, cancel and archive dreams", runDreams},
		{"export", "write a store's memories to a directory or a JSON-lines file", runExport},
		{"import", "load memories into a store from a directory or a JSON-lines file", runImport},
		{"migrate", "copy a whole database into an empty one: a file to PostgreSQL, or back", runMigrate},
		{"claude", "run Claude Code with its team memory on a memstore server", runClaude},
		{"memdir", "the Claude-Code-style memory directory: path, prompt, log, lint, recall, sync", runMemdir},
		{"bench", "measure a memstore server: requests per second and latency percentiles", runBench},
		{"completion", "print a shell completion script: bash, zsh or fish", runCompletion},
		{"healthcheck", "ask a server whether it can serve (a container's HEALTHCHECK)", runHealthcheck},
		{"version", "print the version", runVersion},
	}
}

// exitCode is an error that asks for a specific exit status.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// Main runs memstore with args (without the program name) and returns the
// exit status: 0 on success, 1 on failure, 2 for a usage error.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	safeOut, safeErr := newTermWriter(stdout), newTermWriter(stderr)
	defer safeErr.Flush()
	defer safeOut.Flush()
	e := env{stdin: stdin, stdout: safeOut, stderr: safeErr, rawStdout: stdout, rawStderr: stderr, getenv: os.Getenv}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 { // memstore help COMMAND [SUB]
			return Main(ctx, append(slices.Clone(args[1:]), "--help"), stdin, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "-v" {
		args = append([]string{"version"}, args[1:]...)
	}
	if args[0] == completeCommand { // hidden: for the completion scripts
		return exitStatus(runComplete(ctx, e, args[1:]))
	}
	args = hoistCommand(args) // memstore --db FILE COMMAND ...
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		return exitStatus(reported(e, c.name, c.run(ctx, e, args[1:])))
	}
	fmt.Fprintf(stderr, "memstore: unknown command %q; run 'memstore help' for the list\n", args[0])
	return 2
}

// exitStatus is the exit status of what reported returned.
func exitStatus(err error) int {
	var code exitCode
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &code):
		return int(code)
	}
	return 2 // errUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "memstore: persistent memory for AI agents.")
	fmt.Fprintln(w, "\nUsage: memstore COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'memstore help COMMAND' (or 'memstore COMMAND --help') for a command's flags and examples.")
	fmt.Fprintln(w, "New here? Run 'memstore serve': on a new database it says what to do next.")
}

// errUsage marks a usage error that was already reported on stderr.
var errUsage = errors.New("usage error")

// newFlags returns a flag set that reports errors to e.stderr, and whose
// help (the command's help text, then its flags: writeHelp) parse prints
// on e.stdout when asked.
func newFlags(e env, name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet("memstore "+name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{Writer: e.stderr, stdout: e.stdout, help: help})
	if e.onFlags != nil {
		e.onFlags(fs)
	}
	fs.Usage = func() {} // parse prints what fits: the help, or a hint
	return fs
}

// parse parses args: --help prints the help on standard output and
// returns flag.ErrHelp; a flag error (already reported by flag) adds the
// usage lines on standard error and returns errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			helpAsked(fs)
			return err
		}
		usageHint(fs)
		return errUsage
	}
	return nil
}

// reported reports the error of command name on standard error, unless it
// was already, and returns what decides the exit status: nil,
// flag.ErrHelp, errUsage or an exitCode.
func reported(e env, name string, err error) error {
	var (
		code exitCode
		ue   usageErr
	)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, errUsage), errors.As(err, &code):
		return err
	case errors.As(err, &ue):
		return usageError(e, "memstore %s: %v", name, err)
	}
	fmt.Fprintf(e.stderr, "memstore %s: %v\n", name, err)
	return exitCode(1)
}

// usageErr is a usage error found where the command's output is out of
// reach: reported reports it, and the exit status is 2.
type usageErr string

func (u usageErr) Error() string { return string(u) }

func usageError(e env, format string, args ...any) error {
	fmt.Fprintf(e.stderr, format+"\n", args...)
	return errUsage
}

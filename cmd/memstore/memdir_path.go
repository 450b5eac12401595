package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"time"

	"github.com/memstore/memstore/memdir"
)

const memdirPathHelp = `Usage: memstore memdir path [--entrypoint | --team | --log [--date YYYY-MM-DD] | --agent NAME --scope user|project|local]
         [--cwd DIR] [--trust-project] [--settings FILE] [--managed-settings FILE] [--strict] [--json]

Prints the memory directory of the project in the working directory, the
one Claude Code uses, found by Claude Code's rules; or, with a flag, the
index (MEMORY.md), team memory (team/), a day's log, or an agent's own
memory directory.

The directory is the first of:
  - $CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, an absolute path (~ is not
    expanded);
  - autoMemoryDirectory (an absolute path or ~/...) from the first
    settings file that sets it: the managed settings file, --settings,
    .claude/settings.local.json and .claude/settings.json (these two only
    with --trust-project: a repository can commit either, and could
    otherwise point memory anywhere, ~/.ssh included), then
    $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json;
  - $CLAUDE_CONFIG_DIR/projects/NAME/memory/ (~/.claude/... without it),
    where NAME is the project's main checkout, shared by all its git
    worktrees, with every character other than a letter or digit turned
    into '-'; $CLAUDE_CODE_PROJECT_DIR_NAME replaces it when
    $CLAUDE_CONFIG_DIR is set, and $CLAUDE_CODE_REMOTE_MEMORY_DIR replaces
    the configuration directory.
An override that is not valid (relative, the root or near it, the home
directory) is ignored with a warning on standard error.

Memory is off with CLAUDE_CODE_DISABLE_AUTO_MEMORY=1, CLAUDE_CODE_SIMPLE=1,
CLAUDE_CODE_REMOTE=1 without CLAUDE_CODE_REMOTE_MEMORY_DIR, or
"autoMemoryEnabled": false in settings; CLAUDE_CODE_DISABLE_AUTO_MEMORY=0
turns it on whatever else says. When it is off, nothing is printed on
standard output and the exit status is 3; with --json the object is
printed, with "enabled": false, and the exit status is 0.

--json prints one object: the path, the directory, whether memory is on
and which rule decided, what chose the directory (source: env,
settings:FILE or default), the name under projects/ (slug), the working
directory, its git root and the repository's canonical root, and every
override ignored, with the reason.

--strict makes any warning an error (exit status 1, no path printed): an
override ignored, a settings file that cannot be read, a .git file that
was not followed. Use it where writing to any other directory than the
one configured would be wrong.

Exit status: 0 printed; 1 a warning under --strict, or an error; 2 usage;
3 memory is disabled (without --json); 5 the working directory or a
settings file cannot be read.
`

// memdirLocFlags are the flags that say where a project and its settings
// are, shared by the memdir subcommands.
type memdirLocFlags struct {
	cwd, settings, managed string
	trust                  bool
}

func addMemdirLocFlags(fs *flag.FlagSet) *memdirLocFlags {
	f := &memdirLocFlags{}
	fs.StringVar(&f.cwd, "cwd", "", "the project's working `DIR` (default: the working directory)")
	fs.BoolVar(&f.trust, "trust-project", false, "let the project's .claude/settings.json and settings.local.json choose the memory directory")
	fs.StringVar(&f.settings, "settings", "", "the settings `FILE` (or JSON) given to Claude Code's --settings")
	fs.StringVar(&f.managed, "managed-settings", memdir.ManagedSettingsFile(), "Claude Code's managed settings `FILE`; empty for none")
	return f
}

// options are the memdir options for these flags and the process's
// environment; warn receives the warnings.
func (f *memdirLocFlags) options(e env, warn func(string)) memdir.Options {
	home := e.getenv("HOME")
	if runtime.GOOS == "windows" {
		home = e.getenv("USERPROFILE")
	}
	return memdir.Options{
		Cwd: f.cwd, Getenv: e.getenv, Home: home, TrustProject: f.trust,
		SettingsFile: f.settings, PolicyFile: f.managed, Warn: warn,
	}
}

// memdirPathJSON is the --json output of memstore memdir path.
type memdirPathJSON struct {
	Path string `json:"path"`
	*memdir.Location
}

func runMemdirPath(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir path", memdirPathHelp)
	entrypoint := fs.Bool("entrypoint", false, "print the index, MEMORY.md")
	team := fs.Bool("team", false, "print the team memory directory, team/")
	logPath := fs.Bool("log", false, "print the daily log of today (or of --date)")
	date := fs.String("date", "", "with --log, the `DAY` (YYYY-MM-DD; default: today, local time)")
	agent := fs.String("agent", "", "print the memory directory of the agent `NAME`")
	scope := newChoice("", string(memdir.ScopeUser), string(memdir.ScopeProject), string(memdir.ScopeLocal))
	fs.Var(scope, "scope", "with --agent, where its memory is: `user`, project or local")
	strict := fs.Bool("strict", false, "fail on any warning (an override ignored, a settings file unreadable)")
	asJSON := fs.Bool("json", false, "print a JSON object with how the directory was found")
	lf := addMemdirLocFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	const cmd = "memstore memdir path"
	n := 0
	for _, b := range []bool{*entrypoint, *team, *logPath, *agent != ""} {
		if b {
			n++
		}
	}
	switch {
	case len(pos) > 0:
		return usageError(e, "%s: unexpected argument %q", cmd, pos[0])
	case n > 1:
		return usageError(e, "%s: give at most one of --entrypoint, --team, --log and --agent", cmd)
	case *date != "" && !*logPath:
		return usageError(e, "%s: --date goes with --log", cmd)
	case *agent != "" && scope.value == "":
		return usageError(e, "%s: say where the agent's memory is with --scope user, project or local", cmd)
	case *agent == "" && scope.value != "":
		return usageError(e, "%s: --scope goes with --agent NAME", cmd)
	}
	day := time.Now()
	if *date != "" {
		if day, err = time.ParseInLocation(time.DateOnly, *date, time.Local); err != nil {
			return usageError(e, "%s: --date %q: want a day as YYYY-MM-DD", cmd, *date)
		}
	}

	var warnings int
	o := lf.options(e, func(s string) {
		warnings++
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", cmd, s)
	})
	loc, err := memdir.Resolve(o)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", cmd, err)
		return exitLocalIO
	}
	var path string
	switch {
	case *entrypoint:
		path = loc.Entrypoint()
	case *team:
		path = loc.TeamDir()
	case *logPath:
		path = loc.LogPath(day)
	case *agent != "":
		if path, err = memdir.AgentDir(o, *agent, memdir.Scope(scope.value)); err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", cmd, err)
			return exitLocalIO
		}
	default:
		path = loc.Dir
	}

	failed := !loc.Enabled || *strict && warnings > 0
	if *asJSON {
		if err := printJSON(e.stdout, memdirPathJSON{Path: path, Location: loc}); err != nil {
			return err
		}
	} else if !failed {
		fmt.Fprintln(e.stdout, path)
	}
	switch {
	case !loc.Enabled && *asJSON:
		// The object, with enabled false, is the answer asked for.
		fmt.Fprintf(e.stderr, "%s: note: memory is disabled (by %s)\n", cmd, loc.DisabledBy)
	case !loc.Enabled:
		fmt.Fprintf(e.stderr, "%s: memory is disabled (by %s)\n", cmd, loc.DisabledBy)
		return exitDisabled
	}
	if *strict && warnings > 0 {
		fmt.Fprintf(e.stderr, "%s: %s under --strict\n", cmd, plural(warnings, "warning", "warnings"))
		return exitFindings
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/memstore/memstore/memdir"
)

const memdirPromptHelp = `Usage: memstore memdir prompt [--team] [--max-chars N] [--hook session-start]
         [--cwd DIR] [--dir DIR] [--trust-project] [--settings FILE] [--json] [--raw]

Prints what an agent should know of its memory at the start of a session:
memstore's guidance on using the memory directory (what it is, the four
types of memory, what not to save, how to save, when to read, and to check
a memory before relying on it), then "## MEMORY.md" and the index, loaded
as Claude Code loads it: frontmatter and HTML comments removed, at most 200
lines and 25,000 characters, with a warning when it was cut. --team adds
the team directory (team/), the rules on what goes there, and its index.

--max-chars keeps the output within N characters (UTF-16 units): the
guidance shrinks first, to a paragraph and then to a line; then the team
index and the index lose lines from their ends, and a note names the files
that hold them whole.

--hook session-start runs it as a Claude Code SessionStart hook: it reads
the hook's JSON on standard input (its cwd is the project unless --cwd or
--dir says otherwise), prints
{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":...}}
within --max-chars (10,000 by default), and always exits 0: when memory is
off or anything fails it prints nothing, and says why on standard error.
Install it in .claude/settings.json or ~/.claude/settings.json:

  {"hooks": {"SessionStart": [{"hooks": [
    {"type": "command", "command": "memstore memdir prompt --hook session-start"}]}]}}

--dir names the memory directory itself, instead of finding the project's.
Control characters a terminal would obey are shown as visible symbols;
--raw prints the text exactly.
`

// hookMaxChars is the default budget of hook output: Claude Code passes
// additional context of up to 10,000 characters whole.
const hookMaxChars = 10_000

func runMemdirPrompt(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir prompt", memdirPromptHelp)
	t := addMemdirTarget(fs)
	team := fs.Bool("team", false, "add the team directory, its rules and its index")
	maxChars := fs.Int("max-chars", 0, "keep the output within `N` characters; 0: no limit (10000 with --hook)")
	hook := newChoice("", "session-start")
	fs.Var(hook, "hook", "run as a Claude Code hook: `session-start`")
	textOut := addRawFlag(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore memdir prompt: unexpected argument %q", pos[0])
	}
	if *maxChars < 0 {
		return usageError(e, "memstore memdir prompt: --max-chars must be 0 or more")
	}
	if hook.value != "" {
		if t.json {
			return usageError(e, "memstore memdir prompt: --hook and --json do not go together")
		}
		if !flagGiven(fs, "max-chars") {
			*maxChars = hookMaxChars
		}
		in := readHookInput(e, "memdir prompt")
		text, ok := memdirPromptText(e, t, in.Cwd, *team, *maxChars)
		if ok {
			printJSON(e.stdout, hookOutput("SessionStart", text))
		}
		return nil
	}

	loc, err := t.locateEnabled(e, "memdir prompt")
	if err != nil {
		return err
	}
	p, err := loadPrompt(loc.Dir, *team)
	if err != nil {
		return localIOError(e, "memdir prompt", err)
	}
	text, shrunk := p.Render(*maxChars)
	if !t.json {
		_, err := io.WriteString(textOut(), text)
		return err
	}
	out := struct {
		Dir       string         `json:"dir"`
		Prompt    string         `json:"prompt"`
		Shrunk    bool           `json:"shrunk"`
		Index     promptIndexJS  `json:"index"`
		TeamIndex *promptIndexJS `json:"team_index,omitempty"`
	}{Dir: loc.Dir, Prompt: text, Shrunk: shrunk, Index: promptIndexJSON(filepath.Join(loc.Dir, "MEMORY.md"), p.Index)}
	if *team {
		ti := promptIndexJSON(filepath.Join(loc.Dir, "team", "MEMORY.md"), p.TeamIndex)
		out.TeamIndex = &ti
	}
	return printJSON(e.stdout, out)
}

// promptIndexJS describes a loaded index for --json.
type promptIndexJS struct {
	Path      string `json:"path"`
	Lines     int    `json:"lines"`
	Units     int    `json:"units"`
	Truncated bool   `json:"truncated"`
	Warning   string `json:"warning,omitempty"`
}

func promptIndexJSON(path string, x memdir.Index) promptIndexJS {
	if x.Content == "" {
		return promptIndexJS{Path: path}
	}
	return promptIndexJS{Path: path, Lines: x.Lines, Units: x.Units, Truncated: x.Truncated(), Warning: x.Warning}
}

// memdirPromptText is the prompt for the session-start hook, with ok
// false (and the reason on stderr) when there is nothing to print.
func memdirPromptText(e env, t *memdirTarget, hookCwd string, team bool, maxChars int) (string, bool) {
	loc, err := t.locate(e, "memdir prompt", hookCwd)
	if err != nil {
		return "", false
	}
	if !loc.Enabled {
		fmt.Fprintf(e.stderr, "memstore memdir prompt: memory is disabled (by %s)\n", loc.DisabledBy)
		return "", false
	}
	p, err := loadPrompt(loc.Dir, team)
	if err != nil {
		fmt.Fprintf(e.stderr, "memstore memdir prompt: %v\n", err)
		return "", false
	}
	text, _ := p.Render(maxChars)
	return text, true
}

// loadPrompt reads the indexes of the directory dir.
func loadPrompt(dir string, team bool) (memdir.Prompt, error) {
	p := memdir.Prompt{Dir: dir, Team: team}
	var err error
	if p.Index, err = memdir.ReadIndex(filepath.Join(dir, "MEMORY.md")); err != nil {
		return p, err
	}
	if team {
		if p.TeamIndex, err = memdir.ReadIndex(filepath.Join(dir, "team", "MEMORY.md")); err != nil {
			return p, err
		}
	}
	return p, nil
}

// memdirTarget is how a memdir subcommand that reads or writes the
// directory is told which: the location flags shared with memstore memdir
// path, --dir to name the directory itself, and --json.
type memdirTarget struct {
	loc  *memdirLocFlags
	dir  string
	json bool
}

func addMemdirTarget(fs *flag.FlagSet) *memdirTarget {
	t := &memdirTarget{loc: addMemdirLocFlags(fs)}
	fs.StringVar(&t.dir, "dir", "", "work on the memory directory `DIR` itself instead of finding the project's")
	fs.BoolVar(&t.json, "json", false, "print JSON")
	return t
}

// locate finds the memory directory: --dir, else memdir.Resolve from
// --cwd, else from cwd (a hook's), else from the working directory. An
// error was reported on stderr and is the exit status.
func (t *memdirTarget) locate(e env, cmd, cwd string) (*memdir.Location, error) {
	if t.dir != "" {
		dir, err := filepath.Abs(t.dir)
		if err != nil {
			return nil, localIOError(e, cmd, err)
		}
		return &memdir.Location{Enabled: true, EnabledBy: "--dir", Source: "--dir", Dir: dir + string(filepath.Separator)}, nil
	}
	o := t.loc.options(e, func(s string) { fmt.Fprintf(e.stderr, "memstore %s: warning: %s\n", cmd, s) })
	if o.Cwd == "" {
		o.Cwd = cwd
	}
	loc, err := memdir.Resolve(o)
	if err != nil {
		return nil, localIOError(e, cmd, err)
	}
	return loc, nil
}

// locateEnabled finds the memory directory as locate does from the
// working directory, and fails with exitDisabled, said on stderr, when
// memory is off there.
func (t *memdirTarget) locateEnabled(e env, cmd string) (*memdir.Location, error) {
	loc, err := t.locate(e, cmd, "")
	if err != nil {
		return nil, err
	}
	if !loc.Enabled {
		fmt.Fprintf(e.stderr, "memstore %s: memory is disabled (by %s); give --dir DIR to use a directory anyway\n", cmd, loc.DisabledBy)
		return nil, exitDisabled
	}
	return loc, nil
}

// hookInput is what Claude Code passes a hook on standard input; only the
// fields memstore uses.
type hookInput struct {
	HookEventName string `json:"hook_event_name"`
	Cwd           string `json:"cwd"`
	Prompt        string `json:"prompt"` // UserPromptSubmit
}

// readHookInput reads the hook's JSON from standard input. A hook must
// not fail the session, so input that does not parse is reported on
// stderr and read as empty.
func readHookInput(e env, cmd string) hookInput {
	var in hookInput
	if e.stdin == nil {
		return in
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		fmt.Fprintf(e.stderr, "memstore %s: reading the hook input: %v\n", cmd, err)
		return in
	}
	if len(b) == 0 {
		return in
	}
	if err := json.Unmarshal(b, &in); err != nil {
		fmt.Fprintf(e.stderr, "memstore %s: the hook input is not JSON: %v\n", cmd, err)
		return hookInput{}
	}
	return in
}

// hookOutputJS is a hook's answer that adds context for the model.
type hookOutputJS struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func hookOutput(event, context string) hookOutputJS {
	var o hookOutputJS
	o.HookSpecificOutput.HookEventName = event
	o.HookSpecificOutput.AdditionalContext = context
	return o
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/agentloop"
	"github.com/memstore/memstore/memdir"
	"github.com/memstore/memstore/memorytool"
)

const memdirDreamHelp = `Usage: memstore memdir dream [--dry-run] [--model ID] [--model-base-url URL]
         [--model-api-key-file FILE] [--max-steps N] [--max-tokens N]
         [--max-writes N] [--max-time DURATION] [--cwd DIR | --dir DIR] [--json]

Distills the daily logs written since the last dream into topic files and
MEMORY.md, as Claude Code's /dream does. A model, through the memory tool,
reads the new log entries, the index and the topic files, and writes,
merges or corrects topic files and the index. It works on a copy of the
directory; when it finishes, its changes are applied to the directory all
at once (a file changed there meanwhile refuses them all), an index left
over its limits (200 lines, 25,000 bytes) is rebuilt from the topic files,
and .dream.json records how far each log was consolidated, so that the
next dream starts after it. A run that fails or reaches a cap applies
nothing. Logs are never changed. Where the directory is in git, review the
result with git diff.

--dry-run prints the plan, the log entries the dream would read, and calls
no model. The model is Anthropic's API with ANTHROPIC_API_KEY, or any
endpoint that speaks the Messages API (--model-base-url); a dream's cost
is the tokens of its answers, reported when it ends.

Exit status: 0 done; 1 nothing new to consolidate; 2 usage; 3 memory is
disabled; 5 a file cannot be read or written, or the directory changed
during the dream; 6 the model failed, or the run reached a cap.
`

// memdirDreamSystem tells the model what a dream is for; the memory
// guidance, with the directory as the tool names it, follows.
const memdirDreamSystem = `You are consolidating a memory directory, the way a nightly dream does:
turning the raw daily logs into lasting, well-organized memories. You work
only through the memory tool, on /memories.

- Read the new log entries you are given, /memories/MEMORY.md and the topic
  files that bear on them.
- Write what is worth keeping into topic files, one memory each, with
  frontmatter (name, description, metadata.type: user, feedback, project or
  reference). Merge into an existing topic file rather than adding a near
  duplicate; correct or delete what the logs show is no longer true.
- Keep /memories/MEMORY.md an index: one line per topic file,
  "- [Title](file.md) — hook", under 150 characters, 200 lines at most.
- Never change anything under /memories/logs/: the logs are the record.
- Never write secrets (passwords, API keys, tokens, private keys).
- When done, answer with a short summary of what you changed.

`

func runMemdirDream(ctx context.Context, e env, args []string) error {
	const cmd = "memdir dream"
	fs := newFlags(e, cmd, memdirDreamHelp)
	t := addMemdirTarget(fs)
	mf := addModelFlags(fs)
	dryRun := fs.Bool("dry-run", false, "print the log entries the dream would read; call no model, change nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore %s: unexpected argument %q", cmd, pos[0])
	}
	var cfg agentloop.Config
	var lim agentloop.Limits
	if !*dryRun {
		if cfg, lim, err = mf.resolve(e, cmd, fs); err != nil {
			return err
		}
	}
	loc, err := t.locateEnabled(e, cmd)
	if err != nil {
		return err
	}
	dir := loc.Dir

	// A first look, which writes nothing: a dry run, or nothing new, ends
	// here.
	st, err := memdir.ReadDreamState(dir)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	parts, err := memdir.PendingLogs(dir, st, memdir.MaxDreamLogBytes)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	if *dryRun {
		if err := printDreamPlan(e, t.json, dir, st, parts); err != nil {
			return err
		}
		if len(parts) == 0 {
			return exitFindings
		}
		return nil
	}
	if len(parts) > 0 {
		// Under the lock, after an interrupted apply is finished, again.
		s, err := memdir.BeginStaging(dir)
		if err != nil {
			return localIOError(e, cmd, err)
		}
		defer s.Discard()
		if st, err = memdir.ReadDreamState(dir); err != nil {
			return localIOError(e, cmd, err)
		}
		if parts, err = memdir.PendingLogs(dir, st, memdir.MaxDreamLogBytes); err != nil {
			return localIOError(e, cmd, err)
		}
		if len(parts) > 0 {
			return dreamOnce(ctx, e, cmd, t.json, cfg, lim, dir, s, st, parts)
		}
	}
	if t.json {
		return errors.Join(printJSON(e.stdout, dreamJSON{Dir: dir, Logs: []memdir.LogPart{}, Changes: []memdir.Change{}}), exitFindings)
	}
	fmt.Fprintf(e.stdout, "nothing to consolidate: no daily log entries since the last dream%s\n", sinceText(st))
	return exitFindings
}

// dreamOnce runs the model on the staging copy s for the log parts and
// applies what it did, recording them consolidated.
func dreamOnce(ctx context.Context, e env, cmd string, asJSON bool, cfg agentloop.Config, lim agentloop.Limits, dir string, s *memdir.Staging, st memdir.DreamState, parts []memdir.LogPart) error {
	index, err := memdir.ReadIndex(filepath.Join(s.Dir, "MEMORY.md"))
	if err != nil {
		return localIOError(e, cmd, err)
	}
	res, changes, rebuilt, err := runStaged(ctx, e, cmd, "the dream", cfg, lim, s, memdirDreamSystem, dreamPrompt(parts, index, time.Now()))
	if err != nil {
		return err
	}
	now := time.Now()
	next := st.Consolidated(parts, now)
	if err := s.Apply(changes, &next); err != nil {
		return localIOError(e, cmd, err)
	}
	out := dreamJSON{Dir: dir, Logs: parts, Changes: changes, IndexRebuilt: rebuilt, Steps: res.Steps, Usage: usageOf(res.Usage), Summary: res.Final}
	if asJSON {
		return printJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "consolidated %s of daily logs in %s\n", plural(len(parts), "part", "parts"), cell(dir))
	for _, c := range changes {
		fmt.Fprintf(e.stdout, "  %-7s %s\n", c.Op, cell(c.Path))
	}
	if rebuilt {
		fmt.Fprintln(e.stdout, "  MEMORY.md was over its limits and was rebuilt from the topic files")
	}
	_, err = fmt.Fprintln(e.stdout, usageLine(res))
	return err
}

// runStaged runs the model, told system and then the memory guidance, on
// prompt in the staging copy s, and reads what it changed there, MEMORY.md
// fitted to its limits first. A run that fails is said on stderr (what
// names it) and is exit status 6: nothing is applied.
func runStaged(ctx context.Context, e env, cmd, what string, cfg agentloop.Config, lim agentloop.Limits, s *memdir.Staging, system, prompt string) (res agentloop.Result, changes []memdir.Change, rebuilt bool, err error) {
	res, err = runMemoryModel(ctx, cfg, lim, s.Dir, system+memdir.Guidance(memorytool.Root, false, memdir.DetailFull), prompt, true)
	if err != nil {
		fmt.Fprintf(e.stderr, "memstore %s: %s stopped after %s: %v; nothing was applied\n", cmd, what, plural(res.Steps, "step", "steps"), err)
		return res, nil, false, exitServer
	}
	if rebuilt, err = s.FitIndex(); err != nil {
		return res, nil, false, localIOError(e, cmd, err)
	}
	if changes, err = s.Changes(); err != nil {
		return res, nil, false, localIOError(e, cmd, err)
	}
	return res, changes, rebuilt, nil
}

// dreamJSON is the --json output of memstore memdir dream.
type dreamJSON struct {
	Dir          string           `json:"dir"`
	DryRun       bool             `json:"dry_run,omitempty"`
	Logs         []memdir.LogPart `json:"logs"`
	Changes      []memdir.Change  `json:"changes"`
	IndexRebuilt bool             `json:"index_rebuilt,omitempty"`
	Steps        int              `json:"steps"`
	Usage        usageJSON        `json:"usage"`
	Summary      string           `json:"summary,omitempty"`
}

func sinceText(st memdir.DreamState) string {
	if st.LastDream.IsZero() {
		return ""
	}
	return " (" + st.LastDream.Local().Format(time.DateTime) + ")"
}

// printDreamPlan prints what a dream would read.
func printDreamPlan(e env, asJSON bool, dir string, st memdir.DreamState, parts []memdir.LogPart) error {
	if asJSON {
		if parts == nil {
			parts = []memdir.LogPart{}
		}
		return printJSON(e.stdout, dreamJSON{Dir: dir, DryRun: true, Logs: parts, Changes: []memdir.Change{}})
	}
	if len(parts) == 0 {
		_, err := fmt.Fprintf(e.stdout, "nothing to consolidate: no daily log entries since the last dream%s\n", sinceText(st))
		return err
	}
	fmt.Fprintf(e.stdout, "a dream of %s would read:\n", cell(dir))
	for _, p := range parts {
		fmt.Fprintf(e.stdout, "  %s, bytes %d to %d (%s)\n", cell(p.Path), p.From, p.To, plural(strings.Count(p.Text, "\n- ")+boolInt(strings.HasPrefix(p.Text, "- ")), "entry", "entries"))
	}
	_, err := fmt.Fprintln(e.stdout, "then write topic files and MEMORY.md; nothing was changed (--dry-run)")
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dreamPrompt gives the model the new log entries and the index.
func dreamPrompt(parts []memdir.LogPart, index memdir.Index, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Today is %s. These daily log entries are new since the last dream:\n\n", now.Format(time.DateOnly))
	for _, p := range parts {
		fmt.Fprintf(&b, "<log path=%q>\n%s</log>\n\n", path.Join(memorytool.Root, p.Path), p.Text)
	}
	b.WriteString("The index, /memories/MEMORY.md, holds:\n<index>\n")
	if index.Content == "" {
		b.WriteString("(empty)\n")
	} else {
		b.WriteString(index.Content + "\n")
	}
	b.WriteString("</index>\n\nConsolidate the log entries into the topic files and the index.")
	return b.String()
}

// runMemoryModel runs the model with the memory tool over dir, which it
// cannot leave; with readOnlyLogs, writes under logs/ are refused. Every
// write is held to the secret guard and a memory's size.
func runMemoryModel(ctx context.Context, cfg agentloop.Config, lim agentloop.Limits, dir, system, prompt string, readOnlyLogs bool) (agentloop.Result, error) {
	local, err := memorytool.OpenLocal(dir, memorytool.Options{DenySecrets: true, MaxFileBytes: memstore.MaxContentBytes})
	if err != nil {
		return agentloop.Result{}, err
	}
	defer local.Close()
	var h memorytool.Handler = local
	if readOnlyLogs {
		h = logsReadOnly{local}
	}
	return agentloop.Do(ctx, cfg, agentloop.Run{System: system, Prompt: prompt, Tools: memoryToolset{h}, Limits: lim})
}

// memoryToolset offers the memory tool to the model as a custom tool.
type memoryToolset struct{ h memorytool.Handler }

func (memoryToolset) Tools() []agentloop.Tool {
	return []agentloop.Tool{{Name: memorytool.ToolName, Description: memorytool.Description, InputSchema: json.RawMessage(memorytool.InputSchema)}}
}

func (t memoryToolset) Call(ctx context.Context, name string, input json.RawMessage) (string, bool) {
	if name != memorytool.ToolName {
		return "Error: there is no tool " + name + "; the only tool is " + memorytool.ToolName, true
	}
	r := memorytool.Execute(ctx, t.h, input)
	return r.Content, r.IsError
}

// logsReadOnly refuses the model's writes under /memories/logs: the daily
// logs are the record a dream reads, never its output.
type logsReadOnly struct{ memorytool.Handler }

func inLogs(p string) error {
	c := path.Clean(p)
	if c == memorytool.Root+"/logs" || strings.HasPrefix(c, memorytool.Root+"/logs/") {
		return &memorytool.Error{Message: "The daily logs under /memories/logs are read-only during a dream: write topic files and MEMORY.md instead"}
	}
	return nil
}

func (l logsReadOnly) Create(ctx context.Context, p, text string) (string, error) {
	if err := inLogs(p); err != nil {
		return "", err
	}
	return l.Handler.Create(ctx, p, text)
}

func (l logsReadOnly) StrReplace(ctx context.Context, p, oldStr, newStr string) (string, error) {
	if err := inLogs(p); err != nil {
		return "", err
	}
	return l.Handler.StrReplace(ctx, p, oldStr, newStr)
}

func (l logsReadOnly) Insert(ctx context.Context, p string, line int, text string) (string, error) {
	if err := inLogs(p); err != nil {
		return "", err
	}
	return l.Handler.Insert(ctx, p, line, text)
}

func (l logsReadOnly) Delete(ctx context.Context, p string) (string, error) {
	if err := inLogs(p); err != nil {
		return "", err
	}
	return l.Handler.Delete(ctx, p)
}

func (l logsReadOnly) Rename(ctx context.Context, oldPath, newPath string) (string, error) {
	if err := cmp.Or(inLogs(oldPath), inLogs(newPath)); err != nil {
		return "", err
	}
	return l.Handler.Rename(ctx, oldPath, newPath)
}

package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/memdir"
)

var memdirLintHelp = `Usage: memstore memdir lint [--fix] [--strict]
         [--cwd DIR] [--dir DIR] [--trust-project] [--settings FILE] [--json]

Checks the memory directory, and its team directory, for what would hide,
lose or expose a memory. Each finding is printed as FILE:LINE: SEVERITY:
MESSAGE [RULE], the rule a stable identifier:

  index-over-lines      MEMORY.md has more than the ` + strconv.Itoa(memdir.MaxIndexLines) + ` lines that are loaded
  index-over-size       MEMORY.md is over the ` + strconv.Itoa(memdir.MaxIndexUnits) + ` characters that are loaded
  index-near-lines      ... more than ` + strconv.Itoa(memdir.NearIndexLines) + ` lines
  index-near-size       ... more than ` + strconv.Itoa(memdir.NearIndexUnits) + ` characters
  index-frontmatter     MEMORY.md has frontmatter: it is an index, not a memory
  index-line-format     a line is not "- [Title](file.md) — one-line hook"
  index-line-long       a line is over ` + strconv.Itoa(memdir.IndexLineTarget) + ` characters
  index-line-too-long   a line is over ` + strconv.Itoa(memdir.IndexLineMax) + ` characters
  index-dangling-link   a line links to a file that does not exist
  index-missing-topic   a topic file has no line in the index
  index-missing         topic files but no MEMORY.md
  frontmatter-missing   a topic file has no frontmatter
  frontmatter-invalid   its frontmatter does not parse
  frontmatter-field     it lacks name, description or type, or has a bad modified
  type-unknown          its type is not user, feedback, project or reference
  name-duplicate        two topic files have the same name
  secret                a file looks like it holds a credential (an error in team/)
  file-long             a topic file is longer than recall shows (` + strconv.Itoa(memdir.RecallMaxLines) + ` lines, ` + strconv.Itoa(memdir.RecallMaxBytes) + ` bytes)
  file-too-large        a topic file is over the ` + strconv.Itoa(memstore.MaxContentBytes) + ` bytes sync carries

--fix rebuilds MEMORY.md (and team/MEMORY.md) from the topic files: one line
per file, from its frontmatter's name and description, newest first (by
the frontmatter's modified, else the file's time), as many as fit in ` + strconv.Itoa(memdir.MaxIndexLines) + `
lines and ` + strconv.Itoa(memdir.MaxIndexUnits) + ` characters, so that the memories the limits leave out are
the oldest, never the newest. Each index is replaced atomically (keeping
its mode, less any execute bit), and only when it changes. Then the
directory is checked again.

--dir names the memory directory itself, instead of finding the project's.
--json prints {"dir", "findings": [{rule, severity, file, line, message}],
"fixed": [...]}.

Exit status: 0 no error (warnings are printed); 1 errors, or warnings with
--strict; 2 usage; 5 local I/O error.
`

func runMemdirLint(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir lint", memdirLintHelp)
	t := addMemdirTarget(fs)
	fix := fs.Bool("fix", false, "rebuild the indexes from the topic files, newest first, then check")
	strict := fs.Bool("strict", false, "fail on warnings too")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	const cmd = "memdir lint"
	if len(pos) > 0 {
		return usageError(e, "memstore %s: unexpected argument %q", cmd, pos[0])
	}
	loc, err := t.locate(e, cmd, "")
	if err != nil {
		return err
	}
	if !loc.Enabled {
		// Checking files is still useful; say why an agent will not see them.
		fmt.Fprintf(e.stderr, "memstore %s: note: memory is disabled here (by %s)\n", cmd, loc.DisabledBy)
	}
	var fixed []memdir.FixResult
	if *fix {
		if fixed, err = memdir.FixIndex(loc.Dir); err != nil {
			return localIOError(e, cmd, err)
		}
	}
	findings, err := memdir.Lint(loc.Dir)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	errs := 0
	for _, f := range findings {
		if f.Severity == memdir.SeverityError {
			errs++
		}
	}
	if t.json {
		out := struct {
			Dir      string             `json:"dir"`
			Findings []memdir.Finding   `json:"findings"`
			Fixed    []memdir.FixResult `json:"fixed,omitempty"`
		}{loc.Dir, findings, fixed}
		if out.Findings == nil {
			out.Findings = []memdir.Finding{}
		}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		for _, r := range fixed {
			what := "rebuilt " + r.Index
			if !r.Changed {
				what = r.Index + " already up to date"
			}
			fmt.Fprintf(e.stdout, "%s: %s", what, plural(r.Entries, "entry", "entries"))
			if len(r.Omitted) > 0 {
				fmt.Fprintf(e.stdout, "; %d oldest left out by the limits: %s", len(r.Omitted), strings.Join(shortList(r.Omitted, 5), ", "))
			}
			fmt.Fprintln(e.stdout)
		}
		for _, f := range findings {
			at := f.File
			if f.Line > 0 {
				at = fmt.Sprintf("%s:%d", f.File, f.Line)
			}
			fmt.Fprintf(e.stdout, "%s: %s: %s [%s]\n", cell(at), f.Severity, cell(f.Message), f.Rule)
		}
		if len(findings) > 0 {
			fmt.Fprintf(e.stderr, "%s, %s in %s\n", plural(errs, "error", "errors"), plural(len(findings)-errs, "warning", "warnings"), loc.Dir)
		}
	}
	if errs > 0 || *strict && len(findings) > 0 {
		return exitFindings
	}
	return nil
}

// shortList is the first n of items, then "and N more".
func shortList(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
}

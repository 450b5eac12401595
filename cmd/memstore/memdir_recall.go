package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/memdir"
)

const memdirRecallHelp = `Usage: memstore memdir recall [--limit 5] [--body] [--team] [--conversation] [--max-chars N]
         [--mode lexical|semantic|hybrid] [--embed-model-file DIR | --embed-url URL --embed-model MODEL]
         [--search-semantic-weight W]
         [--cwd DIR] [--dir DIR] [--trust-project] [--settings FILE] [--json] [--raw] QUERY...
       memstore memdir recall --hook user-prompt-submit [flags]

Finds the memories that bear on QUERY, without a model: the topic files of
the memory directory are ranked by BM25 over their name, their description
(which counts double) and their file name, and with --body their text too.
Only the 200 most recently modified files are searched, and with --team
the team directory's as well. Each hit is printed under a heading with its
file and age ("saved 3 days ago", from the frontmatter's modified, else
the file's time), followed by its content, cut at 200 lines and 4,096
bytes.

--conversation ranks the files as turns of conversations, one a file, the
conversation their directory and the turn the number in their name
(chats/ana/0007.md): each turn's score adds its neighbours', the turns
next to it at half weight and two away at a quarter, and a turn beside a
match is found though it has none of the query's words, as a server's
search does for a store of conversations. Files whose names hold no number rank
as without it.

With an embedding model, recall matches by meaning too: --embed-model-file
names a model2vec model's directory, read in the process; --embed-url an
OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, OpenAI, ...) with
--embed-model, its key from --embed-api-key-file or MEMSTORE_EMBED_API_KEY
(docs/search.md says where to get a small model). --mode semantic ranks
the files by the nearness of their text (path and content, whatever
--body says) to the query; hybrid, the default with a model, fuses that
with the ranking by words as a server's hybrid search does, the semantic
ranking weighted by --search-semantic-weight (0.2; 0 to 1); lexical, the
default without one, ranks by words alone. The files' vectors are kept in
the directory's .recall-vectors.json, so that a recall embeds only the
files that changed and the query. As a hook, a model that fails leaves
recall by words.

--hook user-prompt-submit runs it as a Claude Code UserPromptSubmit hook:
the query is the prompt in the hook's JSON on standard input (its cwd is
the project unless --cwd or --dir says otherwise), and the hits, if any,
are printed as
{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":...}}
within --max-chars (10,000 by default). It always exits 0: when memory is
off, nothing matches or anything fails it prints nothing. Install it in
.claude/settings.json or ~/.claude/settings.json:

  {"hooks": {"UserPromptSubmit": [{"hooks": [
    {"type": "command", "command": "memstore memdir recall --hook user-prompt-submit"}]}]}}

--dir names the memory directory itself, instead of finding the project's.
--json prints {"dir", "query", "hits": [{file, name, description, type,
score, modified, age, content, truncated}]}. Control characters a terminal
would obey are shown as visible symbols; --raw prints the text exactly.

Exit status: 0 found; 1 nothing found; 2 usage; 5 local I/O error; 6 the
embedding model failed.
`

func runMemdirRecall(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir recall", memdirRecallHelp)
	t := addMemdirTarget(fs)
	limit := fs.Int("limit", 5, "the most `N` memories to print")
	body := fs.Bool("body", false, "search the memories' text too, not only name, description and file name")
	team := fs.Bool("team", false, "search the team directory too")
	conversation := fs.Bool("conversation", false, "rank the files as turns of conversations (chats/NAME/0007.md), each with its neighbours")
	mode := newChoice("", memstore.ModeLexical, memstore.ModeSemantic, memstore.ModeHybrid)
	fs.Var(mode, "mode", "how to match: `lexical`, semantic or hybrid (default hybrid with an embedding model, lexical without)")
	var model embedFlags
	model.register(fs)
	maxChars := fs.Int("max-chars", 0, "keep the output within `N` characters; 0: no limit (10000 with --hook)")
	hook := newChoice("", "user-prompt-submit")
	fs.Var(hook, "hook", "run as a Claude Code hook: `user-prompt-submit`")
	out := addRawFlag(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	const cmd = "memdir recall"
	switch {
	case *limit < 1 || *limit > 100:
		return usageError(e, "memstore %s: --limit must be from 1 to 100", cmd)
	case *maxChars < 0:
		return usageError(e, "memstore %s: --max-chars must be 0 or more", cmd)
	case hook.value != "" && len(pos) > 0:
		return usageError(e, "memstore %s: with --hook, the query is the hook's prompt; give no QUERY", cmd)
	case hook.value != "" && t.json:
		return usageError(e, "memstore %s: --hook and --json do not go together", cmd)
	case hook.value == "" && len(pos) == 0:
		return usageError(e, "memstore %s: say what to recall: QUERY...", cmd)
	case mode.value != "" && mode.value != memstore.ModeLexical && model.url == "" && model.modelFile == "":
		return usageError(e, "memstore %s: --mode %s needs an embedding model: --embed-model-file DIR (a model2vec model), or --embed-url URL and --embed-model MODEL", cmd, mode.value)
	}
	model.cmd = cmd
	opts := memdir.RecallOptions{Limit: *limit, Body: *body, Team: *team, Conversation: *conversation, Mode: mode.value, SemanticWeight: &model.weight}
	// useModel loads the model, if one is given; the hook does so only
	// once it knows it will recall.
	useModel := func() error {
		if err := model.resolve(e); err != nil {
			return err
		}
		opts.Embedder = model.embedder
		if opts.Mode == "" && opts.Embedder != nil {
			opts.Mode = memstore.ModeHybrid
		}
		return nil
	}
	now := time.Now()

	if hook.value != "" {
		if !flagGiven(fs, "max-chars") {
			*maxChars = hookMaxChars
		}
		in := readHookInput(e, cmd)
		if strings.TrimSpace(in.Prompt) == "" {
			return nil
		}
		loc, err := t.locate(e, cmd, in.Cwd)
		if err != nil || !loc.Enabled {
			return nil
		}
		if useModel() != nil {
			opts.Mode = memstore.ModeLexical // a model that fails leaves recall by words
		}
		hits, err := memdir.Recall(ctx, loc.Dir, in.Prompt, opts)
		if errors.Is(err, memdir.ErrModel) && opts.Mode != memstore.ModeLexical {
			opts.Mode = memstore.ModeLexical // the model failed: recall by words
			hits, err = memdir.Recall(ctx, loc.Dir, in.Prompt, opts)
		}
		if err != nil || len(hits) == 0 {
			return nil // a prompt of common words only, or nothing relevant
		}
		head := "Memories from " + loc.Dir + " that may bear on this prompt. They were true when saved; check what they name before relying on it.\n\n"
		printJSON(e.stdout, hookOutput("UserPromptSubmit", memdir.FormatHits(head, hits, now, *maxChars)))
		return nil
	}

	if err := useModel(); err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	loc, err := t.locate(e, cmd, "")
	if err != nil {
		return err
	}
	if !loc.Enabled {
		fmt.Fprintf(e.stderr, "memstore %s: note: memory is disabled here (by %s)\n", cmd, loc.DisabledBy)
	}
	hits, err := memdir.Recall(ctx, loc.Dir, query, opts)
	if err != nil {
		if errors.Is(err, memdir.ErrEmptyQuery) {
			return usageError(e, "memstore %s: %v", cmd, err)
		}
		if errors.Is(err, memdir.ErrModel) {
			fmt.Fprintf(e.stderr, "memstore %s: %v; check the model's flags, or recall by words with --mode lexical\n", cmd, err)
			return exitServer
		}
		return localIOError(e, cmd, err)
	}
	if t.json {
		type hitJS struct {
			memdir.Hit
			Age string `json:"age"`
		}
		out := struct {
			Dir   string  `json:"dir"`
			Query string  `json:"query"`
			Hits  []hitJS `json:"hits"`
		}{Dir: loc.Dir, Query: query, Hits: []hitJS{}}
		for _, h := range hits {
			out.Hits = append(out.Hits, hitJS{h, "saved " + memdir.Age(h.Modified, now)})
		}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if len(hits) > 0 {
		if _, err := io.WriteString(out(), memdir.FormatHits("", hits, now, *maxChars)); err != nil {
			return err
		}
	}
	if len(hits) == 0 {
		if !t.json {
			fmt.Fprintln(e.stderr, "no memory matches")
		}
		return exitFindings
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/memstore/memstore/internal/cctranscript"
	"github.com/memstore/memstore/memdir"
)

const memdirExtractHelp = `Usage: memstore memdir extract --transcript FILE [--model ID] [--model-base-url URL]
         [--model-api-key-file FILE] [--max-steps N] [--max-tokens N]
         [--max-writes N] [--max-time DURATION] [--cwd DIR | --dir DIR] [--json]

Reads a Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl)
and has a model write what is worth keeping to the memory directory, as
Claude Code's background extraction does: memories of the four types
(user, feedback, project, reference), each a topic file, indexed in
MEMORY.md. The turns in which the agent wrote memory itself (a Write or
Edit under a memory directory, or the memory tool) are left out: what it
kept is kept already. Every write is held to the secret guard: text that
looks like a credential is refused. The model works on a copy of the
directory, and its changes are applied all at once when it finishes, or
not at all; .dream.json records the turns read, so that extracting the
same transcript again reads only the turns added since. The model and the
caps are those of memstore memdir dream.

Exit status: 0 done; 1 nothing to extract (every turn wrote memory);
2 usage; 3 memory is disabled; 5 a file cannot be read or written;
6 the model failed, or the run reached a cap.
`

// memdirExtractSystem tells the model what an extraction is for; the
// memory guidance follows.
const memdirExtractSystem = `You are extracting memories from a conversation between a user and a
coding agent, given as a transcript. You work only through the memory
tool, on /memories.

- Look at /memories/MEMORY.md and the topic files that bear on the
  conversation first; update a memory rather than adding a near duplicate.
- Keep only what will matter in later conversations, as memories of the
  four types: user (who the user is, how they like to work), feedback (a
  correction or a confirmed approach, with Why: and How to apply: lines),
  project (decisions, goals, deadlines the repository does not show) and
  reference (where to look outside the repository).
- Each memory is a topic file with frontmatter (name, description,
  metadata.type), indexed by one line in /memories/MEMORY.md.
- Never save secrets (passwords, API keys, tokens, private keys), what the
  repository records, or what only mattered to that conversation.
- When done, answer with a short summary of what you saved.

`

func runMemdirExtract(ctx context.Context, e env, args []string) error {
	const cmd = "memdir extract"
	fs := newFlags(e, cmd, memdirExtractHelp)
	t := addMemdirTarget(fs)
	mf := addModelFlags(fs)
	transcript := fs.String("transcript", "", "the Claude Code transcript `FILE` (.jsonl) to read")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(e, "memstore %s: unexpected argument %q", cmd, pos[0])
	case *transcript == "":
		return usageError(e, "memstore %s: say which transcript to read: --transcript FILE", cmd)
	}
	cfg, lim, err := mf.resolve(e, cmd, fs)
	if err != nil {
		return err
	}
	loc, err := t.locateEnabled(e, cmd)
	if err != nil {
		return err
	}
	dir := loc.Dir

	abs, err := filepath.Abs(*transcript)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	msgs, err := cctranscript.ParseMessages(f, cctranscript.Options{IsMemoryPath: memoryPathIn(dir)})
	f.Close()
	if err != nil {
		return localIOError(e, cmd, fmt.Errorf("%s: %w", *transcript, err))
	}
	turns := splitTurns(msgs)
	// The turns an earlier extraction read are not read again; a
	// transcript shorter than recorded was rewritten and is read whole.
	st, err := memdir.ReadDreamState(dir)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	from := st.Extracted[abs]
	if from > len(turns) {
		from = 0
	}
	text, next, kept, skipped := renderTurns(turns, from, memdir.MaxDreamLogBytes)
	if kept == 0 {
		if t.json {
			return errors.Join(printJSON(e.stdout, extractJSON{Dir: dir, Turns: len(turns), From: from, Skipped: skipped, Changes: []memdir.Change{}}), exitFindings)
		}
		fmt.Fprintf(e.stdout, "nothing to extract: %s new, %d of them writing memory already\n", plural(len(turns)-from, "turn", "turns"), skipped)
		return exitFindings
	}

	s, err := memdir.BeginStaging(dir)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	defer s.Discard()
	prompt := "The transcript of the conversation (turns in which the agent saved memory itself are left out):\n\n" + text +
		"\nSave what is worth remembering from it."
	res, changes, rebuilt, err := runStaged(ctx, e, cmd, "the extraction", cfg, lim, s, memdirExtractSystem, prompt)
	if err != nil {
		return err
	}
	// Re-read under the lock: a dream may have recorded since.
	if st, err = memdir.ReadDreamState(dir); err != nil {
		return localIOError(e, cmd, err)
	}
	recorded := st.Extraction(abs, next)
	if err := s.Apply(changes, &recorded); err != nil {
		return localIOError(e, cmd, err)
	}
	out := extractJSON{Dir: dir, Turns: len(turns), From: from, Skipped: skipped, Read: kept, Changes: changes, IndexRebuilt: rebuilt, Steps: res.Steps, Usage: usageOf(res.Usage), Summary: res.Final}
	if t.json {
		return printJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "read %s of %s (%d skipped: the agent wrote memory in them)\n", plural(kept, "turn", "turns"), cell(*transcript), skipped)
	for _, c := range changes {
		fmt.Fprintf(e.stdout, "  %-7s %s\n", c.Op, cell(c.Path))
	}
	_, err = fmt.Fprintln(e.stdout, usageLine(res))
	return err
}

// extractJSON is the --json output of memstore memdir extract.
type extractJSON struct {
	Dir          string          `json:"dir"`
	Turns        int             `json:"turns"`
	From         int             `json:"from"`    // turns read by earlier extractions, not read again
	Skipped      int             `json:"skipped"` // turns in which the agent wrote memory
	Read         int             `json:"read"`    // turns given to the model
	Changes      []memdir.Change `json:"changes"`
	IndexRebuilt bool            `json:"index_rebuilt,omitempty"`
	Steps        int             `json:"steps"`
	Usage        usageJSON       `json:"usage"`
	Summary      string          `json:"summary,omitempty"`
}

// memoryPathIn is cctranscript's rule of a memory path, and any path in
// the memory directory dir too (an override may put it anywhere).
func memoryPathIn(dir string) func(string) bool {
	dir = filepath.Clean(dir)
	return func(p string) bool {
		if cctranscript.IsMemoryPath(p) {
			return true
		}
		rel, err := filepath.Rel(dir, filepath.Clean(p))
		return err == nil && filepath.IsLocal(rel)
	}
}

// A turn is a user's message and everything up to their next one: the
// agent's answers, its tool calls and their results.
type turn struct {
	msgs        []cctranscript.Message
	wroteMemory bool
}

// splitTurns groups a transcript's messages into turns: a user message
// that holds more than tool results starts one.
func splitTurns(msgs []cctranscript.Message) []turn {
	var out []turn
	for _, m := range msgs {
		if m.Role == "user" && !onlyToolResults(m.Content) || len(out) == 0 {
			out = append(out, turn{})
		}
		t := &out[len(out)-1]
		t.msgs = append(t.msgs, m)
		t.wroteMemory = t.wroteMemory || m.WroteMemory
	}
	return out
}

// contentBlock is the part of a content block an extraction reads.
type contentBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
}

// blocksOf is content, a string or an array of blocks, as blocks.
func blocksOf(content json.RawMessage) []contentBlock {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	_ = json.Unmarshal(content, &bs)
	return bs
}

func onlyToolResults(content json.RawMessage) bool {
	bs := blocksOf(content)
	for _, b := range bs {
		if b.Type != "tool_result" {
			return false
		}
	}
	return len(bs) > 0
}

// The most of one tool call's input, and of one tool result, an
// extraction shows the model: the conversation matters, not file dumps.
const (
	extractToolInputBytes  = 300
	extractToolResultBytes = 500
)

// renderTurns writes the turns from turns[from] on in which the agent did
// not write memory as text for the model, up to limit bytes; next is the
// first turn not read (the rest wait for the next extraction), kept
// counts the turns written, skipped those left out for writing memory.
func renderTurns(turns []turn, from, limit int) (text string, next, kept, skipped int) {
	var b strings.Builder
	next = from
	for i := from; i < len(turns); i++ {
		t := turns[i]
		if t.wroteMemory {
			skipped++
			next = i + 1
			continue
		}
		var tb strings.Builder
		fmt.Fprintf(&tb, "<turn n=\"%d\">\n", i+1)
		for _, m := range t.msgs {
			for _, bl := range blocksOf(m.Content) {
				switch bl.Type {
				case "text":
					fmt.Fprintf(&tb, "%s: %s\n", m.Role, bl.Text)
				case "tool_use":
					fmt.Fprintf(&tb, "%s called %s: %s\n", m.Role, bl.Name, clipText(string(bl.Input), extractToolInputBytes))
				case "tool_result":
					fmt.Fprintf(&tb, "tool result: %s\n", clipText(resultText(bl.Content), extractToolResultBytes))
				}
			}
		}
		tb.WriteString("</turn>\n")
		if b.Len()+tb.Len() > limit {
			if b.Len() == 0 { // one turn longer than the limit: its start
				b.WriteString(clipText(tb.String(), limit) + "\n</turn>\n")
				kept++
				next = i + 1
			}
			break
		}
		b.WriteString(tb.String())
		kept++
		next = i + 1
	}
	return b.String(), next, kept, skipped
}

// resultText is a tool result's content as text.
func resultText(content json.RawMessage) string {
	var parts []string
	for _, b := range blocksOf(content) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// clipText cuts s to about n bytes, at a character, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf(" [… %d more bytes]", len(s)-n)
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/cctranscript"
)

// The commands of a session's transcript: events lists it, import loads
// a Claude Code transcript into it.

func runSessionsEvents(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "events", "Usage: memstore sessions events ID [--json]\n\nPrints a session's transcript, oldest first: each event's time, type, ID\nand a line of what it says. --json prints the events as the API gives them.\n")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	f := memstore.SessionEventFilter{Limit: memstore.MaxPageSize}
	all, err := allPages(func(page string) (memstore.Page[memstore.SessionEvent], error) {
		f.Page = page
		return c.ListSessionEvents(ctx, c.caller, id, f)
	})
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, all, func(ev *memstore.SessionEvent) json.RawMessage { return ev.Object() })
	}
	return printTable(e, all, "no events in session "+id+"; add some with 'memstore sessions import FILE --session "+id+"'",
		[]string{"TIME", "TYPE", "ID", "WHAT"},
		func(ev *memstore.SessionEvent) []string {
			return []string{fmtTime(ev.ProcessedAt), ev.Type, ev.ID, eventGist(ev)}
		})
}

// eventGist is one line of what an event says: its text, the tool it
// calls, or the start of a tool's result.
func eventGist(ev *memstore.SessionEvent) string {
	var b struct {
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	json.Unmarshal(ev.Body, &b)
	var gist string
	switch {
	case b.Name != "":
		gist = b.Name + " " + string(b.Input)
	default:
		var blocks []struct{ Type, Text string }
		if json.Unmarshal(b.Content, &blocks) == nil {
			var texts []string
			for _, bl := range blocks {
				if bl.Text != "" {
					texts = append(texts, bl.Text)
				} else if bl.Type != "" {
					texts = append(texts, "["+bl.Type+"]")
				}
			}
			gist = strings.Join(texts, " ")
		}
		if b.IsError {
			gist = "error: " + gist
		}
	}
	const most = 100
	gist = strings.Join(strings.Fields(gist), " ")
	if r := []rune(gist); len(r) > most {
		gist = string(r[:most]) + "..."
	}
	return gist
}

// importChunkBytes bounds the messages sent in one request of an import,
// well under the API's default body limit (1 MiB); importBlockBytes cuts
// a longer text or tool result, so that every event fits
// memstore.MaxSessionEventBytes.
const (
	importChunkBytes = 512 << 10
	importBlockBytes = memstore.MaxSessionEventBytes / 4
)

func runSessionsImport(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "import", "Usage: memstore sessions import FILE --session ID [--json]\n\n"+
		"Appends a Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl)\n"+
		"to a session's transcript, as the events of the SDKs: each user and\n"+
		"assistant message, tool calls and their results included. Summaries,\n"+
		"Claude Code's own notes and subagents' messages are left out, and a text\n"+
		"or tool result longer than 64 KiB is cut, saying so. It says how many\n"+
		"messages wrote to the memory directory themselves. FILE - reads standard input.\n")
	session := fs.String("session", "", "append to session `ID` (required)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usageError(e, "memstore sessions import: give one transcript FILE (a Claude Code .jsonl)")
	case *session == "":
		return usageError(e, "memstore sessions import: --session is required: the ID of the session to append to (see 'memstore sessions ls')")
	}
	var in io.Reader = e.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("memstore sessions import: %w", err)
		}
		defer f.Close()
		in = f
	}
	msgs, err := cctranscript.ParseMessages(in, cctranscript.Options{MaxBlockBytes: importBlockBytes})
	if err != nil {
		return fmt.Errorf("memstore sessions import: %s: %w", pos[0], err)
	}
	if len(msgs) == 0 {
		return fmt.Errorf("memstore sessions import: %s holds no user or assistant message; is it a Claude Code transcript?", pos[0])
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	events, wrote := 0, 0
	for _, m := range msgs {
		if m.WroteMemory {
			wrote++
		}
	}
	for start, chunk := range importChunks(msgs) {
		out, err := c.AppendSessionTurn(ctx, c.caller, *session, memstore.Turn{Messages: chunk})
		if err != nil {
			if start > 0 {
				return fmt.Errorf("imported the first %d messages of %d (%d events), then: %w", start, len(msgs), events, err)
			}
			return err
		}
		events += len(out)
	}
	if c.json {
		return printJSON(e.stdout, map[string]any{"session_id": *session, "messages": len(msgs), "events": events, "messages_that_wrote_memory": wrote})
	}
	fmt.Fprintf(e.stdout, "Imported %d messages of %s into session %s as %d events; %d of them wrote to memory themselves.\n",
		len(msgs), cell(pos[0]), cell(*session), events, wrote)
	return nil
}

// importChunks splits msgs into the turns of an import's requests, each
// within importChunkBytes and memstore.MaxEventsPerAppend (counting a
// block as an event at most), in order: by the index of each turn's
// first message. A turn ends before a message that answers no tool call,
// where it can, so that a tool call and its result stay in one request.
func importChunks(msgs []cctranscript.Message) func(yield func(int, []memstore.TurnMessage) bool) {
	return func(yield func(int, []memstore.TurnMessage) bool) {
		var (
			chunk         []memstore.TurnMessage
			first         int
			bytes, blocks int
		)
		for i, m := range msgs {
			n := strings.Count(string(m.Content), `"type"`) + 1
			tooMany := blocks+n > memstore.MaxEventsPerAppend
			tooBig := bytes+len(m.Content) > importChunkBytes && (!answersTool(m.TurnMessage) || bytes > importChunkBytes/2)
			if len(chunk) > 0 && (tooMany || tooBig) {
				if !yield(first, chunk) {
					return
				}
				chunk, first, bytes, blocks = nil, i, 0, 0
			}
			chunk = append(chunk, m.TurnMessage)
			bytes, blocks = bytes+len(m.Content), blocks+n
		}
		if len(chunk) > 0 {
			yield(first, chunk)
		}
	}
}

// answersTool reports whether m holds a tool result.
func answersTool(m memstore.TurnMessage) bool {
	return m.Role == "user" && strings.Contains(string(m.Content), `"tool_result"`)
}

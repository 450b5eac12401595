// Package cctranscript reads a Claude Code transcript, the JSON Lines
// file Claude Code keeps of each conversation
// (~/.claude/projects/<project>/<session>.jsonl), as the messages of the
// Messages API: what memstore appends to a session's transcript
// (memstore.Turn) and what an extraction reads. For each message it also
// says whether the assistant wrote memory in it (a tool call that writes
// under a memory directory), so that an extraction can skip what the
// agent already kept itself.
package cctranscript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// MaxLineBytes bounds one line of a transcript; a longer one is refused,
// naming it, rather than read whole into memory.
const MaxLineBytes = 16 << 20

// A Message is one message of a transcript.
type Message struct {
	memstore.TurnMessage
	// WroteMemory reports that an assistant message calls a tool that
	// writes under a memory directory (WritesMemory).
	WroteMemory bool
	// Timestamp is when Claude Code recorded the message's first line;
	// zero when it did not say.
	Timestamp time.Time
}

// Options adjust a parse; the zero value is the defaults.
type Options struct {
	// IsMemoryPath reports whether a file path is in a memory directory;
	// nil means IsMemoryPath.
	IsMemoryPath func(path string) bool
	// MaxBlockBytes, when positive, cuts the text of a text block and of
	// a tool result longer than that many bytes, noting how much was
	// left out, so that every message fits a store's limits.
	MaxBlockBytes int
}

// Parse reads a transcript's messages, in order.
func Parse(r io.Reader) ([]memstore.TurnMessage, error) {
	msgs, err := ParseMessages(r, Options{})
	if err != nil {
		return nil, err
	}
	out := make([]memstore.TurnMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m.TurnMessage
	}
	return out, nil
}

// line is what a transcript's line holds, as far as it is read here.
type line struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	Timestamp   string `json:"timestamp"`
	Message     *struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// ParseMessages reads a transcript's messages, in order: its user and
// assistant lines, the lines of one assistant message (Claude Code
// writes a line per content block, all with the message's ID) joined.
// Summaries, system lines, meta messages (Claude Code's own notes) and a
// subagent's lines (sidechains) are left out. A line that is not JSON
// is an error naming it.
func ParseMessages(r io.Reader, o Options) ([]Message, error) {
	if o.IsMemoryPath == nil {
		o.IsMemoryPath = IsMemoryPath
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		out    []Message
		lastID string // the ID of the last assistant message, to join its lines
	)
	for n := 1; ; n++ {
		raw, err := readLine(br, n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("line %d is not a JSON object of a Claude Code transcript: %v", n, err)
		}
		if (l.Type != "user" && l.Type != "assistant") || l.Message == nil || l.IsSidechain || l.IsMeta {
			continue
		}
		role := l.Message.Role
		if role == "" {
			role = l.Type
		}
		if role != "user" && role != "assistant" {
			continue
		}
		blocks, err := contentBlocks(l.Message.Content)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		blocks = cut(blocks, o.MaxBlockBytes)
		if len(blocks) == 0 {
			continue
		}
		if role == "assistant" && l.Message.ID != "" && l.Message.ID == lastID && len(out) > 0 {
			m := &out[len(out)-1]
			prev, _ := contentBlocks(m.Content)
			m.Content, _ = json.Marshal(slices.Concat(prev, blocks))
			m.WroteMemory = m.WroteMemory || WritesMemory(blocks, o.IsMemoryPath)
			continue
		}
		lastID = ""
		if role == "assistant" {
			lastID = l.Message.ID
		}
		content, _ := json.Marshal(blocks)
		m := Message{TurnMessage: memstore.TurnMessage{Role: role, Content: content}}
		m.Timestamp, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
		if role == "assistant" {
			m.WroteMemory = WritesMemory(blocks, o.IsMemoryPath)
		}
		out = append(out, m)
	}
	return out, nil
}

// readLine reads line n, refusing one longer than MaxLineBytes.
func readLine(br *bufio.Reader, n int) ([]byte, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxLineBytes {
			return nil, fmt.Errorf("line %d is longer than %d bytes; this is not a Claude Code transcript", n, MaxLineBytes)
		}
		switch {
		case err == nil:
			return b, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(b) > 0:
			return b, nil
		default:
			return nil, err
		}
	}
}

// contentBlocks is a message's content as blocks: a string is one text
// block.
func contentBlocks(content json.RawMessage) ([]json.RawMessage, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || bytes.Equal(content, []byte("null")) {
		return nil, nil
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, err
		}
		if s == "" {
			return nil, nil
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, errors.New("a message's content is neither text nor an array of blocks")
	}
	return blocks, nil
}

// cut shortens the text of text blocks and tool results to limit bytes
// (none when limit <= 0).
func cut(blocks []json.RawMessage, limit int) []json.RawMessage {
	if limit <= 0 {
		return blocks
	}
	for i, raw := range blocks {
		if len(raw) <= limit {
			continue
		}
		var b map[string]json.RawMessage
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		var typ string
		json.Unmarshal(b["type"], &typ)
		switch typ {
		case "text":
			b["text"] = shorten(b["text"], limit)
		case "tool_result":
			var s string
			if json.Unmarshal(b["content"], &s) == nil {
				b["content"] = shorten(b["content"], limit)
			} else {
				var inner []json.RawMessage
				json.Unmarshal(b["content"], &inner)
				b["content"], _ = json.Marshal(cut(inner, limit/max(len(inner), 1)))
			}
		default:
			continue
		}
		blocks[i], _ = json.Marshal(b)
	}
	return blocks
}

// shorten cuts the JSON string s to about limit bytes of text, at a
// character, saying what was left out.
func shorten(s json.RawMessage, limit int) json.RawMessage {
	var text string
	if json.Unmarshal(s, &text) != nil || len(text) <= limit {
		return s
	}
	keep := max(limit-100, 0)
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	b, _ := json.Marshal(fmt.Sprintf("%s\n[%d more bytes left out]", text[:keep], len(text)-keep))
	return b
}

// The tools of Claude Code that write a file, and the input that names
// it.
var fileWriters = map[string]string{"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}

// The memory tool's commands that change memory.
var memoryWrites = []string{"create", "str_replace", "insert", "delete", "rename"}

// WritesMemory reports whether blocks, an assistant message's content,
// call a tool that writes memory: a file-writing tool of Claude Code on a
// path that isMemoryPath accepts, or a change through the memory tool.
func WritesMemory(blocks []json.RawMessage, isMemoryPath func(string) bool) bool {
	for _, raw := range blocks {
		var b struct {
			Type  string                     `json:"type"`
			Name  string                     `json:"name"`
			Input map[string]json.RawMessage `json:"input"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "tool_use" {
			continue
		}
		if key, ok := fileWriters[b.Name]; ok {
			var path string
			if json.Unmarshal(b.Input[key], &path) == nil && isMemoryPath(path) {
				return true
			}
			continue
		}
		var command string
		if b.Name == "memory" && json.Unmarshal(b.Input["command"], &command) == nil && slices.Contains(memoryWrites, command) {
			return true
		}
	}
	return false
}

// IsMemoryPath is the default rule of a path in a memory directory:
// under a "memory" directory inside a ".claude" directory (Claude Code's
// ~/.claude/projects/<project>/memory/ and a project's .claude/memory/),
// or a file named MEMORY.md anywhere.
func IsMemoryPath(path string) bool {
	p := filepath.ToSlash(filepath.Clean(path))
	if filepath.Base(p) == "MEMORY.md" {
		return true
	}
	parts := strings.Split(p, "/")
	claude := -1
	for i, part := range parts {
		if part == ".claude" {
			claude = i
		}
		if part == "memory" && claude >= 0 && i > claude && i < len(parts)-1 {
			return true
		}
	}
	return false
}

// Package agenttool implements the six memory tools through which an agent
// in a session works on the memory stores attached to it — memory_list,
// memory_search, memory_read, memory_write, memory_edit and memory_delete —
// and Prompt, the memory section of the agent's system prompt.
//
// Each attached store is a directory, its mount path (/mnt/memory/<slug>),
// and a memory is addressed by its mount path and its path in the store:
// /mnt/memory/notes/plan.md is /plan.md in the store mounted at
// /mnt/memory/notes. With exactly one store attached, a plain /plan.md
// means that store.
//
// A Toolset runs the tools for one session caller on Services, which a
// memstore.Core and the HTTP API's client provide; servers (the MCP
// server, the HTTP API) hand Tools to a model and pass its calls to Call.
// Results are short texts written for a model: full mount paths, sizes,
// line numbers, the content_sha256 after every write, and errors that say
// what to do next. Writes are conditional on the content just read, so a
// concurrent change is reported, never overwritten; every change is
// recorded as made by the caller's actor (the session).
//
// Choices where the API contract is silent:
//
//   - A path_prefix is a directory: a final "/" is implied, so
//     /mnt/memory/notes/proj never lists /mnt/memory/notes/projects/.
//   - memory_list shows two levels by default, as the memory tool's view
//     does, and at most MaxListEntries entries.
//   - memory_write upserts by path, as the research preview's tool did,
//     creating only where nothing is, and updating only the content it
//     just saw.
//   - memory_delete deletes one memory; a directory is refused, so that
//     no single call erases many memories.
//   - All six tools are offered even when every store is read-only; the
//     services then refuse each change, and the writing tools say why.
package agenttool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memstore/memstore"
)

// The names of the tools.
const (
	ToolList   = "memory_list"
	ToolSearch = "memory_search"
	ToolRead   = "memory_read"
	ToolWrite  = "memory_write"
	ToolEdit   = "memory_edit"
	ToolDelete = "memory_delete"
)

// Limits of the tools' results, which are meant to stay short enough for a
// model's context.
const (
	// MaxListEntries is the most entries memory_list returns in one call.
	MaxListEntries = 200
	// DefaultListDepth is memory_list's depth when none is given: entries
	// up to two levels below the listed directory, as the memory tool's
	// view shows.
	DefaultListDepth = 2
	// MaxSearchResults is the largest limit memory_search accepts.
	MaxSearchResults = 50
	// MaxReadBytes bounds the text of one memory_read result; a longer one
	// is cut at a line boundary with a note saying where to continue.
	MaxReadBytes = 50_000
)

// Services are what the tools run on: the caller-facing services of a
// memstore.Core, or of httpapi.Client for a remote one. They decide what
// the session may do; the tools pass its caller to every call.
type Services struct {
	Memories memstore.MemoryService
	Search   memstore.SearchService
}

// A Tool describes one tool to a model.
type Tool struct {
	Name        string
	Title       string // a short human-readable name
	Description string // for the model: what the tool does and when to use it
	// InputSchema is a JSON Schema (draft 2020-12) of the arguments: an
	// object schema with additionalProperties false.
	InputSchema json.RawMessage
	// ReadOnly is true for the tools that only list, search and read.
	ReadOnly bool
	// Destructive is true for the tools that may replace or erase text:
	// memory_write (it overwrites), memory_edit (it replaces text) and
	// memory_delete. Every change is kept as a version of the store, which
	// a person with an API key can look at, but the agent cannot undo it.
	Destructive bool
	// Idempotent is true when repeating a call with the same arguments
	// has no further effect: all but memory_edit, whose replacement may
	// apply again to its own result.
	Idempotent bool
}

// Result is a tool's answer: text for the model; IsError for a failure the
// model should act on.
type Result struct {
	Text    string
	IsError bool
}

// A Toolset runs the tools for one session caller: its attachments are the
// mounts. It keeps no state between calls and is safe for concurrent use.
type Toolset struct {
	svc    Services
	caller *memstore.Caller
	mounts []mount // in the order of the session's attachments
}

// New returns the tools of a caller, who must hold a session
// (caller.Session != nil): its attachments are the mounts. Attachments
// without a mount path get those that memstore.AssignMountPaths gives.
func New(svc Services, caller *memstore.Caller) (*Toolset, error) {
	switch {
	case svc.Memories == nil || svc.Search == nil:
		return nil, errors.New("agenttool: Services needs both Memories and Search")
	case caller == nil || caller.Session == nil:
		return nil, errors.New("agenttool: the caller must hold a session")
	}
	return &Toolset{svc: svc, caller: caller, mounts: mountsOf(caller.Session)}, nil
}

// As returns the tools of c, a caller of the same session read afresh:
// its attachments, as they are now, are the mounts. A caller of another
// session, or none, leaves t as it is.
func (t *Toolset) As(c *memstore.Caller) *Toolset {
	if c == nil || c.Session == nil || c.Session.ID != t.caller.Session.ID {
		return t
	}
	return &Toolset{svc: t.svc, caller: c, mounts: mountsOf(c.Session)}
}

// Tools returns the descriptions of the six tools, always in the same
// order: list, search, read, write, edit, delete. All six are listed even
// when every attached store is read-only; the writing tools then refuse
// with a message saying so, which tells the model more than a missing
// tool would.
func (t *Toolset) Tools() []Tool {
	out := make([]Tool, len(tools))
	for i, s := range tools {
		out[i] = s.tool
		out[i].InputSchema = bytes.Clone(s.tool.InputSchema)
	}
	return out
}

// Call runs one tool with the arguments a model sent (a JSON object; empty
// or null means no arguments). Arguments that do not fit the tool's
// schema, an unknown tool and every expected failure are error results
// whose text tells the model what to do; no error result changes
// anything. An internal failure is an error result with a generic text.
func (t *Toolset) Call(ctx context.Context, name string, args json.RawMessage) Result {
	s := toolNamed(name)
	if s == nil {
		return errorResult(fmt.Sprintf("There is no tool %q. The memory tools are %s.", name, strings.Join(toolNames(), ", ")))
	}
	a, err := s.parse(args)
	if err == nil {
		var text string
		if text, err = s.run(t, ctx, a); err == nil {
			return Result{Text: text}
		}
	}
	var te *toolError
	if errors.As(err, &te) {
		return errorResult(te.msg)
	}
	return errorResult(msgInternal)
}

func errorResult(msg string) Result { return Result{Text: "Error: " + msg, IsError: true} }

// toolError is a failure explained to the model.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func failf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// toolNames lists the tools' names in order.
func toolNames() []string {
	names := make([]string, len(tools))
	for i, s := range tools {
		names[i] = s.tool.Name
	}
	return names
}

func toolNamed(name string) *spec {
	for i := range tools {
		if tools[i].tool.Name == name {
			return &tools[i]
		}
	}
	return nil
}

package memorytool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The commands of memory_20250818.
const (
	CommandView       = "view"
	CommandCreate     = "create"
	CommandStrReplace = "str_replace"
	CommandInsert     = "insert"
	CommandDelete     = "delete"
	CommandRename     = "rename"
)

// ToolType and ToolName make the tool definition the Messages API expects:
// {"type": "memory_20250818", "name": "memory"}.
const (
	ToolType = "memory_20250818"
	ToolName = "memory"
)

// Handler carries out the memory tool's commands, one method each, like the
// Java SDK's BetaMemoryToolHandler. Paths are exactly as the model sent them
// (beginning with /memories) and are echoed that way in every result.
//
// A method returns the text of a successful tool_result, or an error whose
// message is meant for the model (an *Error for every expected failure).
// Implementations must confine every path to their root and must not put
// host details such as absolute paths into any text.
type Handler interface {
	// View lists a directory two levels deep, or shows a file with line
	// numbers. viewRange is used only when it has exactly two elements
	// [start, end]: 1-based, end -1 meaning the last line.
	View(ctx context.Context, path string, viewRange []int) (string, error)
	// Create makes a new file; it never overwrites anything.
	Create(ctx context.Context, path, fileText string) (string, error)
	// StrReplace replaces the single occurrence of oldStr with newStr.
	StrReplace(ctx context.Context, path, oldStr, newStr string) (string, error)
	// Insert puts insertText before line insertLine (0 = at the top).
	Insert(ctx context.Context, path string, insertLine int, insertText string) (string, error)
	// Delete removes a file or a directory with everything below it.
	Delete(ctx context.Context, path string) (string, error)
	// Rename moves a file or directory; it never overwrites anything.
	Rename(ctx context.Context, oldPath, newPath string) (string, error)
}

// Result is what a tool_result carries back to the model.
type Result struct {
	// Content is the result text. For an error it starts with "Error: ", as
	// the official SDKs' tool runners send it.
	Content string
	// IsError is the tool_result's is_error flag.
	IsError bool
}

// Execute validates one tool input (the input object of a tool_use block),
// runs it on h and returns the tool_result. Malformed input (a missing or
// ill-typed field) is an error result and reaches no handler method.
func Execute(ctx context.Context, h Handler, input json.RawMessage) Result {
	out, err := execute(ctx, h, input)
	var e *Error
	switch {
	case err == nil:
		return Result{Content: out}
	case errors.As(err, &e):
		return Result{Content: "Error: " + e.Message, IsError: true}
	case ctx.Err() != nil:
		return Result{Content: "Error: The command was cancelled before it completed.", IsError: true}
	}
	// Any other error may name host details: the model gets none of them.
	return Result{Content: "Error: The memory tool failed on this command; it may be retried.", IsError: true}
}

func execute(ctx context.Context, h Handler, input json.RawMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fields, ok := decodeObject(input)
	if !ok {
		return "", invalidJSON(input)
	}
	in := args{fields: fields}
	command, ok := in.str("command")
	if !ok {
		return "", errorf("Invalid input: \"command\" must be a string, one of view, create, str_replace, insert, delete, rename")
	}
	in.command = command
	switch command {
	case CommandView:
		p := in.required("path")
		vr := in.ints("view_range")
		if in.err != nil {
			return "", in.err
		}
		return h.View(ctx, p, vr)
	case CommandCreate:
		p, text := in.required("path"), in.required("file_text")
		if in.err != nil {
			return "", in.err
		}
		return h.Create(ctx, p, text)
	case CommandStrReplace:
		p, old, repl := in.required("path"), in.required("old_str"), in.required("new_str")
		if in.err != nil {
			return "", in.err
		}
		return h.StrReplace(ctx, p, old, repl)
	case CommandInsert:
		p, line, text := in.required("path"), in.integer("insert_line"), in.required("insert_text")
		if in.err != nil {
			return "", in.err
		}
		return h.Insert(ctx, p, line, text)
	case CommandDelete:
		p := in.required("path")
		if in.err != nil {
			return "", in.err
		}
		return h.Delete(ctx, p)
	case CommandRename:
		oldPath, newPath := in.required("old_path"), in.required("new_path")
		if in.err != nil {
			return "", in.err
		}
		return h.Rename(ctx, oldPath, newPath)
	}
	return "", errNotImplemented(command)
}

// invalidJSON explains why input is not one JSON object.
func invalidJSON(input []byte) error {
	var object map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(input))
	if dec.Decode(&object) == nil && object != nil {
		return errorf("Invalid input: unexpected data after the JSON object")
	}
	return errorf("Invalid input: expected a JSON object with a \"command\" field")
}

// field is one member of a tool input: its name and its raw JSON value.
type field struct {
	name string
	raw  json.RawMessage
}

// decodeObject splits input, one JSON object, into its members, as
// json.Unmarshal into a map[string]json.RawMessage does; ok is false if
// input is not one JSON object. The common input (names without escapes,
// nesting within maxScanDepth) is split by scanObject without building a
// map; anything else goes to json.Unmarshal.
func decodeObject(input []byte) (fields []field, ok bool) {
	if fields, ok := scanObject(input); ok {
		return fields, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return nil, false
	}
	fields = make([]field, 0, len(m))
	for name, raw := range m {
		fields = append(fields, field{name, raw})
	}
	return fields, true
}

// args reads the fields of one tool input, keeping the first problem.
type args struct {
	command string
	fields  []field
	err     error
}

func (a *args) fail(field, problem string) {
	if a.err == nil {
		a.err = errInvalidInput(a.command, field, problem)
	}
}

func (a *args) present(name string) (json.RawMessage, bool) {
	// The last member of that name, as json.Unmarshal keeps.
	for i := len(a.fields) - 1; i >= 0; i-- {
		if f := a.fields[i]; f.name == name {
			if string(f.raw) == "null" {
				return nil, false
			}
			return f.raw, true
		}
	}
	return nil, false
}

func (a *args) str(name string) (string, bool) {
	raw, ok := a.present(name)
	if !ok || raw[0] != '"' {
		return "", false
	}
	// Most strings have no escapes: their bytes are the value.
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	return unquote(raw)
}

// required returns a string field that must be there.
func (a *args) required(name string) string {
	if _, ok := a.present(name); !ok {
		a.fail(name, "is required")
		return ""
	}
	s, ok := a.str(name)
	if !ok {
		a.fail(name, "must be a string")
	}
	return s
}

func (a *args) integer(name string) int {
	raw, ok := a.present(name)
	if !ok {
		a.fail(name, "is required")
		return 0
	}
	n, ok := parseInt(raw)
	if !ok {
		a.fail(name, "must be an integer")
	}
	return n
}

// ints returns an optional array of integers; nil when absent or null.
func (a *args) ints(name string) []int {
	raw, ok := a.present(name)
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || items == nil {
		a.fail(name, "must be an array of two integers, [start_line, end_line]")
		return nil
	}
	out := make([]int, len(items))
	for i, item := range items {
		n, ok := parseInt(item)
		if !ok {
			a.fail(name, "must be an array of two integers, [start_line, end_line]")
			return nil
		}
		out[i] = n
	}
	return out
}

// maxSafeInt is JavaScript's Number.MAX_SAFE_INTEGER: tool inputs come from
// JSON, where larger integers are not exact in most clients.
const maxSafeInt = 1<<53 - 1

// parseInt accepts a JSON number with an integral value (1, -3, 2.0, 1e3)
// within ±maxSafeInt.
func parseInt(raw json.RawMessage) (int, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int(n), n >= -maxSafeInt && n <= maxSafeInt
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInt {
		return 0, false
	}
	return int(f), true
}

// IsModelError reports whether err is meant for the model (an *Error), as
// opposed to an unexpected failure of a handler.
func IsModelError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// InputSchema is the memory tool's input as a JSON Schema, for an endpoint
// that is offered the tool as an ordinary (custom) tool named ToolName
// rather than as the built-in memory_20250818: the fields Execute reads,
// for every command.
const InputSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","enum":["view","create","str_replace","insert","delete","rename"]},` +
	`"path":{"type":"string","description":"a path below /memories, such as /memories/notes.md"},` +
	`"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,"description":"view: [first line, last line], -1 for the end"},` +
	`"file_text":{"type":"string","description":"create: the file's content"},` +
	`"old_str":{"type":"string","description":"str_replace: the text to replace, found exactly once"},` +
	`"new_str":{"type":"string","description":"str_replace: the replacement"},` +
	`"insert_line":{"type":"integer","description":"insert: the line after which the text goes (0 for the top)"},` +
	`"insert_text":{"type":"string","description":"insert: the text"},` +
	`"old_path":{"type":"string","description":"rename: the path to move"},` +
	`"new_path":{"type":"string","description":"rename: where to move it"}},` +
	`"required":["command"]}`

// Description describes the memory tool to a model that is offered it as
// a custom tool.
const Description = "Views, creates and edits the files of the memory directory, /memories: " +
	"view lists a directory or shows a file with line numbers; create writes a new file; " +
	"str_replace and insert edit a file; delete removes a file or directory; rename moves one."

package agenttool_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// objectSchema is the part of JSON Schema the tools use.
type objectSchema struct {
	Type                 string                    `json:"type"`
	Properties           map[string]propertySchema `json:"properties"`
	Required             []string                  `json:"required"`
	AdditionalProperties *bool                     `json:"additionalProperties"`
}

type propertySchema struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	MinLength   *int     `json:"minLength"`
	Pattern     string   `json:"pattern"`
	Enum        []string `json:"enum"`
	Minimum     *float64 `json:"minimum"`
	Maximum     *float64 `json:"maximum"`
}

// parseSchema decodes a tool's schema strictly: a keyword the tests do
// not know would go unchecked, so it fails the test.
func parseSchema(t *testing.T, raw json.RawMessage) objectSchema {
	t.Helper()
	var s objectSchema
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return s
}

// valid applies a schema to an argument object, as a JSON Schema validator
// would for the keywords above.
func (s objectSchema) valid(args string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return false
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			return false
		}
	}
	for name, v := range obj {
		p, ok := s.Properties[name]
		if !ok {
			return false // additionalProperties: false
		}
		switch p.Type {
		case "string":
			var str string
			if v[0] != '"' || json.Unmarshal(v, &str) != nil {
				return false
			}
			if p.MinLength != nil && len([]rune(str)) < *p.MinLength {
				return false
			}
			if p.Pattern != "" && !regexp.MustCompile(p.Pattern).MatchString(str) {
				return false
			}
			if p.Enum != nil && !slices.Contains(p.Enum, str) {
				return false
			}
		case "boolean":
			if string(v) != "true" && string(v) != "false" {
				return false
			}
		case "integer":
			var f float64
			if v[0] == '"' || json.Unmarshal(v, &f) != nil || f != math.Trunc(f) {
				return false
			}
			if p.Minimum != nil && f < *p.Minimum || p.Maximum != nil && f > *p.Maximum {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func TestTools(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	ts := newToolset(t, services(db), newSession(attach{store: sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})}))
	tools := ts.Tools()
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	want := []string{agenttool.ToolList, agenttool.ToolSearch, agenttool.ToolRead, agenttool.ToolWrite, agenttool.ToolEdit, agenttool.ToolDelete}
	if !slices.Equal(names, want) || want[0] != "memory_list" || want[5] != "memory_delete" {
		t.Fatalf("tools %v, want %v", names, want)
	}
	// The hints an MCP client shows: reading tools are read-only and
	// idempotent; the writing ones may replace or erase text; only an
	// edit can change more when repeated.
	hints := map[string][3]bool{ // read-only, destructive, idempotent
		"memory_list":   {true, false, true},
		"memory_search": {true, false, true},
		"memory_read":   {true, false, true},
		"memory_write":  {false, true, true},
		"memory_edit":   {false, true, false},
		"memory_delete": {false, true, true},
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			if got := [3]bool{tool.ReadOnly, tool.Destructive, tool.Idempotent}; got != hints[tool.Name] {
				t.Errorf("hints (read-only, destructive, idempotent) %v, want %v", got, hints[tool.Name])
			}
			if tool.Title == "" || len(tool.Description) < 200 {
				t.Errorf("title %q, description of %d bytes: both must say what the tool does", tool.Title, len(tool.Description))
			}
			if !json.Valid(tool.InputSchema) {
				t.Fatalf("schema is not JSON: %s", tool.InputSchema)
			}
			s := parseSchema(t, tool.InputSchema)
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("schema must be an object schema with additionalProperties false: %s", tool.InputSchema)
			}
			for _, r := range s.Required {
				if _, ok := s.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
			for name, p := range s.Properties {
				if p.Description == "" || (p.Type != "string" && p.Type != "integer" && p.Type != "boolean") {
					t.Errorf("property %s: type %q, description %q", name, p.Type, p.Description)
				}
				if p.Pattern != "" {
					if _, err := regexp.Compile(p.Pattern); err != nil {
						t.Errorf("property %s: pattern: %v", name, err)
					}
				}
			}
			if !s.valid("{}") && len(s.Required) == 0 {
				t.Error("a schema without required properties must accept {}")
			}
			if s.valid(`{"no_such_argument": 1}`) {
				t.Error("the schema accepts an unknown property")
			}
		})
	}
	// Tools returns copies: changing one changes nothing for the next
	// caller.
	tools[0].InputSchema[0] = 'X'
	tools[0].Description = ""
	if again := ts.Tools(); again[0].InputSchema[0] != '{' || again[0].Description == "" {
		t.Error("Tools shares its schemas with callers")
	}

	var sb strings.Builder
	for _, tool := range ts.Tools() {
		var schema bytes.Buffer
		if err := json.Indent(&schema, tool.InputSchema, "", "  "); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "## %s — %s\nread-only %v, destructive %v, idempotent %v\n\n%s\n\n%s\n\n", tool.Name, tool.Title, tool.ReadOnly, tool.Destructive, tool.Idempotent, tool.Description, schema.String())
	}
	golden(t, "tools.golden", sb.String())
}

// TestArguments checks every tool's argument checks against its schema:
// Call refuses exactly the arguments the schema refuses, with a message
// naming the argument, and changes nothing.
func TestArguments(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	store := newStore(t, db, "Notes", "/a.md", "alpha\n")
	ts := newToolset(t, services(db), newSession(attach{store: store}))
	hash := sha("alpha\n")
	tests := []struct {
		tool, args string
		argError   string // "" when the arguments are valid
		lenient    bool   // Call accepts what a strict validator refuses
	}{
		{"memory_list", ``, "", true}, // no arguments at all
		{"memory_list", `null`, "", true},
		{"memory_list", `{}`, "", false},
		{"memory_list", `{"depth": 0}`, "", false},
		{"memory_list", `{"depth": 20}`, "", false},
		{"memory_list", `{"depth": 3.0}`, "", false},
		{"memory_list", `{"depth": null}`, "", true},
		{"memory_list", `{"depth": -1}`, `"depth" must be from 0 to 20, not -1`, false},
		{"memory_list", `{"depth": 21}`, `"depth" must be from 0 to 20`, false},
		{"memory_list", `{"depth": 1.5}`, `"depth" must be an integer, not 1.5`, false},
		{"memory_list", `{"depth": "2"}`, `"depth" must be an integer, not "2"`, false},
		{"memory_list", `{"path_prefix": ""}`, `"path_prefix" must not be empty`, false},
		{"memory_list", `{"path_prefix": 7}`, `"path_prefix" must be a string, not 7`, false},
		{"memory_list", `{"path": "/a.md"}`, `memory_list has no argument "path"; its arguments are path_prefix, depth`, false},
		{"memory_list", `[]`, "The arguments of memory_list must be one JSON object", false},
		{"memory_list", `"/a.md"`, "The arguments of memory_list must be one JSON object", false},
		{"memory_list", `{"depth": 1`, "The arguments of memory_list must be one JSON object", false},
		{"memory_search", `{"query": "alpha"}`, "", false},
		{"memory_search", `{"query": "alpha", "limit": 50}`, "", false},
		{"memory_search", `{"query": "alpha", "limit": 0}`, `"limit" must be from 1 to 50, not 0`, false},
		{"memory_search", `{"query": "alpha", "limit": 51}`, `"limit" must be from 1 to 50, not 51`, false},
		{"memory_search", `{}`, `memory_search needs the argument "query" (string)`, false},
		{"memory_search", `{"query": null}`, `memory_search needs the argument "query"`, false},
		{"memory_search", `{"query": ["alpha"]}`, `"query" must be a string`, false},
		{"memory_search", `{"query": "alpha", "path": "/"}`, `memory_search has no argument "path"; its arguments are query, path_prefix, limit, mode, conversation`, false},
		{"memory_search", `{"query": "alpha", "mode": "lexical", "conversation": true}`, "", false},
		{"memory_search", `{"query": "alpha", "conversation": false}`, "", false},
		{"memory_search", `{"query": "alpha", "mode": "fuzzy"}`, `"mode" must be one of lexical, semantic, hybrid, not "fuzzy"`, false},
		{"memory_search", `{"query": "alpha", "mode": "Lexical"}`, `"mode" must be one of lexical, semantic, hybrid, not "Lexical"`, false},
		{"memory_search", `{"query": "alpha", "mode": 1}`, `"mode" must be a string, not 1`, false},
		{"memory_search", `{"query": "alpha", "conversation": "yes"}`, `"conversation" must be true or false, not "yes"`, false},
		{"memory_search", `{"query": "alpha", "conversation": 1}`, `"conversation" must be true or false, not 1`, false},
		{"memory_read", `{"path": "/a.md"}`, "", false},
		{"memory_read", `{"path": "/a.md", "start_line": 1, "end_line": 1}`, "", false},
		{"memory_read", `{"path": "/a.md", "start_line": 0}`, `"start_line" must be from 1 to`, false},
		{"memory_read", `{"path": "/a.md", "end_line": true}`, `"end_line" must be an integer, not true`, false},
		{"memory_read", `{"path": "/a.md", "view_range": [1, 2]}`, `memory_read has no argument "view_range"`, false},
		{"memory_read", `{}`, `memory_read needs the argument "path" (string)`, false},
		{"memory_write", `{"path": "/c.md", "content": ""}`, "", false},
		{"memory_write", `{"path": "/b.md"}`, `memory_write needs the argument "content" (string)`, false},
		{"memory_write", `{"path": "/b.md", "content": {"text": "x"}}`, `"content" must be a string, not {"text": "x"}`, false},
		{"memory_write", `{"path": "/b.md", "content": "x", "overwrite": true}`, `memory_write has no argument "overwrite"`, false},
		{"memory_write", `{"path": "/b.md", "file_text": "x"}`, `memory_write has no argument "file_text"`, false},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "alpha"}`, "", false},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "alpha", "expected_sha256": "` + strings.ToUpper(hash) + `"}`, "", false},
		{"memory_edit", `{"path": "/a.md", "old_str": "", "new_str": "x"}`, `"old_str" must not be empty`, false},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha"}`, `memory_edit needs the argument "new_str" (string)`, false},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "b", "expected_sha256": "abc"}`, `"expected_sha256" must match ^[0-9a-fA-F]{64}$, not "abc"`, false},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "b", "expected_sha256": "` + strings.Repeat("g", 64) + `"}`, `"expected_sha256" must match`, false},
		{"memory_delete", `{"path": "/nothing.md"}`, "", false},
		{"memory_delete", `{"path": "/a.md", "recursive": true}`, `memory_delete has no argument "recursive"; its arguments are path`, false},
		{"memory_delete", `{"path": 1}`, `"path" must be a string, not 1`, false},
	}
	schemas := map[string]objectSchema{}
	for _, tool := range ts.Tools() {
		schemas[tool.Name] = parseSchema(t, tool.InputSchema)
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			args := tt.args
			if args == "" || args == "null" {
				args = "{}"
			}
			if got := schemas[tt.tool].valid(args); got != (tt.argError == "") && !tt.lenient {
				t.Errorf("the schema accepts these arguments: %v; Call: %q", got, tt.argError)
			}
			r := ts.Call(t.Context(), tt.tool, json.RawMessage(tt.args))
			if tt.argError == "" {
				// Valid arguments may still fail (/nothing.md does not
				// exist), but not for their shape.
				if r.IsError && strings.Contains(r.Text, "argument") {
					t.Fatalf("valid arguments refused: %s", r.Text)
				}
			} else {
				if !r.IsError || !strings.Contains(r.Text, tt.argError) {
					t.Fatalf("result %+v, want an error containing %q", r, tt.argError)
				}
			}
			wantContent(t, db, store.ID, "/a.md", "alpha\n")
			wantAbsent(t, db, store.ID, "/b.md")
		})
	}
}

func TestUnknownTool(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	ts := newToolset(t, services(db), newSession(attach{store: sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})}))
	text := fails(t, ts, "memory_rename", `{"path": "/a"}`)
	wantContains(t, text, `There is no tool "memory_rename"`, "memory_list, memory_search, memory_read, memory_write, memory_edit, memory_delete")
}

func TestNew(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	s := newSession(attach{store: sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})})
	tests := []struct {
		name string
		svc  agenttool.Services
		c    *memstore.Caller
	}{
		{"no caller", services(db), nil},
		{"an API key", services(db), &memstore.Caller{WorkspaceID: ws, Actor: admin}},
		{"no memory service", agenttool.Services{Search: memstore.NewCore(db)}, caller(s)},
		{"no search service", agenttool.Services{Memories: memstore.NewCore(db)}, caller(s)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ts, err := agenttool.New(tt.svc, tt.c); err == nil || ts != nil {
				t.Fatalf("New: %v, %v; want an error", ts, err)
			}
		})
	}
}

// TestLongArgumentQuoted: a wrong value is quoted back cut short, on a
// character boundary.
func TestLongArgumentQuoted(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	ts := newToolset(t, services(db), newSession(attach{store: sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})}))
	got := fails(t, ts, "memory_read", `{"path": ["`+strings.Repeat("é", 100)+`"]}`)
	if !utf8.ValidString(got) || !strings.Contains(got, `"path" must be a string, not ["éé`) || !strings.HasSuffix(got, "é….") || len(got) > 120 {
		t.Errorf("%q", got)
	}
}

package agenttool

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// One definition of each tool's arguments gives both the JSON Schema shown
// to the model and the checks Call makes, so that the two cannot differ.

// kind is the JSON type of an argument.
type kind string

const (
	kindString  kind = "string"
	kindInteger kind = "integer"
	kindBoolean kind = "boolean"
)

// A param is one argument of a tool.
type param struct {
	name     string
	kind     kind
	required bool
	desc     string
	// For strings: minLength and, when not nil, a pattern the whole value
	// must match (patternText is its JSON Schema form).
	minLength   int
	pattern     *regexp.Regexp
	patternText string
	// For strings: when not nil, the values allowed.
	enum []string
	// For integers: the inclusive bounds.
	minimum, maximum int
}

// spec is a tool: its description, its arguments and what runs it.
type spec struct {
	tool   Tool
	params []param
	run    func(t *Toolset, ctx context.Context, a args) (string, error)
}

// args are the arguments of one call once checked against the params.
type args struct {
	strs  map[string]string
	ints  map[string]int
	bools map[string]bool
}

func (a args) str(name string) (string, bool) {
	s, ok := a.strs[name]
	return s, ok
}

func (a args) integer(name string) (int, bool) {
	n, ok := a.ints[name]
	return n, ok
}

func (a args) boolean(name string) (v, ok bool) {
	v, ok = a.bools[name]
	return v, ok
}

// schema renders the JSON Schema of a tool's arguments, properties in the
// order of params so that the text is stable and reads in a sensible order.
func schema(params []param) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		prop := propertySchema{Type: p.kind, Description: p.desc, MinLength: p.minLength, Enum: p.enum}
		if p.pattern != nil {
			prop.Pattern = p.patternText
		}
		if p.kind == kindInteger {
			prop.Minimum, prop.Maximum = &p.minimum, &p.maximum
		}
		b.Write(mustJSON(p.name))
		b.WriteByte(':')
		b.Write(mustJSON(prop))
		if p.required {
			required = append(required, p.name)
		}
	}
	b.WriteString(`}`)
	if required != nil {
		b.WriteString(`,"required":`)
		b.Write(mustJSON(required))
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// propertySchema is the schema of one argument, its keywords in the order
// a reader wants them.
type propertySchema struct {
	Type        kind     `json:"type"`
	Description string   `json:"description"`
	MinLength   int      `json:"minLength,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Minimum     *int     `json:"minimum,omitempty"`
	Maximum     *int     `json:"maximum,omitempty"`
}

// mustJSON marshals values that always marshal: strings, string slices and
// propertySchema.
func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: see above
	}
	return out
}

// parse checks raw arguments against the tool's params: an object (empty
// or null meaning {}), no unknown names, every required one present, each
// of its type and within its bounds. An optional argument that is null
// counts as not given, as models send for arguments they mean to leave
// out.
func (s *spec) parse(raw json.RawMessage) (args, error) {
	a := args{strs: map[string]string{}, ints: map[string]int{}, bools: map[string]bool{}}
	name := s.tool.Name
	var fields map[string]json.RawMessage
	if trimmed := bytes.TrimSpace(raw); len(trimmed) != 0 && string(trimmed) != "null" {
		if trimmed[0] != '{' || json.Unmarshal(trimmed, &fields) != nil {
			return a, failf("The arguments of %s must be one JSON object, such as %s.", name, s.example())
		}
	}
	for f := range fields {
		if s.param(f) == nil {
			return a, failf("%s has no argument %q; its arguments are %s.", name, f, s.paramNames())
		}
	}
	for _, p := range s.params {
		v, ok := fields[p.name]
		if !ok || string(v) == "null" {
			if p.required {
				return a, failf("%s needs the argument %q (%s).", name, p.name, p.kind)
			}
			continue
		}
		switch p.kind {
		case kindString:
			var str string
			if v[0] != '"' || json.Unmarshal(v, &str) != nil {
				return a, failf("%s: %q must be a string, not %s.", name, p.name, shorten(string(v)))
			}
			if len(str) < p.minLength {
				return a, failf("%s: %q must not be empty.", name, p.name)
			}
			if p.pattern != nil && !p.pattern.MatchString(str) {
				return a, failf("%s: %q must match %s, not %q.", name, p.name, p.patternText, shorten(str))
			}
			if p.enum != nil && !slices.Contains(p.enum, str) {
				return a, failf("%s: %q must be one of %s, not %q.", name, p.name, strings.Join(p.enum, ", "), shorten(str))
			}
			a.strs[p.name] = str
		case kindBoolean:
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return a, failf("%s: %q must be true or false, not %s.", name, p.name, shorten(string(v)))
			}
			a.bools[p.name] = b
		case kindInteger:
			n, ok := parseInt(v)
			if !ok {
				return a, failf("%s: %q must be an integer, not %s.", name, p.name, shorten(string(v)))
			}
			if n < p.minimum || n > p.maximum {
				return a, failf("%s: %q must be from %d to %d, not %d.", name, p.name, p.minimum, p.maximum, n)
			}
			a.ints[p.name] = n
		}
	}
	return a, nil
}

func (s *spec) param(name string) *param {
	for i := range s.params {
		if s.params[i].name == name {
			return &s.params[i]
		}
	}
	return nil
}

func (s *spec) paramNames() string {
	names := make([]string, len(s.params))
	for i, p := range s.params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// example is an argument object with the required params, for messages.
func (s *spec) example() string {
	var parts []string
	for _, p := range s.params {
		if p.required {
			parts = append(parts, strconv.Quote(p.name)+`: ...`)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// parseInt accepts a JSON number with an integral value (3, 3.0, 3e0):
// models sometimes write integers as floats.
func parseInt(raw json.RawMessage) (int, bool) {
	var f float64
	if raw[0] == '"' || json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// shorten cuts a value quoted back to the model to a readable length.
func shorten(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/httpstatus"
	"github.com/memstore/memstore/internal/netlimit"
)

// params reads the query string of a request. Unknown parameters (such as
// the SDKs' beta=true, or order_by and order, which older clients send)
// are ignored, but by the lists that refuse them by name (only). The
// first bad value is kept in err, naming its parameter;
// the getters return a zero value after it.
type params struct {
	q   url.Values
	err error
}

func newParams(r *http.Request) *params {
	p := &params{}
	if r.URL.RawQuery != "" {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			p.err = invalid("the query string is malformed: %v", err)
		}
		p.q = q
	}
	return p
}

func (p *params) fail(format string, args ...any) {
	if p.err == nil {
		p.err = invalid(format, args...)
	}
}

// get returns the first value of a parameter, "" when absent.
func (p *params) get(name string) string {
	if p.err != nil {
		return ""
	}
	return p.q.Get(name)
}

// only refuses the first parameter, in the order of their names, that
// known does not hold: refusal is the message, %s its quoted name.
func (p *params) only(known map[string]bool, refusal string) error {
	for _, k := range slices.Sorted(maps.Keys(p.q)) {
		if !known[k] {
			return invalid(refusal, shortParam(k))
		}
	}
	return nil
}

// list returns the values of a list parameter, sent as name[] or name.
func (p *params) list(name string) []string {
	return slices.Concat(p.q[name+"[]"], p.q[name])
}

// ascending returns whether order=asc, or def when order is absent.
func (p *params) ascending(def bool) bool {
	switch o := p.get("order"); o {
	case "":
		return def
	case "asc":
		return true
	case "desc":
		return false
	default:
		p.fail("order must be asc or desc, not %q", o)
		return def
	}
}

// view returns whether view=full, or def when view is absent.
func (p *params) view(def bool) bool {
	switch v := p.get("view"); v {
	case "":
		return def
	case "basic":
		return false
	case "full":
		return true
	default:
		p.fail("view must be basic or full, not %q", v)
		return false
	}
}

// limit returns the page size: a limit parameter of 1-MaxPageSize made
// into a page's size by memstore.PageSize, which silently caps a page
// that holds content (docs/api.md, Pagination).
func (p *params) limit(full bool) int {
	n, _ := memstore.PageSize(p.count("limit", memstore.DefaultPageSize, memstore.MaxPageSize), full) // count checked the range
	return n
}

// count returns an integer parameter from 1 to max, def when absent.
func (p *params) count(name string, def, max int) int {
	v := p.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		p.fail("%s must be an integer from 1 to %d, not %q", name, max, v)
		return 0
	}
	return n
}

// boolean returns a true/false parameter, false when absent.
func (p *params) boolean(name string) bool {
	v := p.get(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail("%s must be true or false, not %q", name, v)
	}
	return b
}

// optionalBoolean returns the boolean parameter name, nil when absent.
func (p *params) optionalBoolean(name string) *bool {
	if p.get(name) == "" {
		return nil
	}
	return new(p.boolean(name))
}

// createdAt returns the bound op ("gte" or "lte") of the created_at
// range, spelled created_at[op] as the SDKs send it or created_at_op as
// the research preview does; both given must agree.
func (p *params) createdAt(op string) *time.Time {
	var t *time.Time
	var from string
	for _, name := range []string{"created_at[" + op + "]", "created_at_" + op} {
		v := p.get(name)
		if v == "" {
			continue
		}
		u, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			p.fail("%s must be an RFC 3339 date-time such as 2026-01-02T03:04:05Z, not %q", name, v)
			return nil
		}
		if t != nil && !t.Equal(u) {
			p.fail("%s and %s disagree; send one of them", from, name)
			return nil
		}
		t, from = &u, name
	}
	return t
}

// depth returns the depth of a memories list, 0 when absent.
func (p *params) depth() int {
	v := p.get("depth")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		p.fail("depth must be an integer of 0 or more, not %q", v)
		return 0
	}
	return n
}

// operation returns the operation filter of a versions list, "" when
// absent.
func (p *params) operation() memstore.Operation {
	switch op := memstore.Operation(p.get("operation")); op {
	case "", memstore.OpCreated, memstore.OpModified, memstore.OpDeleted:
		return op
	default:
		p.fail("operation must be created, modified or deleted, not %q", op)
		return ""
	}
}

// sha256 returns a hash parameter in lowercase, "" when absent or empty.
func (p *params) sha256(name string) string {
	v := p.get(name)
	if v == "" {
		return ""
	}
	h, err := checkSHA256(name, v)
	if err != nil && p.err == nil {
		p.err = err
	}
	return h
}

// checkSHA256 returns a content hash given by a client in lowercase, the
// form memstore keeps (clients may send either case), or an EInvalid
// naming field unless it is 64 hexadecimal digits.
func checkSHA256(field, v string) (string, error) {
	ok := len(v) == 64
	for i := 0; ok && i < len(v); i++ {
		c := v[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	}
	if !ok {
		return "", invalid("%s must be a SHA-256 in 64 hexadecimal digits", field)
	}
	return strings.ToLower(v), nil
}

// readBody reads a request body of at most the server's cap (413
// request_too_large beyond it) and checks that it is UTF-8 without lone
// surrogate escapes (400): encoding/json would quietly turn either into
// U+FFFD, and the content stored, and its hash, would differ from what the
// client sent.
func (s *Server) readBody(w *responseWriter, r *http.Request) ([]byte, error) {
	tooLarge := &memstore.Error{Code: httpstatus.TooLarge,
		Message: "the request body is larger than " + strconv.FormatInt(s.maxBody, 10) + " bytes"}
	if r.ContentLength > s.maxBody {
		return nil, tooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(w.ResponseWriter, r.Body, s.maxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case errors.Is(err, netlimit.ErrSlowBody):
		return nil, invalid("%v", err)
	case err != nil:
		return nil, invalid("the request body could not be read: %v", err)
	case !utf8.Valid(b):
		return nil, invalid("the request body is not valid UTF-8")
	}
	if i := loneSurrogate(b); i >= 0 {
		return nil, invalid("the request body has a lone UTF-16 surrogate escape %s at byte %d; JSON text must encode valid Unicode", b[i:i+6], i)
	}
	return b, nil
}

// decodeBody reads a JSON object into v (a pointer to a request struct).
// Unknown fields are ignored; a value of the wrong JSON type is a 400
// naming its field.
func (s *Server) decodeBody(w *responseWriter, r *http.Request, v any) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return invalid("a JSON object is required as the request body")
	}
	return unmarshal(b, v)
}

// readNoBody reads the body of an endpoint that takes none (archive,
// redact): the SDKs send nothing, the seed's examples {}; null and any
// object are accepted too.
func (s *Server) readNoBody(w *responseWriter, r *http.Request) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var v struct{}
	return unmarshalOptional(b, &v)
}

// unmarshalOptional is unmarshal for a body that may be empty.
func unmarshalOptional(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return unmarshal(b, v)
}

// unmarshal decodes JSON with errors that say what the client got wrong.
func unmarshal(b []byte, v any) error {
	if err := checkDepth(b); err != nil {
		return err
	}
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field == "":
		return invalid("the request body must be a JSON object, not %s", jsonValue(te.Value))
	case errors.As(err, &te) && te.Type.Kind() != reflect.Map && isMap(reflect.TypeOf(v), te.Field):
		// encoding/json names the map, not the key, of a bad value.
		return invalid("the values of %s must each be %s, not %s", te.Field, jsonKind(te.Type), jsonValue(te.Value))
	case errors.As(err, &te):
		return invalid("%s must be %s, not %s", te.Field, jsonKind(te.Type), jsonValue(te.Value))
	}
	return invalid("the request body is not valid JSON: %v", err)
}

// checkDepth refuses a body whose fields nest deeper than
// memstore.MaxJSONDepth (the body's own object is one level more), naming
// the first such field. encoding/json alone would take 10,000 levels, and
// a session would keep them.
func checkDepth(b []byte) error {
	d := memstore.JSONDepth(b)
	if d <= memstore.MaxJSONDepth+1 {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) == nil {
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if err := memstore.ValidateJSONDepth(k, fields[k]); err != nil {
				return err
			}
		}
	}
	return invalid("the request body is nested %d levels deep; the limit is %d", d, memstore.MaxJSONDepth+1)
}

// isMap reports whether the JSON field at path ("a.b") of type t is a map.
func isMap(t reflect.Type, path string) bool {
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		found := false
		for _, f := range reflect.VisibleFields(t) { // outer fields first
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && !f.Anonymous && (tag == name || tag == "" && strings.EqualFold(f.Name, name)) {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Map
}

// jsonKind names the JSON kind that a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

// jsonValue names the kind of a JSON value as encoding/json reports it
// ("number", "number 1e99", "string", "bool", "array", "object").
func jsonValue(v string) string {
	v, _, _ = strings.Cut(v, " ")
	switch v {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + v
	}
	return "a " + v
}

// loneSurrogate returns the offset in b of the first \u escape that
// encodes half of a UTF-16 surrogate pair without the other half, or -1.
// Each escape is skipped as a whole, so in "\\ud800" the escaped
// backslash is followed by plain letters. A backslash outside a string is
// invalid JSON that the decoder reports, so strings need not be tracked.
func loneSurrogate(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 >= len(b) {
			return -1
		}
		i += j
		if b[i+1] != 'u' {
			i += 2 // \" \\ \/ \n ...
			continue
		}
		r, ok := hex4(b[i+2:])
		switch {
		case !ok:
			i += 2 // malformed: the decoder reports it
		case 0xDC00 <= r && r <= 0xDFFF:
			return i // a low half first
		case 0xD800 <= r && r <= 0xDBFF:
			k := i + 6
			if k+1 < len(b) && b[k] == '\\' && b[k+1] == 'u' {
				if lo, ok := hex4(b[k+2:]); ok && 0xDC00 <= lo && lo <= 0xDFFF {
					i = k + 6
					continue
				}
			}
			return i // a high half without its low half
		default:
			i += 6
		}
	}
}

// hex4 decodes the four hexadecimal digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// pageOf makes the wire form of a page. The backends never return an
// empty page with a cursor, and this keeps it so: the TypeScript SDK
// stops at the first empty page.
func pageOf[T, W any](p memstore.Page[T], conv func(*T) W) PageJSON[W] {
	out := PageJSON[W]{Data: make([]W, len(p.Items))}
	for i := range p.Items {
		out.Data[i] = conv(&p.Items[i])
	}
	if p.Next != "" && len(p.Items) > 0 {
		next := p.Next
		out.NextPage = &next
	}
	return out
}

package memstore_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func TestValidatePath(t *testing.T) {
	long := "/" + strings.Repeat("a", 1023)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/a", true}, {"/notes/todo.md", true}, {"/.hidden", true}, {"/with space/é.md", true},
		{`/back\slash`, true}, {long, true}, {"/" + strings.Repeat("s/", 19) + "x", true},
		{"", false}, {"/", false}, {"a/b", false}, {long + "b", false},
		{"/" + strings.Repeat("s/", 20) + "x", false}, // 21 segments
		{"/a/", false}, {"//a", false}, {"/a//b", false}, {"/./a", false}, {"/a/..", false},
		{"/a\x00b", false}, {"/a\tb", false}, {"/zero\u200bwidth", false}, {"/soft\u00adhyphen", false},
		{"/bom\ufeff", false}, {"/line\u2028sep", false}, {"/e\u0301.md", false}, // decomposed é is not NFC
		{"/bad\xffutf8", false},
	} {
		err := memstore.ValidatePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("ValidatePath(%q) code = %q", tc.path, memstore.ErrorCode(err))
		}
	}
}

func TestPathsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"/notes", "/notes", true}, {"/notes", "/notes/todo.md", true}, {"/notes/todo.md", "/notes", true},
		{"/notes", "/notes-old/a", false}, {"/notes", "/notesx", false}, {"/a/b", "/a/c", false},
		{"/Notes", "/notes", false},
	} {
		if got := memstore.PathsOverlap(tc.a, tc.b); got != tc.want {
			t.Errorf("PathsOverlap(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestValidateContent(t *testing.T) {
	if err := memstore.ValidateContent(strings.Repeat("x", memstore.MaxContentBytes)); err != nil {
		t.Errorf("content at the limit: %v", err)
	}
	if err := memstore.ValidateContent(""); err != nil {
		t.Errorf("empty content: %v", err)
	}
	for _, c := range []string{strings.Repeat("x", memstore.MaxContentBytes+1), "bad \xff"} {
		if err := memstore.ValidateContent(c); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("ValidateContent(%.20q) = %v", c, err)
		}
	}
}

func TestValidateStoreFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"name", memstore.ValidateStoreName("User Preferences"), true},
		{"name 255", memstore.ValidateStoreName(strings.Repeat("é", 255)), true},
		{"name 256", memstore.ValidateStoreName(strings.Repeat("é", 256)), false},
		{"name empty", memstore.ValidateStoreName(""), false},
		{"name control", memstore.ValidateStoreName("a\nb"), false},
		{"description 1024", memstore.ValidateStoreDescription(strings.Repeat("d", 1024)), true},
		{"description 1025", memstore.ValidateStoreDescription(strings.Repeat("d", 1025)), false},
		{"metadata", memstore.ValidateMetadata(map[string]string{"team": "core", "k": ""}), true},
		{"metadata empty key", memstore.ValidateMetadata(map[string]string{"": "v"}), false},
		{"metadata long key", memstore.ValidateMetadata(map[string]string{strings.Repeat("k", 65): "v"}), false},
		{"metadata long value", memstore.ValidateMetadata(map[string]string{"k": strings.Repeat("v", 513)}), false},
		{"prefix", memstore.ValidatePathPrefix("/notes/"), true},
		{"prefix root", memstore.ValidatePathPrefix("/"), true},
		{"prefix no slash", memstore.ValidatePathPrefix("notes/"), false},
		{"prefix raw", memstore.ValidatePathPrefix("/no"), true},
		{"prefix NUL", memstore.ValidatePathPrefix("/a\x00/"), false},
		{"prefix 1024", memstore.ValidatePathPrefix("/" + strings.Repeat("p", memstore.MaxPathBytes-1)), true},
		{"prefix 1025", memstore.ValidatePathPrefix("/" + strings.Repeat("p", memstore.MaxPathBytes)), false},
	} {
		if (tc.err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, tc.err, tc.ok)
		}
	}
	many := map[string]string{}
	for i := range 17 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	if err := memstore.ValidateMetadata(many); err == nil {
		t.Error("17 metadata pairs accepted")
	}
}

func TestErrorCode(t *testing.T) {
	err := memstore.Errorf(memstore.ENotFound, "no store %s", "memstore_x")
	if memstore.ErrorCode(err) != memstore.ENotFound || memstore.ErrorMessage(err) != "no store memstore_x" {
		t.Errorf("code %q message %q", memstore.ErrorCode(err), memstore.ErrorMessage(err))
	}
	other := strings.NewReader("").UnreadByte() // any plain error
	if memstore.ErrorCode(other) != memstore.EInternal || memstore.ErrorMessage(other) != "internal server error" {
		t.Errorf("plain error: %q %q", memstore.ErrorCode(other), memstore.ErrorMessage(other))
	}
	if memstore.ErrorCode(nil) != "" {
		t.Error("nil error has a code")
	}
}

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		json string
		want int
	}{
		{``, 0},
		{`1`, 0},
		{`"[{"`, 0},
		{`[]`, 1},
		{`{"a":1,"b":"}]"}`, 1},
		{`{"a":[1,{"b":[]}],"c":{}}`, 4},
		{`["\"[", ["\\"], "\\\"{"]`, 2},
		{`[[[`, 3}, // not JSON: the decoder says so
		{strings.Repeat("[", 9000) + strings.Repeat("]", 9000), 9000},
	} {
		if got := memstore.JSONDepth([]byte(tc.json)); got != tc.want {
			t.Errorf("JSONDepth(%.40s) = %d, want %d", tc.json, got, tc.want)
		}
	}
	deep := []byte(strings.Repeat("[", memstore.MaxJSONDepth+1) + strings.Repeat("]", memstore.MaxJSONDepth+1))
	if err := memstore.ValidateJSONDepth("agent", deep); memstore.ErrorCode(err) != memstore.EInvalid ||
		!strings.Contains(memstore.ErrorMessage(err), "agent is nested 33 levels deep; the limit is 32") {
		t.Errorf("ValidateJSONDepth of %d levels: %v", memstore.MaxJSONDepth+1, err)
	}
	if err := memstore.ValidateJSONDepth("agent", deep[1:len(deep)-1]); err != nil {
		t.Errorf("ValidateJSONDepth of %d levels: %v", memstore.MaxJSONDepth, err)
	}
}

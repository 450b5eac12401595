package memstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// badText are texts no backend can look a record up by: NUL alone and
// inside an ID, and bytes that are not UTF-8.
var badText = []string{"\x00", "memstore_\x00x", "\xff", "mem\xc3("}

// TestCoreRefusesBadTextBeforeTheBackend: every call of the caller-facing
// services given an ID, filter or name that is not text (ValidateText),
// or a kept field that no backend can read back, is refused (EInvalid)
// before any backend method is called.
func TestCoreRefusesBadTextBeforeTheBackend(t *testing.T) {
	f := newCoreFixture(t)
	m := f.mems[f.rw]
	name := "n"
	var calls []coreCall
	for _, bad := range badText {
		for _, cc := range f.adminCalls(bad, bad) {
			switch cc.name {
			case "CreateStore", "Stores", "SessionToken", "RevokeSessionToken": // of no ID, or of the fixture's token
			default:
				calls = append(calls, cc)
			}
		}
		reads, writes, admin := f.memoryCallsOf(bad, bad, bad)
		calls = append(calls, reads...)
		calls = append(calls, writes...)
		calls = append(calls, admin...)
		reads, writes, admin = f.memoryCallsOf(f.rw, bad, bad)
		calls = append(calls, reads[:2]...) // Memory, MemoryUnlessAt
		calls = append(calls, writes[1:]...)
		calls = append(calls, admin...)
		calls = append(calls,
			coreCall{"Session", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Session(ctx, c, bad))
			}},
			coreCall{"SessionToken", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.SessionToken(ctx, c, bad))
			}},
			coreCall{"RevokeSessionToken", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.RevokeSessionToken(ctx, c, bad))
			}},
			coreCall{"MemoryUnlessAt a bad version", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.MemoryUnlessAt(ctx, c, f.rw, m.ID, bad))
			}},
			coreCall{"Sessions of a bad store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Sessions(ctx, c, memstore.SessionFilter{StoreID: bad}))
			}},
			coreCall{"Sessions of a bad agent", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Sessions(ctx, c, memstore.SessionFilter{AgentID: bad}))
			}},
			coreCall{"Versions by a bad filter", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Versions(ctx, c, f.rw, memstore.VersionFilter{MemoryID: bad}))
			}},
			coreCall{"Versions by a bad actor", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Versions(ctx, c, f.rw, memstore.VersionFilter{SessionID: bad}))
			}},
			coreCall{"Memories under a bad prefix", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Memories(ctx, c, f.rw, memstore.MemoryFilter{PathPrefix: "/" + bad}))
			}},
			coreCall{"AttachStore of a bad store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.AttachStore(ctx, c, f.sessionID, memstore.AttachmentCreate{StoreID: bad}))
			}},
			coreCall{"CreateSession of a bad store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: bad}}})
				return err
			}},
			coreCall{"CreateSession with bad metadata", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Metadata: map[string]string{"k": bad}})
				return err
			}},
			coreCall{"CreateSession with a bad field name", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Fields: map[string]json.RawMessage{bad: json.RawMessage(`1`)}})
				return err
			}},
			coreCall{"CreateStore with a bad metadata key", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.CreateStore(ctx, c, memstore.StoreCreate{Name: "n", Metadata: map[string]string{bad: "v"}}))
			}},
			coreCall{"UpdateStore with a bad metadata value", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.UpdateStore(ctx, c, f.rw, memstore.StoreUpdate{Name: &name, Metadata: map[string]*string{"k": &bad}}))
			}},
			coreCall{"Activity of a bad store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Activity(ctx, c, memstore.ActivityFilter{StoreID: bad}))
			}},
			coreCall{"Activity of a bad actor", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.Activity(ctx, c, memstore.ActivityFilter{StoreID: f.rw, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: bad}}))
			}},
		)
	}
	for _, field := range []string{`"\u0000"`, `{"a":["x\u0000"]}`, `{"\u0000":1}`, `"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"\ud800\n"`, "\"\xff\""} {
		raw := json.RawMessage(field)
		calls = append(calls,
			coreCall{"CreateSession with the field " + field, func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Fields: map[string]json.RawMessage{"agent": raw}})
				return err
			}},
			coreCall{"UpdateSession with the field " + field, func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
				return errOf(co.UpdateSession(ctx, c, f.sessionID, memstore.SessionUpdate{Fields: map[string]json.RawMessage{"environment_id": raw}}))
			}})
	}
	// A search's text may hold NUL, which it searches as a space; not
	// invalid UTF-8.
	calls = append(calls, coreCall{"SearchMemories for bad text", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
		return errOf(co.SearchMemories(ctx, c, []string{f.rw}, memstore.SearchQuery{Text: "alpha\xff"}))
	}})
	f.refused(t, f.admin, memstore.EInvalid, "bad text", calls...)
}

// TestValidateText: NUL and invalid UTF-8 are refused, naming the field;
// any other text passes, control characters and U+FFFD included.
func TestValidateText(t *testing.T) {
	for _, s := range []string{"", "agent_1", "tab\there", "\ufffd", "日本"} {
		if err := memstore.ValidateText("f", s); err != nil {
			t.Errorf("ValidateText(%q) = %v", s, err)
		}
		if err := memstore.ValidateID("f_id", s); err != nil {
			t.Errorf("ValidateID(%q) = %v", s, err)
		}
	}
	for _, s := range badText {
		err := memstore.ValidateText("agent_id", s)
		if memstore.ErrorCode(err) != memstore.EInvalid || !strings.HasPrefix(memstore.ErrorMessage(err), "agent_id ") {
			t.Errorf("ValidateText(%q) = %v", s, err)
		}
		err = memstore.ValidateID("memory_id", s)
		if memstore.ErrorCode(err) != memstore.EInvalid || !strings.Contains(memstore.ErrorMessage(err), "is not an ID") {
			t.Errorf("ValidateID(%q) = %v", s, err)
		}
	}
	// An ID's message quotes at most its start.
	if msg := memstore.ErrorMessage(memstore.ValidateID("memory_id", strings.Repeat("x", 1<<20)+"\x00")); len(msg) > 200 {
		t.Errorf("the message of a long ID is %d bytes", len(msg))
	}
}

// TestValidateJSONText: the escapes PostgreSQL's JSON functions refuse,
// \u0000 and half a surrogate pair, and invalid UTF-8, are refused, in
// strings and names alike; escaped backslashes and pairs are not.
func TestValidateJSONText(t *testing.T) {
	for _, ok := range []string{`"agent_1"`, `{"id":"a","v":[1,2,{"x":null}]}`, `"\\u0000"`, `"\\\\\\u0041"`, `"\ud83d\ude00"`,
		`"\u0041\u00e9"`, `{"\ud83d\ude00":"\""}`, `"\ufffd"`, "\"\u00e9\"", `7`, `[]`} {
		if err := memstore.ValidateJSONText("f", []byte(ok)); err != nil {
			t.Errorf("ValidateJSONText(%s) = %v", ok, err)
		}
	}
	for _, bad := range []string{`"\u0000"`, `{"\u0000":1}`, `["a","b\u0000c"]`, `"\\\u0000"`, `"\ud800"`, `"\udc00"`, `"\ud800\ud800"`,
		`"\udc00\ud800"`, `"\ud800x"`, `"\ud800\n"`, `"\ud83d\u0041"`, "\"\xff\""} {
		if !json.Valid([]byte(bad)) {
			t.Fatalf("%s is not valid JSON", bad)
		}
		err := memstore.ValidateJSONText(`"agent"`, []byte(bad))
		if memstore.ErrorCode(err) != memstore.EInvalid || !strings.HasPrefix(memstore.ErrorMessage(err), `"agent" `) {
			t.Errorf("ValidateJSONText(%s) = %v", bad, err)
		}
	}
}

// TestStorableText: NUL removed, invalid UTF-8 replaced, cut at a
// character within the limit; text already storable unchanged.
func TestStorableText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"HTTP 500: ok", 100, "HTTP 500: ok"},
		{"a\x00b\x00", 100, "ab"},
		{"bad \xff\xfe end", 100, "bad \ufffd end"},
		{"ééé", 5, "éé"},
		{"ab\x00\xffcd", 5, "ab\ufffd"},
		{strings.Repeat("x", 1000), 512, strings.Repeat("x", 512)},
		{"", 0, ""},
	} {
		if got := memstore.StorableText(tc.in, tc.max); got != tc.want {
			t.Errorf("StorableText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// FuzzStorable holds the input-cleaning rules to what they promise, for
// any text: StorableText's result is text (ValidateText) within its
// limit and is its own result, equal to the input when that was text
// within the limit; ValidateText refuses exactly NUL and invalid UTF-8;
// ValidateJSONText passes a JSON text only when every string in it, once
// decoded, is text made of what was sent.
func FuzzStorable(f *testing.F) {
	for _, seed := range []string{"", "HTTP 500: a\x00b", "\xff\xfe", "ééé", `"\u0000"`, `{"a":"\ud800"}`, `"\ud83d\ude00"`,
		`"\\u0000"`, `{"\u0000":1}`, `["x","\udc00\ud800"]`, "\"\xc3(\""} {
		f.Add(seed, 16)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max & 0xffff
		got := memstore.StorableText(s, max)
		if memstore.ValidateText("s", got) != nil || len(got) > max {
			t.Fatalf("StorableText(%q, %d) = %q: not text within the limit", s, max, got)
		}
		if again := memstore.StorableText(got, max); again != got {
			t.Fatalf("StorableText of its own result %q is %q", got, again)
		}
		isText := utf8.ValidString(s) && !strings.ContainsRune(s, 0)
		if isText && len(s) <= max && got != s {
			t.Fatalf("StorableText(%q, %d) changed text within the limit to %q", s, max, got)
		}
		if (memstore.ValidateText("s", s) == nil) != isText {
			t.Fatalf("ValidateText(%q) = %v", s, memstore.ValidateText("s", s))
		}
		if !json.Valid([]byte(s)) {
			return
		}
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber() // a number of any size is valid JSON
		if err := d.Decode(&v); err != nil {
			t.Fatalf("json.Valid but %v", err)
		}
		if memstore.ValidateJSONText("f", []byte(s)) != nil {
			return
		}
		// Accepted: every string decodes to text, and a U+FFFD in one
		// was sent as such, not made of half a surrogate pair.
		sent := strings.Count(s, "\ufffd") + strings.Count(strings.ToLower(s), `\ufffd`)
		found := 0
		var walk func(any)
		check := func(str string) {
			if memstore.ValidateText("f", str) != nil {
				t.Fatalf("ValidateJSONText passed %q, holding %q", s, str)
			}
			found += strings.Count(str, "\ufffd")
		}
		walk = func(x any) {
			switch x := x.(type) {
			case string:
				check(x)
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					check(k)
					walk(e)
				}
			}
		}
		walk(v)
		if found > sent {
			t.Fatalf("ValidateJSONText passed %q, whose strings decode to %d U+FFFD of %d sent", s, found, sent)
		}
	})
}

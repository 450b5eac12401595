package memstore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"User Preferences", "user-preferences"},
		{"notes", "notes"},
		{"  leading and trailing  ", "leading-and-trailing"},
		{"a--b__c..d / e", "a-b-c-d-e"},
		{"v2.0 Release", "v2-0-release"},
		{"Ünïcode Notes", "ünïcode-notes"},
		{"日本語 メモ", "日本語-メモ"},
		{"Straße", "straße"},
		{"Notes ٣", "notes-٣"}, // a digit of another script
		{"🙂 emoji 🙂", "emoji"},
		{"memstore_01abc", "memstore-01abc"},
		{"!!!", ""},
		{" - ", ""},
		{"", ""},
	} {
		if got := memstore.Slug(tc.name); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSlugLength: a long name is cut to at most 64 bytes, on a character
// boundary, without a dangling "-".
func TestSlugLength(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("a", 100),
		strings.Repeat("é", 100),
		strings.Repeat("日", 100),
		strings.Repeat("ab ", 40),
		strings.Repeat("abcdefg ", 8) + "x",
		strings.Repeat("x", 62) + " 日本",
	} {
		got := memstore.Slug(name)
		full := strings.Join(strings.Fields(strings.ToLower(name)), "-")
		switch {
		case len(got) > 64 || len(got) < 64-5:
			t.Errorf("Slug(%.20q...) is %d bytes, want at most 64 (and not much less)", name, len(got))
		case !utf8.ValidString(got):
			t.Errorf("Slug(%.20q...) = %q cuts a character", name, got)
		case strings.HasSuffix(got, "-"):
			t.Errorf("Slug(%.20q...) = %q ends with a dash", name, got)
		case !strings.HasPrefix(full, got):
			t.Errorf("Slug(%.20q...) = %q is not the start of %q", name, got, full)
		}
	}
}

func TestAssignMountPaths(t *testing.T) {
	for _, tc := range []struct {
		names, ids []string // ids default to memstore_<i>
		want       []string
	}{
		{names: []string{"User Preferences"}, want: []string{"user-preferences"}},
		{names: []string{"Notes", "notes", "NOTES!"}, want: []string{"notes", "notes-2", "notes-3"}},
		{names: []string{"notes", "notes", "notes 2"}, want: []string{"notes", "notes-2", "notes-2-2"}},
		{names: []string{"notes 2", "notes", "notes"}, want: []string{"notes-2", "notes", "notes-3"}},
		{names: []string{"!!!", "???", "ok"}, ids: []string{"memstore_01ABC", "memstore_01abd", "memstore_x"},
			want: []string{"memstore-01abc", "memstore-01abd", "ok"}},
		{names: []string{"memstore 01abc", "---"}, ids: []string{"memstore_a", "memstore_01abc"},
			want: []string{"memstore-01abc", "memstore-01abc-2"}},
		{names: nil, want: nil},
	} {
		atts := make([]memstore.Attachment, len(tc.names))
		for i, n := range tc.names {
			id := fmt.Sprintf("memstore_%d", i)
			if tc.ids != nil {
				id = tc.ids[i]
			}
			atts[i] = memstore.Attachment{StoreID: id, Name: n, Access: memstore.AccessReadOnly, Instructions: "keep", Description: "d"}
		}
		memstore.AssignMountPaths(atts)
		for i, a := range atts {
			if want := memstore.MountRoot + tc.want[i]; a.MountPath != want {
				t.Errorf("names %q: mount path %d = %q, want %q", tc.names, i, a.MountPath, want)
			}
			if a.Name != tc.names[i] || a.Access != memstore.AccessReadOnly || a.Instructions != "keep" || a.Description != "d" {
				t.Errorf("names %q: attachment %d changed beyond its mount path: %+v", tc.names, i, a)
			}
		}
	}
}

func TestValidateSessionCreate(t *testing.T) {
	stores := func(n int) []memstore.AttachmentCreate {
		var a []memstore.AttachmentCreate
		for i := range n {
			a = append(a, memstore.AttachmentCreate{StoreID: fmt.Sprintf("memstore_%d", i)})
		}
		return a
	}
	with := func(a memstore.AttachmentCreate) []memstore.AttachmentCreate {
		return append(stores(1), a)
	}
	meta := map[string]string{}
	for i := range memstore.MaxMetadataPairs + 1 {
		meta[fmt.Sprintf("k%d", i)] = "v"
	}
	nested := func(depth int) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, depth-1) + `[1]` + strings.Repeat(`}`, depth-1))
	}
	fields := func(kv ...any) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(json.RawMessage)
		}
		return m
	}
	// A string of n bytes as JSON: n+2 bytes with its quotes.
	str := func(n int) json.RawMessage { return json.RawMessage(`"` + strings.Repeat("x", n) + `"`) }
	atLimit := memstore.MaxSessionFieldsBytes - len("agent") - len("env") - len(`"e"`) - 2
	for _, tc := range []struct {
		name    string
		c       memstore.SessionCreate
		mention string // "" when valid
	}{
		{"empty", memstore.SessionCreate{}, ""},
		{"eight stores", memstore.SessionCreate{Stores: stores(8)}, ""},
		{"both accesses", memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
			{StoreID: "memstore_a", Access: memstore.AccessReadOnly}, {StoreID: "memstore_b", Access: memstore.AccessReadWrite}}}, ""},
		{"4096 two-byte characters", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Instructions: strings.Repeat("é", 4096)})}, ""},
		{"4096 three-byte characters", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Instructions: strings.Repeat("日", 4096)})}, ""},
		{"title of 255 characters", memstore.SessionCreate{Title: strings.Repeat("é", 255)}, ""},
		{"metadata", memstore.SessionCreate{Metadata: map[string]string{"a": "b"}}, ""},
		{"fields nested to the limit", memstore.SessionCreate{Fields: fields("agent", nested(memstore.MaxJSONDepth))}, ""},
		{"fields of the limit's size", memstore.SessionCreate{Fields: fields("agent", str(atLimit), "env", json.RawMessage(`"e"`))}, ""},

		{"nine stores", memstore.SessionCreate{Stores: stores(9)}, "8"},
		{"same store twice", memstore.SessionCreate{Stores: append(stores(2), memstore.AttachmentCreate{StoreID: "memstore_1"})}, "resources[2]"},
		{"no store ID", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{})}, "resources[1]"},
		{"unknown access", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Access: "write"})}, "resources[1]"},
		{"access in capitals", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Access: "READ_ONLY"})}, "resources[1]"},
		{"4097 characters", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Instructions: strings.Repeat("a", 4097)})}, "resources[1]"},
		{"4097 two-byte characters", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Instructions: strings.Repeat("é", 4097)})}, "resources[1]"},
		{"instructions not UTF-8", memstore.SessionCreate{Stores: with(memstore.AttachmentCreate{StoreID: "memstore_x", Instructions: "a\xffb"})}, "resources[1]"},
		{"title of 256 characters", memstore.SessionCreate{Title: strings.Repeat("t", 256)}, "title"},
		{"title not UTF-8", memstore.SessionCreate{Title: "\xff"}, "title"},
		{"seventeen metadata pairs", memstore.SessionCreate{Metadata: meta}, "metadata"},
		{"empty metadata key", memstore.SessionCreate{Metadata: map[string]string{"": "v"}}, "metadata"},
		{"field not JSON", memstore.SessionCreate{Fields: fields("env", str(1), "agent", json.RawMessage(`{"id":`))}, `"agent" is not valid JSON`},
		{"field nested a level too deep", memstore.SessionCreate{Fields: fields("env", str(1), "agent", nested(memstore.MaxJSONDepth+1))}, "agent is nested 33 levels deep; the limit is 32"},
		{"field nested 9000 deep", memstore.SessionCreate{Fields: fields("agent", nested(9000))}, "agent is nested 9000 levels deep"},
		{"fields a byte too large", memstore.SessionCreate{Fields: fields("agent", str(atLimit+1), "env", json.RawMessage(`"e"`))}, "agent alone"},
		{"a field of 1 MB", memstore.SessionCreate{Fields: fields("agent", str(1<<20))}, "the limit is 16384 bytes"},
	} {
		err := memstore.ValidateSessionCreate(tc.c)
		switch {
		case tc.mention == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.mention == "":
		case memstore.ErrorCode(err) != memstore.EInvalid:
			t.Errorf("%s: error %v, want %s", tc.name, err, memstore.EInvalid)
		case !strings.Contains(memstore.ErrorMessage(err), tc.mention):
			t.Errorf("%s: message %q does not mention %q", tc.name, memstore.ErrorMessage(err), tc.mention)
		}
	}
}

func TestCallerPermissions(t *testing.T) {
	key := &memstore.Caller{WorkspaceID: "wrkspc_1", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_1"}}
	session := &memstore.Caller{
		WorkspaceID: "wrkspc_1",
		Actor:       memstore.Actor{Type: memstore.ActorSession, ID: "sesn_1"},
		Session: &memstore.Session{ID: "sesn_1", Attachments: []memstore.Attachment{
			{StoreID: "memstore_rw", Access: memstore.AccessReadWrite},
			{StoreID: "memstore_ro", Access: memstore.AccessReadOnly},
		}},
	}
	type check struct {
		name string
		err  error
		want string // error code, "" for allowed
	}
	for _, c := range []check{
		{"key reads any store", key.CanRead("memstore_other"), ""},
		{"key writes any store", key.CanWrite("memstore_other"), ""},
		{"key administers", key.CanAdminister("create a memory store"), ""},
		{"session reads a read-write store", session.CanRead("memstore_rw"), ""},
		{"session writes a read-write store", session.CanWrite("memstore_rw"), ""},
		{"session reads a read-only store", session.CanRead("memstore_ro"), ""},
		{"session writes a read-only store", session.CanWrite("memstore_ro"), memstore.EPermission},
		{"session reads another store", session.CanRead("memstore_other"), memstore.EPermission},
		{"session writes another store", session.CanWrite("memstore_other"), memstore.EPermission},
		{"session administers", session.CanAdminister("create a memory store"), memstore.EPermission},
	} {
		if got := memstore.ErrorCode(c.err); got != c.want {
			t.Errorf("%s: %v, want code %q", c.name, c.err, c.want)
		}
	}
	for what, err := range map[string]error{
		"memstore_other":        session.CanRead("memstore_other"),
		"read-only":             session.CanWrite("memstore_ro"),
		"create a memory store": session.CanAdminister("create a memory store"),
	} {
		if msg := memstore.ErrorMessage(err); !strings.Contains(msg, what) {
			t.Errorf("message %q does not say %q", msg, what)
		}
	}
}

// TestSessionFieldsMessageIsShort: refusing thousands of fields, or one
// with a huge name, names a few of them, shortened, not all.
func TestSessionFieldsMessageIsShort(t *testing.T) {
	fields := map[string]json.RawMessage{strings.Repeat("n", 5000): json.RawMessage(`"` + strings.Repeat("x", memstore.MaxSessionFieldsBytes) + `"`)}
	for i := range 3000 {
		fields[fmt.Sprintf("field%04d", i)] = json.RawMessage(`1`)
	}
	err := memstore.ValidateSessionCreate(memstore.SessionCreate{Fields: fields})
	if memstore.ErrorCode(err) != memstore.EInvalid {
		t.Fatalf("err = %v, want EInvalid", err)
	}
	msg := memstore.ErrorMessage(err)
	if len(msg) > 500 || !strings.Contains(msg, "and 2996 more") || !strings.Contains(msg, fmt.Sprint(memstore.MaxSessionFieldsBytes)) {
		t.Errorf("message of %d bytes: %.600s", len(msg), msg)
	}
}

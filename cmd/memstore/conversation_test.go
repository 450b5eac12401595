package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// TestConversationFlags: --conversation on stores create and update and
// on sessions create and update sets the metadata key that says the
// memories are turns of conversations, on a database and on a server;
// grep ranks a store's turns with their neighbours when the store says
// so, and --conversation=false overrides it.
func TestConversationFlags(t *testing.T) {
	onDatabaseAndServer(t, func(t *testing.T, _ string, backend []string) {
		cli := func(stdin string, args ...string) (int, string, string) {
			t.Helper()
			return run(t, stdin, append(args, backend...)...)
		}
		jsonOf := func(into any, args ...string) {
			t.Helper()
			code, out, errs := cli("", append(args, "--json")...)
			if code != 0 || json.Unmarshal([]byte(out), into) != nil {
				t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
			}
		}
		refused := func(code int, want string, args ...string) {
			t.Helper()
			c, out, errs := cli("", args...)
			if c != code || !strings.Contains(errs, want) {
				t.Errorf("%v: exit %d, want %d with %q: %s %s", args, c, code, want, out, errs)
			}
		}
		var chats, plain httpapi.StoreJSON
		jsonOf(&chats, "stores", "create", "chats", "--conversation")
		jsonOf(&plain, "stores", "create", "plain")
		if got := chats.Metadata[memstore.ConversationKey]; got != "true" {
			t.Errorf("stores create --conversation: metadata %v; want %s=true", chats.Metadata, memstore.ConversationKey)
		}
		for p, text := range map[string]string{
			"/chats/c1/0001.md": "Ana: we adopted a rescue dog from the shelter, finally a dog of our own",
			"/chats/c1/0002.md": "Ben: a dog! what breed is the dog?",
			"/chats/c1/0003.md": "Ana: a beagle called Biscuit, who sleeps all day long on the sofa",
			"/chats/c2/0001.md": "Cem: beagle",
		} {
			if code, _, errs := cli(text, "put", "--store", chats.ID, p, "-"); code != 0 {
				t.Fatalf("put %s: exit %d: %s", p, code, errs)
			}
		}
		// answerFirst reports whether grep ranks the answer (c1's turn
		// 3, beside the dog) above the lone beagle.
		answerFirst := func(args ...string) bool {
			t.Helper()
			var rs []httpapi.SearchResultJSON
			jsonOf(&rs, append([]string{"grep", "dog beagle", "--store", chats.ID, "--limit", "100"}, args...)...)
			var got []string
			for _, r := range rs {
				got = append(got, r.Memory.Path)
			}
			i, j := slices.Index(got, "/chats/c1/0003.md"), slices.Index(got, "/chats/c2/0001.md")
			if i < 0 || j < 0 {
				t.Fatalf("grep %v: %q; want both beagles", args, got)
			}
			return i < j
		}
		if !answerFirst() || answerFirst("--conversation=false") || !answerFirst("--conversation") {
			t.Error("grep of a store of conversations: want context by default and with --conversation, none with --conversation=false")
		}
		jsonOf(&chats, "stores", "update", chats.ID, "--conversation=false")
		if got := chats.Metadata[memstore.ConversationKey]; got != "false" {
			t.Errorf("stores update --conversation=false: metadata %v", chats.Metadata)
		}
		if answerFirst() {
			t.Error("grep after stores update --conversation=false: still with context")
		}

		var ses httpapi.SessionJSON
		jsonOf(&ses, "sessions", "create", "--store", plain.ID, "--conversation")
		if got := ses.Metadata[memstore.ConversationKey]; got != "true" {
			t.Errorf("sessions create --conversation: metadata %v", ses.Metadata)
		}
		jsonOf(&ses, "sessions", "update", ses.ID, "--conversation=false")
		if got := ses.Metadata[memstore.ConversationKey]; got != "false" {
			t.Errorf("sessions update --conversation=false: metadata %v", ses.Metadata)
		}

		refused(2, "disagree", "stores", "create", "x", "--conversation", "--metadata", memstore.ConversationKey+"=false")
		refused(2, "both set and unset", "stores", "update", plain.ID, "--conversation", "--unset-metadata", memstore.ConversationKey)
		c, out, errs := cli("", "stores", "create", "y", "--metadata", memstore.ConversationKey+"=yes")
		if c == 0 || !strings.Contains(errs, `must be "true"`) {
			t.Errorf("stores create with %s=yes: exit %d: %s %s; want its error", memstore.ConversationKey, c, out, errs)
		}
	})
}

package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// CheckDevFixture checks, through co (a core over a database upgraded
// from a development build, with a limit of 3 memories a store) as c,
// the fixture both backends' upgrade tests write in the old schemas: the
// stores notes and old (archived), the memories mem_a (created, changed,
// renamed, its first version redacted), mem_b (created and deleted) and
// mem_c, by the key key and the session agent. real maps the fixture's
// IDs to those of the database. The feeds, the search, the versions'
// pages and the count of memories go on from what the old database held.
func CheckDevFixture(t *testing.T, co *memstore.Core, c *memstore.Caller, notes, old, key, agent string, real *strings.Replacer) {
	t.Helper()
	ctx := context.Background()
	replaceAll := func(ss ...string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = real.Replace(s)
		}
		return out
	}
	feed := func(store string) []string {
		p, err := co.Events(ctx, c, store, memstore.EventFilter{Limit: memstore.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range p.Events {
			out = append(out, fmt.Sprintf("%d %s %s %s %s %s %d", e.Seq, e.Type, e.MemoryID, e.VersionID, e.Actor.Type, e.Actor.ID, e.CreatedAt.UnixNano()/int64(time.Second)))
		}
		return out
	}
	if got, want := feed(notes), replaceAll(
		"1 memory.created mem_a memver_01 api_actor apikey_alice 1",
		"2 memory.modified mem_a memver_02 session_actor sesn_agent 2",
		"3 memory.renamed mem_a memver_03 api_actor apikey_alice 3",
		"4 version.redacted mem_a memver_01 user_actor user_admin 4",
		"5 memory.created mem_b memver_05 session_actor sesn_agent 5",
		"6 memory.deleted mem_b memver_06 session_actor sesn_agent 6",
	); !slices.Equal(got, want) {
		t.Errorf("the feed of %s:\n%s\nwant:\n%s", notes, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := feed(old), replaceAll(
		"1 memory.created mem_c memver_07 api_actor apikey_alice 7",
		"2 store.archived     100", // its actor was not kept
	); !slices.Equal(got, want) {
		t.Errorf("the feed of %s:\n%s\nwant:\n%s", old, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, q := range []string{"lemur", "curious", "tailed", "ring-tailed", "urio", "lemurs"} {
		p, err := co.SearchMemories(ctx, c, []string{notes}, memstore.SearchQuery{Text: q})
		if err != nil || len(p.Items) != 1 || p.Items[0].Memory.ID != "mem_a" {
			t.Errorf("search %q: %v %+v, want mem_a", q, err, p.Items)
		}
	}
	for _, f := range []memstore.VersionFilter{
		{}, {MemoryID: "mem_a"}, {SessionID: agent}, {APIKeyID: key, Operation: memstore.OpModified},
	} {
		f.Limit = 2
		var got []string
		for {
			p, err := co.Versions(ctx, c, notes, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range p.Items {
				got = append(got, v.ID)
			}
			if p.Next == "" {
				break
			}
			f.Page = p.Next
		}
		want := map[string][]string{
			"":                {"memver_06", "memver_05", "memver_03", "memver_02", "memver_01"},
			"mem_a":           {"memver_03", "memver_02", "memver_01"},
			agent:             {"memver_06", "memver_05", "memver_02"},
			key + " modified": {"memver_03"},
		}[strings.TrimSpace(f.MemoryID+f.SessionID+f.APIKeyID+" "+string(f.Operation))]
		if want := replaceAll(want...); !slices.Equal(got, want) {
			t.Errorf("versions %+v: %v, want %v", f, got, want)
		}
	}

	// The count goes on from the one made: notes takes two more memories
	// under a limit of three.
	for i, want := range []string{"", "", memstore.EInvalid} {
		_, err := co.CreateMemory(ctx, c, notes, memstore.MemoryCreate{Path: fmt.Sprintf("/new/%d.md", i), Content: "lemur"})
		if memstore.ErrorCode(err) != want {
			t.Errorf("memory %d of %s under a limit of 3: %v, want %q", i+2, notes, err, want)
		}
	}
}

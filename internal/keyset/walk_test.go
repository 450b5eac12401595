package keyset_test

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/storetest"
)

func TestUpperBound(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"/a/", "/a0", true},
		{"/no", "/np", true},
		{"/é", "/ê", true},
		{"/a\U0010FFFF", "/b", true},        // the last character cannot grow
		{"/\ud7ff", "/\ue000", true},        // past the surrogates
		{"\U0010FFFF\U0010FFFF", "", false}, // nothing is above
	} {
		got, ok := keyset.UpperBound(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("UpperBound(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// sliceFetch serves the walk from paths, sorted, counting its reads.
func sliceFetch(paths []string, reads *int) keyset.FetchMemories {
	sort.Strings(paths)
	return func(r keyset.MemoryRange, yield func(*memstore.Memory) bool) error {
		*reads++
		n := 0
		for _, p := range paths {
			if p < r.From || p == r.From && !r.Inclusive || r.To != "" && p >= r.To {
				continue
			}
			if n == r.Want || !yield(&memstore.Memory{Path: p}) {
				return nil
			}
			n++
		}
		return nil
	}
}

// walkAll lists every page of f, each item a path or a prefix.
func walkAll(t *testing.T, paths []string, f memstore.MemoryFilter) (items []string, reads int) {
	t.Helper()
	fetch := sliceFetch(paths, &reads)
	items = storetest.ListNames(t, f, func(f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
		w, err := keyset.NewMemoryWalk(f)
		if err != nil {
			return memstore.Page[memstore.ListItem]{}, err
		}
		return w.Walk(fetch)
	})
	return items, reads
}

func TestMemoryWalk(t *testing.T) {
	paths := []string{"/a.md", "/b/1.md", "/b/2.md", "/b/c/3.md", "/b/c/d/4.md", "/bc.md", "/z/\U0010FFFF/5.md"}
	for _, c := range []struct {
		name  string
		f     memstore.MemoryFilter
		want  string
		reads int // at most
	}{
		{"all", memstore.MemoryFilter{Limit: 100}, "/a.md /b/1.md /b/2.md /b/c/3.md /b/c/d/4.md /bc.md /z/\U0010FFFF/5.md", 1},
		{"all by 2", memstore.MemoryFilter{Limit: 2}, "/a.md /b/1.md /b/2.md /b/c/3.md /b/c/d/4.md /bc.md /z/\U0010FFFF/5.md", 4},
		{"depth 1", memstore.MemoryFilter{Depth: 1, Limit: 100}, "/a.md /b/ /bc.md /z/", 3},
		{"depth 1 by 1", memstore.MemoryFilter{Depth: 1, Limit: 1}, "/a.md /b/ /bc.md /z/", 8},
		{"depth 2 under /b/", memstore.MemoryFilter{PathPrefix: "/b/", Depth: 2, Limit: 100}, "/b/1.md /b/2.md /b/c/3.md /b/c/d/", 2},
		{"string prefix", memstore.MemoryFilter{PathPrefix: "/b", Depth: 1, Limit: 100}, "/b/ /bc.md", 2},
		{"a character that cannot grow", memstore.MemoryFilter{PathPrefix: "/z/", Depth: 1, Limit: 1}, "/z/\U0010FFFF/", 2},
		{"nothing", memstore.MemoryFilter{PathPrefix: "/q/", Limit: 10}, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, reads := walkAll(t, slices.Clone(paths), c.f)
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("items %q; want %q", s, c.want)
			}
			if reads > c.reads {
				t.Errorf("%d reads; want at most %d", reads, c.reads)
			}
		})
	}
}

func TestMemoryWalkErrors(t *testing.T) {
	for name, f := range map[string]memstore.MemoryFilter{
		"limit":        {Limit: 101},
		"other cursor": {Limit: 10, Page: keyset.Cursor{Kind: keyset.Stores, Key: "x"}.String()},
		"not a cursor": {Limit: 10, Page: "abc"},
	} {
		if _, err := keyset.NewMemoryWalk(f); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("%s: %v; want EInvalid", name, err)
		}
	}
	w, err := keyset.NewMemoryWalk(memstore.MemoryFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	bad := errors.New("disk on fire")
	p, err := w.Walk(func(keyset.MemoryRange, func(*memstore.Memory) bool) error { return bad })
	if !errors.Is(err, bad) || len(p.Items) != 0 {
		t.Errorf("Walk = %v, %v; want the fetch's error and no items", p, err)
	}
}

package agenttool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
)

// runList is memory_list. Without a prefix it shows every mount and the
// entries in each; with one, the entries of that directory. A path_prefix
// is always a directory (a final "/" is added), never a raw string prefix:
// /notes/proj does not list /notes/projects/.
func runList(t *Toolset, ctx context.Context, a args) (string, error) {
	depth := DefaultListDepth
	if n, ok := a.integer("depth"); ok {
		depth = n
	}
	var (
		m      *mount
		prefix string
	)
	if p, ok := a.str("path_prefix"); ok {
		var err error
		if m, prefix, err = t.prefixPath(p); err != nil {
			return "", err
		}
	}
	budget := MaxListEntries + 1 // one more than shown, to tell whether there are more
	var sb strings.Builder
	if m != nil {
		fmt.Fprintf(&sb, "%s in %s (memory store %q, %s):\n", depthText(depth), m.show(prefix), m.att.Name, m.access())
		if err := t.listMount(ctx, &sb, m, prefix, depth, &budget); err != nil {
			return "", err
		}
	} else {
		if len(t.mounts) == 0 {
			return "No memory store is attached to this session, so there is no memory to list.", nil
		}
		fmt.Fprintf(&sb, "%s attached to this session. %s in each; an entry ending in / is a directory, which path_prefix lists.\n",
			count(len(t.mounts), "memory store is", "memory stores are"), depthText(depth))
		failed := 0
		for i := range t.mounts {
			mi := &t.mounts[i]
			fmt.Fprintf(&sb, "\n%s — memory store %q, %s\n", mi.show(""), mi.att.Name, mi.access())
			if budget <= 1 {
				fmt.Fprintf(&sb, "(not listed: the %d-entry limit was reached; list it with path_prefix %s)\n", MaxListEntries, mi.show(""))
				continue
			}
			// A store that cannot be listed does not hide the others,
			// unless none can be listed.
			var te *toolError
			if err := t.listMount(ctx, &sb, mi, "", depth, &budget); errors.As(err, &te) {
				failed++
				if failed == len(t.mounts) {
					return "", err
				}
				fmt.Fprintf(&sb, "(not listed: %s)\n", te.msg)
			} else if err != nil {
				return "", err
			}
		}
	}
	if budget == 0 {
		fmt.Fprintf(&sb, "\n[Only the first %d entries are shown; there are more. Narrow the list with a deeper path_prefix or a smaller depth.]\n", MaxListEntries)
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

func depthText(depth int) string {
	switch depth {
	case 0:
		return "Every memory"
	case 1:
		return "Entries directly"
	}
	return "Entries up to " + strconv.Itoa(depth) + " levels deep"
}

// listMount appends the entries of one directory of a mount, one per line,
// using up budget; it leaves budget at 0 when it had to stop before the
// end, having seen one entry more than it showed.
func (t *Toolset) listMount(ctx context.Context, sb *strings.Builder, m *mount, prefix string, depth int, budget *int) error {
	shown, cursor := 0, ""
	for {
		page, err := t.svc.Memories.Memories(ctx, t.caller, m.att.StoreID, memstore.MemoryFilter{
			PathPrefix: prefix, Depth: depth, Limit: min(100, *budget), Page: cursor,
		})
		if err != nil {
			return explain(err, m, m.show(prefix))
		}
		for _, it := range page.Items {
			if *budget == 1 {
				*budget = 0 // one entry too many: there are more
				return nil
			}
			*budget--
			shown++
			if it.Memory != nil {
				fmt.Fprintf(sb, "%s  %s\n", m.show(it.Memory.Path), bytesText(it.Memory.ContentSize))
			} else {
				fmt.Fprintf(sb, "%s  (directory)\n", m.show(it.Prefix))
			}
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if shown > 0 {
		return nil
	}
	if prefix == "" {
		sb.WriteString("(no memories yet)\n")
		return nil
	}
	// An empty directory may be a memory's path given as a directory.
	if mem, err := t.lookup(ctx, m, strings.TrimSuffix(prefix, "/"), false); err != nil {
		return explain(err, m, m.show(prefix))
	} else if mem != nil {
		fmt.Fprintf(sb, "(empty: %s is a memory, not a directory; read it with memory_read)\n", m.show(mem.Path))
		return nil
	}
	sb.WriteString("(empty: no memory is below this directory)\n")
	return nil
}

// runSearch is memory_search: one search over every mount, or over the one
// that path_prefix lies in.
func runSearch(t *Toolset, ctx context.Context, a args) (string, error) {
	query, _ := a.str("query")
	limit := memstore.DefaultSearchLimit
	if n, ok := a.integer("limit"); ok {
		limit = n
	}
	mounts := make([]*mount, len(t.mounts))
	for i := range t.mounts {
		mounts[i] = &t.mounts[i]
	}
	prefix := ""
	if p, ok := a.str("path_prefix"); ok {
		m, dir, err := t.prefixPath(p)
		if err != nil {
			return "", err
		}
		if m != nil {
			mounts, prefix = []*mount{m}, dir
		}
	}
	if len(mounts) == 0 {
		return "", failf("No memory store is attached to this session, so there is no memory to search.")
	}
	mode, _ := a.str("mode")
	q := memstore.SearchQuery{Text: query, PathPrefix: prefix, Limit: limit, Mode: mode}
	if conversation, ok := a.boolean("conversation"); ok {
		q.Conversation = &conversation // else the session and the stores say
	}
	if err := memstore.ValidateSearchQuery(q); err != nil {
		return "", failf("%s.", trimDot(memstore.ErrorMessage(err)))
	}
	where := "the attached memory stores"
	if len(mounts) == 1 {
		where = mounts[0].show(prefix)
	}
	storeIDs := make([]string, len(mounts))
	byStore := make(map[string]*mount, len(mounts))
	for i, m := range mounts {
		storeIDs[i] = m.att.StoreID
		byStore[m.att.StoreID] = m
	}
	page, err := t.svc.Search.SearchMemories(ctx, t.caller, storeIDs, q)
	if err != nil {
		if len(mounts) == 1 {
			return "", explain(err, mounts[0], where)
		}
		if memstore.ErrorCode(err) == memstore.ENotFound {
			return "", failf("A memory store attached to this session no longer exists. Search the stores one at a time with path_prefix to find which. %s", t.mountList())
		}
		return "", explain(err, mounts[0], where)
	}
	var sb strings.Builder
	if len(page.Items) == 0 {
		fmt.Fprintf(&sb, "No memory in %s matches %q. Try other or fewer words, or look around with memory_list.", where, query)
		return sb.String(), nil
	}
	switch {
	case page.Next == "":
		fmt.Fprintf(&sb, "%s in %s %s %q, best first:", count(len(page.Items), "memory", "memories"), where, matchVerb(len(page.Items)), query)
	case len(page.Items) == 1:
		fmt.Fprintf(&sb, "The best match for %q in %s (more memories match):", query, where)
	default:
		fmt.Fprintf(&sb, "The %d best matches for %q in %s, best first (more memories match):", len(page.Items), query, where)
	}
	n := 0
	for _, r := range page.Items {
		m := byStore[r.Memory.StoreID]
		if m == nil {
			continue // not asked for; never returned by a correct backend
		}
		n++
		fmt.Fprintf(&sb, "\n%d. %s  (%s, score %s)\n   ", n, m.show(r.Memory.Path), bytesText(r.Memory.ContentSize), strconv.FormatFloat(r.Score, 'f', 2, 64))
		switch snippet := strings.Join(strings.Fields(r.Snippet), " "); {
		case snippet != "":
			sb.WriteString(snippet)
		case mode == memstore.ModeLexical:
			sb.WriteString("(the path matches)")
		default:
			// A memory found by meaning alone has no matching text.
			sb.WriteString("(no words of the query in its text: found by its path or its meaning)")
		}
	}
	if page.Next != "" {
		if limit < MaxSearchResults {
			fmt.Fprintf(&sb, "\n[More memories match: raise limit (at most %d) or narrow the search with path_prefix or more words.]", MaxSearchResults)
		} else {
			sb.WriteString("\n[More memories match: narrow the search with path_prefix or more words.]")
		}
	}
	return sb.String(), nil
}

func matchVerb(n int) string {
	if n == 1 {
		return "matches"
	}
	return "match"
}

package memstore

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Limits of search.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
	MaxSearchQuery     = 1000 // bytes
)

// A SearchQuery asks for the live memories that match some text.
type SearchQuery struct {
	// Text is what to look for: words, matched in any order and with
	// their inflections ("running" finds "runs"), and any substring of at
	// least three characters, so that identifiers and parts of words are
	// found too. Matches in the path count more than matches in the body.
	Text string
	// PathPrefix limits the search to memories below it, as in
	// MemoryFilter.
	PathPrefix string
	Limit      int    // 1-MaxSearchLimit; 0 means DefaultSearchLimit
	Page       string // cursor from a previous page's Next
	// Conversation, when set, says whether the memories are turns of
	// conversations, for every store searched (for the lexical ranking,
	// alone or in hybrid search; semantic search ignores it); nil leaves it to the
	// caller's session, then to each store (ConversationKey in their
	// metadata; see ConversationStores). A turn's conversation is its
	// store and its path's directory, its number the one in the path's
	// last segment ("/chats/ana/0007.md"): among the best MaxSearchLimit
	// matches, a turn's score then adds its neighbours' in the same
	// conversation, the turns next to it at half weight and two away at
	// a quarter, and those neighbours are found too, even without the
	// query's words. Memories whose paths hold no turn rank as without
	// it.
	Conversation *bool
	// ConversationStores are the stores searched whose memories are
	// turns of conversations, as the core resolved Conversation: the
	// storage reads this alone, and the core sets it (a caller's value is
	// replaced).
	ConversationStores []string
	// Mode is how memories are matched: ModeLexical (by their words),
	// ModeSemantic (by the nearness of their vectors to the query's) or
	// ModeHybrid (both, fused: see Fuse). "" is the server's default:
	// hybrid when it has an embedding model, lexical when not. Semantic
	// and hybrid search answer one page.
	Mode string
}

// The modes of search (SearchQuery.Mode).
const (
	ModeLexical  = "lexical"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// A SearchResult is one memory that matches a query.
type SearchResult struct {
	Memory Memory // without its content
	// Score orders results: higher is better. It compares results of one
	// query only.
	Score float64
	// Relevance is the lexical score the ranking adds up (BM25 over the
	// query's terms, path words weighted): 0 or more, higher is better,
	// comparable within one query only, for fusing with other rankings.
	// The backends fill it; it is not on the wire, so a client has 0.
	Relevance float64
	// Snippet is the text around the best match in the body, cut at word
	// boundaries, with "…" where it was cut; "" when only the path matches.
	Snippet string
}

// SearchService finds memories by their text. A search sees every write
// acknowledged before it began, and never stale content: deleted
// memories, earlier content and redacted versions never match. (A backend
// may index asynchronously, as SQLite does, if each search first waits
// for the writes acknowledged before it.)
type SearchService interface {
	// SearchMemories searches the live memories of one or more stores of
	// the caller's workspace, best first (EInvalid: see
	// ValidateSearchQuery, or a bad cursor; ENotFound: a store not in the
	// workspace; EPermission: a store not attached to the caller's
	// session). Archived stores are searched too: their memories are
	// still readable. With no store, nothing is found.
	SearchMemories(ctx context.Context, c *Caller, storeIDs []string, q SearchQuery) (Page[SearchResult], error)
}

// SearchStorage is SearchService as a backend keeps it, inside the
// workspace workspaceID. It is trusted: only a Core calls it, once the
// caller may read every store and the query is valid (see Core).
type SearchStorage interface {
	SearchMemories(ctx context.Context, workspaceID string, storeIDs []string, q SearchQuery) (Page[SearchResult], error)
	// RankMemories is SearchMemories's page ranked alone, for hybrid
	// search to fuse: the same results, in the same order, with the
	// same Score and Relevance, each Memory holding only its ID, and no
	// Snippet; ReadResults then reads the few kept. It reads no
	// memory's content.
	RankMemories(ctx context.Context, workspaceID string, storeIDs []string, q SearchQuery) ([]SearchResult, error)
	// ReadResults fills in the memories of results holding only their
	// IDs (of RankMemories or VectorStorage.NearestMemories), without
	// their content, in one read; those where snippet[i] get the Snippet
	// that SearchMemories gives them for q. A memory deleted since it
	// was ranked is left out.
	ReadResults(ctx context.Context, workspaceID string, q SearchQuery, results []SearchResult, snippet []bool) ([]SearchResult, error)
}

// ValidateSearchMode refuses a mode other than ModeLexical, ModeSemantic
// or ModeHybrid; "" is the default, whoever searches (EInvalid).
func ValidateSearchMode(mode string) error {
	if mode != "" && mode != ModeLexical && mode != ModeSemantic && mode != ModeHybrid {
		return Errorf(EInvalid, "mode %q is not a search mode; use %s, %s or %s, or leave it out for the default", mode, ModeLexical, ModeSemantic, ModeHybrid)
	}
	return nil
}

// ValidateSearchQuery checks a query (EInvalid): text of 1 to
// MaxSearchQuery bytes of valid UTF-8 that is not only spaces, a valid
// path prefix, a limit in range, a known mode, no page for a mode that
// answers one.
func ValidateSearchQuery(q SearchQuery) error {
	switch {
	case strings.TrimSpace(q.Text) == "":
		return Errorf(EInvalid, "the search query is empty; say what to look for")
	case len(q.Text) > MaxSearchQuery:
		return Errorf(EInvalid, "the search query is %d bytes; the limit is %d", len(q.Text), MaxSearchQuery)
	case !utf8.ValidString(q.Text):
		return Errorf(EInvalid, "the search query is not valid UTF-8")
	case q.Limit < 0 || q.Limit > MaxSearchLimit:
		return Errorf(EInvalid, "limit must be between 1 and %d, not %d", MaxSearchLimit, q.Limit)
	}
	if err := ValidateSearchMode(q.Mode); err != nil {
		return err
	}
	if q.Page != "" && (q.Mode == ModeSemantic || q.Mode == ModeHybrid) {
		return Errorf(EInvalid, "%s search answers one page; leave page out (only lexical search pages)", q.Mode)
	}
	if q.PathPrefix != "" {
		return ValidatePathPrefix(q.PathPrefix)
	}
	return nil
}

package memstore

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"
)

// NeighbourWeights are the weights of a conversation turn's neighbours in
// its score when a search ranks turns with their context
// (SearchQuery.Conversation): the turns next to it at half weight, the
// turns two away at a quarter. Measured with `memstore bench recall`;
// see docs/search.md.
var NeighbourWeights = [...]float64{0.5, 0.25}

// A ConversationTurn says where a memory sits in a conversation.
type ConversationTurn struct {
	Conversation string // the directory of its path
	N            int    // its number in the conversation
}

// TurnOf reads the conversation and turn of a memory from its path: the
// conversation is the path's directory, the turn the first number in its
// last segment ("/chats/ana/2024-05-01/007.md", "/c1/turn-12.md"). A path
// whose last segment holds no number is no turn.
func TurnOf(p string) (ConversationTurn, bool) {
	dir, base := path.Split(p)
	i := strings.IndexAny(base, "0123456789")
	if i < 0 {
		return ConversationTurn{}, false
	}
	j := i
	for j < len(base) && j-i < 9 && base[j] >= '0' && base[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(base[i:j])
	if err != nil {
		return ConversationTurn{}, false
	}
	return ConversationTurn{Conversation: dir, N: n}, true
}

// ContextScores adds to each memory's score its neighbours' in the same
// conversation, weighted by NeighbourWeights: scores[i] is the memory's
// at paths[i], additive (a sum over the query's terms, as Relevance), and
// a memory that is no turn keeps its own.
func ContextScores(paths []string, scores []float64) []float64 {
	turns := make([]ConversationTurn, len(paths))
	isTurn := make([]bool, len(paths))
	byTurn := make(map[ConversationTurn]float64, len(paths))
	for i, p := range paths {
		turns[i], isTurn[i] = TurnOf(p)
		if isTurn[i] {
			byTurn[turns[i]] += scores[i]
		}
	}
	out := slices.Clone(scores)
	for i, t := range turns {
		if !isTurn[i] {
			continue
		}
		for d, w := range NeighbourWeights {
			for _, n := range [2]int{t.N - d - 1, t.N + d + 1} {
				out[i] += w * byTurn[ConversationTurn{t.Conversation, n}]
			}
		}
	}
	return out
}

// withContext ranks results, the best matches of a search, as turns of
// conversations: each one's relevance draws on its neighbours' among
// them. A result keeps its tier (a Score of 1 or more: found by words;
// below 1: only inside longer words), and its Score within the tier is
// its new relevance squeezed below 1, as the backends' scores are.
func withContext(results []SearchResult) {
	paths := make([]string, len(results))
	rel := make([]float64, len(results))
	for i, r := range results {
		paths[i], rel[i] = r.Memory.Path, r.Relevance
	}
	for i, s := range ContextScores(paths, rel) {
		tier := 0.0
		if results[i].Score >= 1 {
			tier = 1
		}
		results[i].Relevance = s
		results[i].Score = tier + s/(1+s)
	}
	slices.SortStableFunc(results, func(a, b SearchResult) int { return cmp.Compare(b.Score, a.Score) })
}

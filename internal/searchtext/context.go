package searchtext

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"
)

// NeighbourWeights are the weights of a conversation turn's neighbours in
// its score when a search ranks turns with their context: the turns next
// to it at half weight, the turns two away at a quarter. Measured with
// `memstore bench recall`; see docs/search.md.
var NeighbourWeights = [...]float64{0.5, 0.25}

// ContextPool is how many of a search's best hits are ranked again with
// their conversation context: a turn's neighbours count among them, and
// the turns beside them that the words did not find, only.
const ContextPool = 100

// NeighbourPool is how many of a search's best hits have the turns
// around them looked up when the words did not find them: each costs a
// few index seeks. Measured with `memstore bench recall`: the neighbours
// of the best 20 find as much as those of all ContextPool (recall@10 on
// the generated conversations 0.782 either way, 0.567 against 0.564 on
// a hundred of them), for a fifth of the lookups.
const NeighbourPool = 20

// A Turn says where a memory sits in a conversation.
type Turn struct {
	Conversation string // the directory of its path
	N            int    // its number in the conversation
}

// TurnOf reads the conversation and turn of a memory from its path: the
// conversation is the path's directory, the turn the first number in its
// last segment ("/chats/ana/2024-05-01/007.md", "/c1/turn-12.md"). A path
// whose last segment holds no number is no turn.
func TurnOf(p string) (Turn, bool) {
	t, _, ok := turnOf(p)
	return t, ok
}

// maxTurn is the largest number of a turn, of nine digits.
const maxTurn = 999_999_999

// turnOf is TurnOf, with where the number is in p: p[at[0]:at[1]].
func turnOf(p string) (t Turn, at [2]int, ok bool) {
	dir, base := path.Split(p)
	i := strings.IndexAny(base, "0123456789")
	if i < 0 {
		return Turn{}, at, false
	}
	j := i
	for j < len(base) && j-i < 9 && base[j] >= '0' && base[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(base[i:j])
	if err != nil {
		return Turn{}, at, false
	}
	return Turn{Conversation: dir, N: n}, [2]int{len(dir) + i, len(dir) + j}, true
}

// NeighbourPaths returns the paths that the turns around the one at p,
// up to len(NeighbourWeights) away, have in its conversation when named
// as p is: its number replaced by theirs, written with as many digits as
// p's (zero-padded: "0007.md" beside "0006.md") and, unless p's number
// is itself padded, without padding too ("10.md" beside "09.md" and
// "9.md"). A path that is no turn has none.
func NeighbourPaths(p string) []string {
	t, at, ok := turnOf(p)
	if !ok || (at[1] < len(p) && p[at[1]] >= '0' && p[at[1]] <= '9') {
		return nil // no turn, or a number longer than a turn's
	}
	width := at[1] - at[0]
	var out []string
	for d := 1; d <= len(NeighbourWeights); d++ {
		for _, n := range [2]int{t.N - d, t.N + d} {
			if n < 0 || n > maxTurn {
				continue // no turn's number: TurnOf reads nine digits
			}
			plain := strconv.Itoa(n)
			padded := plain
			if len(plain) < width {
				padded = strings.Repeat("0", width-len(plain)) + plain
			}
			out = append(out, p[:at[0]]+padded+p[at[1]:])
			if padded != plain && p[at[0]] != '0' {
				out = append(out, p[:at[0]]+plain+p[at[1]:])
			}
		}
	}
	return out
}

// ContextScores adds to each memory's score its neighbours' in the same
// conversation, weighted by NeighbourWeights: scores[i] is the memory's
// at paths[i], additive (a sum over the query's terms, as Hit.BM25), and
// a memory that is no turn keeps its own.
func ContextScores(paths []string, scores []float64) []float64 {
	turns := make([]Turn, len(paths))
	isTurn := make([]bool, len(paths))
	byTurn := make(map[Turn]float64, len(paths))
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
				out[i] += w * byTurn[Turn{t.Conversation, n}]
			}
		}
	}
	return out
}

// ContextHits is how many of hits, ranked, WithContext ranks again: the
// first ContextPool of them, and only those of TierWords, which come
// first; the memories found only inside longer words keep their place
// after them.
func ContextHits[K cmp.Ordered](hits []*Hit[K]) int {
	n := 0
	for n < len(hits) && n < ContextPool && hits[n].Tier == TierWords {
		n++
	}
	return n
}

// WithContext ranks the first len(paths) of hits, ranked, again as turns
// of conversations, paths[i] being the path of hits[i]: each one's BM25
// adds its neighbours' (ContextScores), its Score follows, and they are
// sorted again as Ranked sorts.
func WithContext[K cmp.Ordered](hits []*Hit[K], paths []string) {
	pool := hits[:len(paths)]
	scores := make([]float64, len(pool))
	for i, h := range pool {
		scores[i] = h.BM25
	}
	for i, s := range ContextScores(paths, scores) {
		pool[i].BM25 = s
		pool[i].Score = Score(s, pool[i].Tier)
	}
	slices.SortFunc(pool, byScore)
}

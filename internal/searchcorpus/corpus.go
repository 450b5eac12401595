// Package searchcorpus makes the search benchmarks' memories and queries,
// the same for every backend: 100,000 memories of about 500 bytes of
// generated text and 200 queries drawn from them.
package searchcorpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The benchmarks' corpus: how many memories, of about how many bytes,
// and how many queries.
const (
	Memories = 100_000
	Size     = 500
	Queries  = 200
)

// Bench returns the benchmarks' memories, their paths and contents, and
// their queries.
func Bench() (paths, contents, queries []string) {
	c := New(1, 50_000)
	paths = make([]string, Memories)
	contents = make([]string, Memories)
	for i := range contents {
		paths[i], contents[i] = c.Memory(i, Size)
	}
	return paths, contents, c.Queries(Queries, contents)
}

// Percentile returns the p-th percentile (0-100) of ds, which it sorts.
func Percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[int(float64(len(ds)-1)*p/100)]
}

// Millis is d in milliseconds, for a benchmark's metric.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// A Corpus makes deterministic text for the search benchmarks: sentences of
// words drawn from a vocabulary with Zipf-like frequencies (common English
// words first, then invented ones), with names, identifiers, dates, email
// addresses and numbers among them, so that queries drawn from it meet
// the spread of rare and common terms of real notes.
type Corpus struct {
	vocab []string
	r     *rand.Rand
	z     *rand.Zipf
}

// commonWords are the most frequent words of the corpus, most frequent
// first: function words, then the vocabulary of agents' notes.
var commonWords = strings.Fields(`the of and to a in is that for it as was with be by on not he i this are or his from at
	which but have an they you were her she there been one all we their has would when if so no will more can out up who them
	some about into only than other then now its also time two may could first like these over such our after new any just
	what most very through where much should well people because back how even good made way years many those before must
	here use being both year each same while still down work last day three long great might own old another since against
	right used under around never life world between always system part take program place home group number however off
	without set need state data project team user file server config build test deploy release meeting plan issue change
	review design model service client api version update error support schedule prefers likes wants asked said told
	decided remember note todo bug fix branch commit merge database query index cache memory store path session agent tool
	call response request latency budget deadline customer account password email phone address monday tuesday wednesday
	thursday friday weekend morning evening tomorrow yesterday week month birthday family friend trip flight hotel dinner
	lunch coffee doctor appointment`)

var (
	onsets = strings.Fields(`b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st str sw th tr tw wh qu`)
	vowels = strings.Fields(`a e i o u ai ea ee ie oo ou oa y`)
	codas  = strings.Fields(`b ck d ft g l ld lt m mp n nd ng nk nt p r rd rk rm rn rt s sh sk sp ss st t th x`)
)

func New(seed uint64, vocabulary int) *Corpus {
	c := &Corpus{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	seen := map[string]bool{}
	for _, w := range commonWords {
		if !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	for len(c.vocab) < vocabulary {
		var b strings.Builder
		for range []int{1, 2, 2, 3}[c.r.IntN(4)] {
			s := vowels[c.r.IntN(len(vowels))]
			if c.r.IntN(5) > 0 {
				s = onsets[c.r.IntN(len(onsets))] + s
			}
			if c.r.IntN(2) == 0 {
				s += codas[c.r.IntN(len(codas))]
			}
			b.WriteString(s)
		}
		if w := b.String(); len(w) >= 3 && !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	c.z = rand.NewZipf(c.r, 1.0001, 3, uint64(len(c.vocab)-1))
	return c
}

func (c *Corpus) word() string { return c.vocab[c.z.Uint64()] }

// rare draws a word outside the 200 most frequent: a content word.
func (c *Corpus) rare() string {
	for {
		if i := c.z.Uint64(); i >= 200 {
			return c.vocab[i]
		}
	}
}

func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func (c *Corpus) token() string {
	switch c.r.IntN(60) {
	case 0:
		return c.rare() + title(c.rare()) // camelCase
	case 1:
		return c.rare() + "_" + c.rare()
	case 2:
		return fmt.Sprintf("%d-%02d-%02d", 2024+c.r.IntN(3), 1+c.r.IntN(12), 1+c.r.IntN(28))
	case 3:
		return c.rare() + "@" + c.rare() + ".com"
	case 4:
		return fmt.Sprint(c.r.IntN(10000))
	case 5, 6:
		return title(c.rare()) // a name
	}
	w := c.word()
	if c.r.IntN(8) == 0 {
		w += []string{"s", "ing", "ed", "er"}[c.r.IntN(4)]
	}
	return w
}

// Memory makes the i-th memory, its content size bytes or a little more.
func (c *Corpus) Memory(i, size int) (path, content string) {
	path = fmt.Sprintf("/%s/%s-%s-%d.md", c.rare(), c.rare(), c.rare(), i)
	var b strings.Builder
	for b.Len() < size {
		for j := range 6 + c.r.IntN(9) {
			w := c.token()
			if j == 0 {
				w = title(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
	}
	return path, b.String()
}

// Queries draws n queries of the kinds an agent asks, each from the words
// of one of the memories: a few words, one word, a question with stop
// words, a part of an identifier, a date, an email address, a name.
func (c *Corpus) Queries(n int, memories []string) []string {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var qs []string
	for len(qs) < n {
		m := memories[r.IntN(len(memories))]
		var words, idents, dates, mails, names []string
		for _, f := range strings.Fields(m) {
			f = strings.TrimRight(f, ".")
			switch {
			case strings.Contains(f, "@"):
				mails = append(mails, f)
			case strings.Count(f, "-") == 2:
				dates = append(dates, f)
			case strings.Contains(f, "_") || strings.ToLower(f) != f && strings.ToLower(f[:1]) == f[:1]:
				idents = append(idents, f)
			case strings.ToLower(f) != f:
				names = append(names, f)
			case !slices.Contains(commonWords[:100], f) && len(f) > 2:
				words = append(words, f)
			}
		}
		pick := func(xs []string, k int) []string {
			if len(xs) < k {
				return nil
			}
			var out []string
			for _, i := range r.Perm(len(xs))[:k] {
				out = append(out, xs[i])
			}
			return out
		}
		var q []string
		switch k := r.IntN(100); {
		case k < 35:
			q = pick(words, 2)
		case k < 50:
			q = pick(words, 3)
		case k < 65:
			q = pick(words, 1)
		case k < 75:
			if w := pick(words, 2); w != nil {
				q = []string{"what", "did", "we", "say", "about", "the", w[0], "and", w[1]}
			}
		case k < 85:
			if id := pick(idents, 1); id != nil && len(id[0]) > 8 {
				i := 1 + r.IntN(len(id[0])-7)
				q = []string{id[0][i : i+5+r.IntN(3)]}
			}
		case k < 90:
			q = pick(dates, 1)
		case k < 95:
			q = pick(mails, 1)
		default:
			q = pick(names, 1)
		}
		if q != nil {
			qs = append(qs, strings.Join(q, " "))
		}
	}
	return qs
}

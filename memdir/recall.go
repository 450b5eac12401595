package memdir

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/internal/vector"
)

// RecallMaxFiles is how many topic files recall considers: the newest, by
// modification time, as Claude Code's own recall does.
const RecallMaxFiles = 200

// recallReadLimit bounds what recall reads of one file: the frontmatter
// and the part of the body it shows are at the start.
const recallReadLimit = 256 << 10

// RecallOptions tune Recall.
type RecallOptions struct {
	// Limit is the most hits returned; 0 means 5.
	Limit int
	// Body ranks on the files' bodies too, not only on the name, the
	// description and the file name.
	Body bool
	// Team includes the team directory's topic files.
	Team bool
	// Conversation ranks the files as turns of conversations, one a
	// file, the conversation their directory and the turn the number in
	// their name (chats/ana/0007.md): a turn's score adds its
	// neighbours', as a server's search does (searchtext.ContextScores),
	// and a turn beside a match is found though it has none of the
	// query's words. Files whose names hold no number rank as without it.
	Conversation bool
	// Mode is how files are matched, as a server's search
	// (memstore.SearchQuery.Mode): memstore.ModeLexical (by their words;
	// "" too), ModeSemantic (by the nearness of their vectors, from
	// Embedder, to the query's) or ModeHybrid (both, fused by the
	// core's rule, memstore.Fuse, with SemanticWeight).
	// A file's vector is of its path and the start of its content
	// (memstore.EmbeddingText), kept in VectorCacheName.
	Mode string
	// Embedder is the model of semantic and hybrid recall.
	Embedder memstore.Embedder
	// SemanticWeight is the semantic ranking's weight in hybrid recall's
	// fusion, 0 to 1; nil means memstore.DefaultSemanticWeight.
	SemanticWeight *float64
}

// A Hit is a topic file that matches a recall query.
type Hit struct {
	// File is the path relative to the directory, with slashes.
	File        string    `json:"file"`
	Name        string    `json:"name,omitempty"`
	Description string    `json:"description,omitempty"`
	Type        string    `json:"type,omitempty"`
	Score       float64   `json:"score"`
	Modified    time.Time `json:"modified"`
	// Content is the file's content, cut to RecallMaxLines lines and
	// RecallMaxBytes bytes; Truncated says whether it was.
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

// The weights of the fields in the ranking: the description says what a
// memory is for, so it counts double.
const (
	weightName        = 1
	weightDescription = 2
	weightFile        = 1
	weightBody        = 1
)

// ErrEmptyQuery is returned by Recall for a query with no word to search
// for: none at all, or only words too common to tell memories apart.
var ErrEmptyQuery = errors.New("the query has no word to search for")

// Recall ranks the topic files of dir by relevance to query, without a
// model: BM25 over the memory's name, its description (weighted double),
// its file name and, with opts.Body, its body, as one weighted document
// per file. Only the RecallMaxFiles newest files are considered. It
// returns the best opts.Limit files with a positive score, best first (the
// newer first among equals), each with its content capped. A query with no
// word to search for is ErrEmptyQuery. opts.Mode semantic or hybrid ranks
// by meaning too, embedding with opts.Embedder (ErrNoEmbedder without
// one) the files whose text its cache lacks.
func Recall(ctx context.Context, dir, query string, opts RecallOptions) ([]Hit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return nil, ErrEmptyQuery
	}
	if opts.SemanticWeight != nil {
		if err := memstore.ValidateSemanticWeight(*opts.SemanticWeight); err != nil {
			return nil, errors.New(memstore.ErrorMessage(err))
		}
	}
	if err := memstore.ValidateSearchMode(opts.Mode); err != nil {
		return nil, errors.New(memstore.ErrorMessage(err))
	}
	if opts.Mode != "" && opts.Mode != memstore.ModeLexical && opts.Embedder == nil {
		return nil, ErrNoEmbedder
	}
	limit := cmp.Or(opts.Limit, 5)
	files, err := ListTopics(dir, opts.Team)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b TopicFile) int {
		return cmp.Or(b.ModTime.Compare(a.ModTime), cmp.Compare(a.Name, b.Name))
	})
	files = files[:min(len(files), RecallMaxFiles)]

	docs := make([]doc, 0, len(files))
	df := map[string]int{}
	var total float64
	for _, f := range files {
		t, err := ReadTopic(dir, f, recallReadLimit)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// Only the query's terms need counting; every word counts in the
		// length.
		d := doc{topic: t, tf: make(map[string]float64, len(terms))}
		count := func(text string, w float64) {
			for word := range searchtext.Words(text) {
				d.length += w
				if tok := stem(word.Fold); slices.Contains(terms, tok) {
					d.tf[tok] += w
				}
			}
		}
		count(t.Frontmatter.Name, weightName)
		count(t.Frontmatter.Description, weightDescription)
		count(strings.TrimSuffix(path.Base(t.Name), ".md"), weightFile)
		if opts.Body {
			count(t.Body, weightBody)
		}
		for _, term := range terms {
			if d.tf[term] > 0 {
				df[term]++
			}
		}
		total += d.length
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	avg := total / float64(len(docs))
	if avg == 0 {
		avg = 1
	}
	n := float64(len(docs))
	scores := make([]float64, len(docs))
	for i := range docs {
		d := &docs[i]
		for _, term := range terms {
			if tf := d.tf[term]; tf > 0 {
				scores[i] += searchtext.BM25(searchtext.IDF(float64(df[term]), n), tf, d.length, avg)
			}
		}
	}
	if opts.Conversation {
		// Every file is at hand: a turn beside a match is found too,
		// scoring its neighbours' only.
		names := make([]string, len(docs))
		for i, d := range docs {
			names[i] = d.topic.Name
		}
		scores = searchtext.ContextScores(names, scores)
	}
	var ranked []scored
	for i, score := range scores {
		if score > 0 {
			ranked = append(ranked, scored{&docs[i], score})
		}
	}
	best := func(rs []scored) {
		slices.SortStableFunc(rs, func(a, b scored) int {
			return cmp.Or(cmp.Compare(b.score, a.score), b.d.topic.Time().Compare(a.d.topic.Time()), cmp.Compare(a.d.topic.Name, b.d.topic.Name))
		})
	}
	best(ranked)
	semantic := opts.Mode == memstore.ModeSemantic || opts.Mode == memstore.ModeHybrid
	// The texts a model may read: a file that looks like it holds a
	// credential is never sent to it (lint names such files), and is
	// found by its words only.
	var texts []string
	var embedded []*doc
	if semantic || hasVectorCache(dir) {
		for i, d := range docs {
			if _, found := memstore.FindCredential(d.topic.Content); !found {
				texts = append(texts, memstore.EmbeddingText("/"+d.topic.Name, d.topic.Content))
				embedded = append(embedded, &docs[i])
			}
		}
	}
	if semantic {
		q, err := queryVector(ctx, opts.Embedder, query)
		if err != nil {
			return nil, err
		}
		vs, err := fileVectors(ctx, dir, opts.Embedder, texts, len(q))
		if err != nil {
			return nil, err
		}
		var near []scored
		for i, v := range vs {
			if c := vector.Dot(q, v); c > 0 {
				near = append(near, scored{embedded[i], c})
			}
		}
		best(near)
		if opts.Mode == memstore.ModeSemantic {
			ranked = near
		} else {
			ranked = fuse(ranked, near, cmp.Or(opts.SemanticWeight, new(memstore.DefaultSemanticWeight)), limit)
		}
	} else if texts != nil {
		keys := make([]string, len(texts))
		for i, t := range texts {
			keys[i] = textKey(t)
		}
		forgetVectors(dir, keys)
	}
	hits := make([]Hit, 0, min(limit, len(ranked)))
	for _, r := range ranked[:min(limit, len(ranked))] {
		t := r.d.topic
		content, cut := CapContent(t.Content, RecallMaxLines, RecallMaxBytes)
		hits = append(hits, Hit{
			File:        t.Name,
			Name:        t.Frontmatter.Name,
			Description: t.Frontmatter.Description,
			Type:        t.Frontmatter.Type,
			Score:       math.Round(r.score*1000) / 1000,
			Modified:    t.Time(),
			Content:     content,
			Truncated:   cut || t.Size > int64(len(t.Content)),
		})
	}
	return hits, nil
}

// A doc is a topic file as recall ranks it: the counts of the query's
// terms in it, and its length, weighted by field.
type doc struct {
	topic  Topic
	tf     map[string]float64
	length float64
}

// A scored is a doc and its score in a ranking.
type scored struct {
	d     *doc
	score float64
}

// fuse fuses a lexical ranking and a semantic one, each best first, by
// the core's rule (memstore.Fuse, the semantic one weighted by *weight),
// over the best memstore.FusionCandidates of each, as a server's hybrid
// search does.
func fuse(lexical, semantic []scored, weight *float64, limit int) []scored {
	byName := map[string]*doc{}
	results := func(rs []scored, lexical bool) []memstore.SearchResult {
		rs = rs[:min(len(rs), memstore.FusionCandidates)]
		out := make([]memstore.SearchResult, len(rs))
		for i, r := range rs {
			byName[r.d.topic.Name] = r.d
			out[i].Memory.ID, out[i].Memory.Path = r.d.topic.Name, r.d.topic.Name
			if lexical {
				out[i].Relevance = r.score
			} else {
				out[i].Score = r.score
			}
		}
		return out
	}
	fused := memstore.Fuse(results(lexical, true), results(semantic, false), *weight, limit)
	out := make([]scored, len(fused))
	for i, r := range fused {
		out[i] = scored{byName[r.Memory.Path], r.Score}
	}
	return out
}

// CapContent cuts text to at most maxLines lines and maxBytes bytes, at a
// line end when one is in reach and never inside a character, and reports
// whether it cut.
func CapContent(text string, maxLines, maxBytes int) (string, bool) {
	cut := false
	if strings.Count(text, "\n") >= maxLines {
		if t := firstLines(text, maxLines); len(t) < len(strings.TrimRight(text, "\n")) {
			text, cut = t+"\n", true
		}
	}
	if len(text) > maxBytes {
		head := text[:maxBytes]
		if i := strings.LastIndexByte(head, '\n'); i > 0 {
			head = head[:i+1]
		} else {
			for len(head) > 0 && !utf8.ValidString(head) {
				head = head[:len(head)-1]
			}
		}
		text, cut = head, true
	}
	return text, cut
}

// Age says how long ago t was, in days, for a person: "today",
// "yesterday", "3 days ago". A time in the future is today.
func Age(t, now time.Time) string {
	days := int(now.Sub(t).Hours() / 24)
	switch {
	case days <= 0:
		return "today"
	case days == 1:
		return "yesterday"
	}
	return fmt.Sprintf("%d days ago", days)
}

// queryTerms are the distinct stems of the query's words, without its stop
// words: the query is a user's prompt, so the words of requests go too
// (searchtext.Prompts).
func queryTerms(query string) []string {
	var out []string
	for w := range searchtext.Words(query) {
		if t := stem(w.Fold); !searchtext.Prompts.Has(w.Fold) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// stem strips the commonest English inflections. It is deliberately
// crude: it only has to map a word's forms to one key, not to a real stem.
func stem(w string) string {
	w = stemSuffix(w)
	// "share", "shared" and "sharing" meet at "shar".
	if utf8.RuneCountInString(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

func stemSuffix(w string) string {
	n := utf8.RuneCountInString(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		return strings.TrimSuffix(w, "ing")
	case n > 4 && strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y"
	case n > 4 && strings.HasSuffix(w, "ed"):
		return strings.TrimSuffix(w, "ed")
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return strings.TrimSuffix(w, "es")
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return strings.TrimSuffix(w, "s")
	}
	return w
}

// FormatHits writes hits as Markdown after head: each under a heading with
// its file and age ("## deploy.md (saved 3 days ago)"), then its content,
// with a note when the content was cut. Within maxUnits UTF-16 units (no
// limit when maxUnits <= 0), the hits that do not fit are left out from
// the last, and a best hit too big on its own is cut at a line end.
func FormatHits(head string, hits []Hit, now time.Time, maxUnits int) string {
	var b strings.Builder
	b.WriteString(head)
	for i, h := range hits {
		var s strings.Builder
		fmt.Fprintf(&s, "## %s (saved %s)\n\n", h.File, Age(h.Modified, now))
		s.WriteString(strings.TrimRight(h.Content, "\n"))
		s.WriteString("\n")
		if h.Truncated {
			fmt.Fprintf(&s, "[Cut at %d lines or %d bytes: read the file for the rest.]\n", RecallMaxLines, RecallMaxBytes)
		}
		s.WriteString("\n")
		if maxUnits > 0 && Units(b.String())+Units(s.String()) > maxUnits {
			if i == 0 {
				return FitUnits(b.String()+s.String(), maxUnits)
			}
			break
		}
		b.WriteString(s.String())
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore/internal/searchtext"
)

// tokenizer is the part of a Hugging Face tokenizer.json that static
// models need: a normalizer, a pre-tokenizer splitting words, and a
// WordPiece or WordLevel vocabulary. Special tokens are never added.
type tokenizer struct {
	normalize func(string) string
	split     func(string) []string
	vocab     map[string]int
	unk       int // -1 when the vocabulary has no unknown token
	wordPiece bool
	prefix    string // WordPiece's continuing-subword prefix
	maxChars  int    // a longer word is unknown
}

type tokenizerFile struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string          `json:"type"`
		Vocab                   json.RawMessage `json:"vocab"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int             `json:"max_input_chars_per_word"`
	} `json:"model"`
}

type component struct {
	Type          string            `json:"type"`
	Lowercase     *bool             `json:"lowercase"`
	StripAccents  *bool             `json:"strip_accents"`
	CleanText     *bool             `json:"clean_text"`
	ChineseChars  *bool             `json:"handle_chinese_chars"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
}

// maxWordChars is the longest word a WordPiece tokenizer cuts into
// pieces, whatever its file says; a longer one is unknown.
const maxWordChars = 200

func parseTokenizer(raw []byte) (*tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	t := &tokenizer{unk: -1}
	switch f.Model.Type {
	case "WordPiece":
		t.wordPiece = true
		t.prefix = "##"
		if f.Model.ContinuingSubwordPrefix != nil {
			t.prefix = *f.Model.ContinuingSubwordPrefix
		}
		// A word is cut by trying its prefixes, longest first: a cost
		// that grows with the square of its length, so a model's longer
		// limit is held to maxWordChars (BERT's is 100).
		t.maxChars = min(f.Model.MaxInputCharsPerWord, maxWordChars)
		if t.maxChars <= 0 {
			t.maxChars = 100
		}
	case "WordLevel":
	default:
		return nil, fmt.Errorf("tokenizer model %q is not one memstore reads (WordPiece, WordLevel, as model2vec's potion models use)", f.Model.Type)
	}
	if err := json.Unmarshal(f.Model.Vocab, &t.vocab); err != nil || len(t.vocab) == 0 {
		return nil, errors.New("model.vocab is not a map of tokens to ids")
	}
	seen := make(map[int]bool, len(t.vocab))
	for tok, id := range t.vocab {
		if id < 0 || id >= len(t.vocab) || seen[id] {
			return nil, fmt.Errorf("token %q has id %d: ids must be 0 to %d, each once", tok, id, len(t.vocab)-1)
		}
		seen[id] = true
	}
	if f.Model.UnkToken != nil {
		if id, ok := t.vocab[*f.Model.UnkToken]; ok {
			t.unk = id
		}
	}
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if t.split, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	return t, nil
}

func (t *tokenizer) size() int { return len(t.vocab) }

// encode returns the ids of text's known tokens, at most limit of them;
// unknown tokens are dropped, as model2vec does.
func (t *tokenizer) encode(text string, limit int) []int {
	var ids []int
	for _, w := range t.split(t.normalize(text)) {
		if len(ids) >= limit {
			break
		}
		if !t.wordPiece {
			if id, ok := t.vocab[w]; ok && id != t.unk {
				ids = append(ids, id)
			}
			continue
		}
		ids = t.pieces(w, ids)
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

// pieces appends the WordPiece ids of word: the longest known prefix, then
// the longest known continuation, and so on; a word that cannot be cut
// into known pieces is unknown and adds nothing.
func (t *tokenizer) pieces(word string, ids []int) []int {
	r := []rune(word)
	if len(r) > t.maxChars {
		return ids
	}
	start, n := 0, len(ids)
	for start < len(r) {
		found := -1
		end := len(r)
		for ; end > start; end-- {
			s := string(r[start:end])
			if start > 0 {
				s = t.prefix + s
			}
			if id, ok := t.vocab[s]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return ids[:n]
		}
		if found != t.unk {
			ids = append(ids, found)
		}
		start = end
	}
	return ids
}

func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return func(s string) string { return s }, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "BertNormalizer":
		clean, chinese, lower := on(c.CleanText, true), on(c.ChineseChars, true), on(c.Lowercase, true)
		strip := on(c.StripAccents, lower) // unset follows lowercase, as in BERT
		return func(s string) string {
			if clean {
				s = cleanText(s)
			}
			if chinese {
				s = spaceCJK(s)
			}
			if strip {
				s = searchtext.StripMarks(s)
			}
			if lower {
				s = strings.ToLower(s)
			}
			return s
		}, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "StripAccents":
		return searchtext.StripMarks, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Strip":
		return strings.TrimSpace, nil
	case "Sequence":
		var fs []func(string) string
		for _, r := range c.Normalizers {
			f, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("type %q is not one memstore reads (BertNormalizer, Lowercase, StripAccents, NFC, NFD, NFKC, NFKD, Strip, Sequence)", c.Type)
}

func parsePreTokenizer(raw json.RawMessage) (func(string) []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return strings.Fields, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "BertPreTokenizer":
		return splitBert, nil
	case "Whitespace":
		return splitWordsAndSymbols, nil
	case "WhitespaceSplit":
		return strings.Fields, nil
	case "Sequence":
		var fs []func(string) []string
		for _, r := range c.PreTokenizers {
			f, err := parsePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) []string {
			words := []string{s}
			for _, f := range fs {
				var next []string
				for _, w := range words {
					next = append(next, f(w)...)
				}
				words = next
			}
			return words
		}, nil
	}
	return nil, fmt.Errorf("type %q is not one memstore reads (BertPreTokenizer, Whitespace, WhitespaceSplit, Sequence)", c.Type)
}

func on(b *bool, dflt bool) bool {
	if b == nil {
		return dflt
	}
	return *b
}

// cleanText drops control characters and turns every space into ' '.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0 || r == unicode.ReplacementChar:
			return -1
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// spaceCJK puts spaces around CJK ideographs, each a word of its own.
func spaceCJK(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isPunct is BERT's punctuation: every ASCII symbol and Unicode's P class.
func isPunct(r rune) bool {
	return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) || unicode.IsPunct(r)
}

// splitBert splits at spaces and makes each punctuation mark a word.
func splitBert(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// splitWordsAndSymbols splits into runs of word characters and runs of
// other non-space characters (the Whitespace pre-tokenizer's \w+|[^\w\s]+).
func splitWordsAndSymbols(s string) []string {
	word := func(r rune) bool {
		return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
	}
	var out []string
	start, kind := -1, 0
	for i, r := range s {
		k := 2
		if unicode.IsSpace(r) {
			k = 0
		} else if word(r) {
			k = 1
		}
		if k != kind && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
		if k != 0 && start < 0 {
			start = i
		}
		kind = k
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

package embedtest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// A Tensor is one entry of a safetensors file: its type (F32, F16, I64,
// ...), shape and little-endian bytes.
type Tensor struct {
	Dtype string
	Shape []int
	Data  []byte
}

// WriteSafetensors writes tensors in the safetensors layout: the length
// of a JSON header, the header, then each tensor's bytes.
func WriteSafetensors(tb testing.TB, path string, tensors map[string]Tensor) {
	tb.Helper()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		t := tensors[n]
		header[n] = map[string]any{"dtype": t.Dtype, "shape": t.Shape, "data_offsets": []int{len(data), len(data) + len(t.Data)}}
		data = append(data, t.Data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		tb.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// F32 encodes numbers as a tensor's F32 bytes.
func F32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// WriteModel2Vec writes a model2vec model directory at dir: a WordPiece
// tokenizer.json of vocab (BERT's normaliser and pre-tokeniser), a
// config.json, and model.safetensors holding tensors (at least
// "embeddings", one row a token).
func WriteModel2Vec(tb testing.TB, dir string, vocab []string, normalize bool, tensors map[string]Tensor) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	ids := map[string]int{}
	for i, tok := range vocab {
		ids[tok] = i
	}
	tok := map[string]any{
		"version":       "1.0",
		"added_tokens":  []any{},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ids},
	}
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	write("tokenizer.json", tok)
	write("config.json", map[string]any{"model_type": "model2vec", "normalize": normalize})
	WriteSafetensors(tb, filepath.Join(dir, "model.safetensors"), tensors)
}

package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/memstore/memstore/internal/localfile"
)

// Limits of a model2vec model directory.
const (
	// MaxModelFileBytes bounds model.safetensors: the potion models are
	// 8 to 130 MB; the largest static models are a few hundred.
	MaxModelFileBytes = 2 << 30
	// MaxTokenizerBytes bounds tokenizer.json and config.json.
	MaxTokenizerBytes = 64 << 20
	// MaxTokens is how many tokens of a text are pooled, as model2vec does.
	MaxTokens = 512
	// maxHeaderBytes bounds a safetensors file's JSON header.
	maxHeaderBytes = 16 << 20
)

// Static is a model2vec static-embedding model: each token of the
// tokenizer has a vector, and a text's vector is the mean of its tokens'.
type Static struct {
	name      string
	dims      int
	tok       *tokenizer
	vectors   []float32 // rows × dims
	rows      int
	mapping   []int32   // token id → row, when the vocabulary is quantised
	weights   []float32 // token id → weight, when present
	normalize bool
}

// LoadModel2Vec reads a model2vec model from dir: model.safetensors (the
// "embeddings" table, and "weights" and "mapping" when present),
// tokenizer.json and config.json.
func LoadModel2Vec(dir string) (*Static, error) {
	fail := func(err error) error { return fmt.Errorf("model2vec model %s: %w", dir, err) }
	tokRaw, err := localfile.ReadAtMost(filepath.Join(dir, "tokenizer.json"), MaxTokenizerBytes)
	if err != nil {
		return nil, fail(err)
	}
	tok, err := parseTokenizer(tokRaw)
	if err != nil {
		return nil, fail(fmt.Errorf("tokenizer.json: %w", err))
	}
	var cfg struct {
		Normalize *bool `json:"normalize"`
	}
	if raw, err := localfile.ReadAtMost(filepath.Join(dir, "config.json"), MaxTokenizerBytes); err == nil {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fail(fmt.Errorf("config.json: %w", err))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fail(err)
	}
	modelRaw, err := localfile.ReadAtMost(filepath.Join(dir, "model.safetensors"), MaxModelFileBytes)
	if err != nil {
		return nil, fail(err)
	}
	tensors, err := parseSafetensors(modelRaw)
	if err != nil {
		return nil, fail(fmt.Errorf("model.safetensors: %w", err))
	}
	m, err := fromParts(tok, tensors, cfg.Normalize != nil && *cfg.Normalize)
	if err != nil {
		return nil, fail(err)
	}
	// The name carries a digest of the files, so another model, or the
	// same one changed, re-embeds every memory.
	h := sha256.New()
	h.Write(tokRaw)
	h.Write(modelRaw)
	m.name = "model2vec:" + filepath.Base(filepath.Clean(dir)) + "@" + hex.EncodeToString(h.Sum(nil))[:16]
	return m, nil
}

// fromParts makes a model of a parsed tokenizer and model file, checking
// that the tensors fit the tokenizer: every token has a row, a weight
// when there are weights, and a mapping into the rows when there is one.
func fromParts(tok *tokenizer, tensors map[string]tensor, normalize bool) (*Static, error) {
	var err error
	emb, ok := tensors["embeddings"]
	if !ok {
		return nil, errors.New(`model.safetensors has no "embeddings" tensor; is this a model2vec model?`)
	}
	if len(emb.shape) != 2 || emb.shape[0] < 1 || emb.shape[1] < 1 || emb.shape[1] > MaxDimensions {
		return nil, fmt.Errorf("embeddings tensor has shape %v; expected [tokens, dimensions] with 1 to %d dimensions", emb.shape, MaxDimensions)
	}
	if emb.count() > maxTableFloats {
		return nil, fmt.Errorf("embeddings tensor has %d numbers; memstore loads at most %d (%d GiB as float32)", emb.count(), maxTableFloats, maxTableFloats*4>>30)
	}
	m := &Static{tok: tok, rows: emb.shape[0], dims: emb.shape[1], normalize: normalize}
	if m.vectors, err = emb.floats(); err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	vocab := tok.size()
	if t, ok := tensors["mapping"]; ok {
		ids, err := t.ints()
		if err != nil {
			return nil, fmt.Errorf("mapping: %w", err)
		}
		m.mapping = make([]int32, len(ids))
		for i, r := range ids {
			if r < 0 || r >= int64(m.rows) {
				return nil, fmt.Errorf("mapping sends token %d to row %d of %d", i, r, m.rows)
			}
			m.mapping[i] = int32(r)
		}
		if len(m.mapping) < vocab {
			return nil, fmt.Errorf("mapping covers %d tokens, the tokenizer has %d", len(m.mapping), vocab)
		}
	} else if m.rows < vocab {
		return nil, fmt.Errorf("the tokenizer has %d tokens, the embeddings %d rows", vocab, m.rows)
	}
	if t, ok := tensors["weights"]; ok {
		if m.weights, err = t.floats(); err != nil {
			return nil, fmt.Errorf("weights: %w", err)
		}
		if len(m.weights) < vocab {
			return nil, fmt.Errorf("weights cover %d tokens, the tokenizer has %d", len(m.weights), vocab)
		}
	}
	return m, nil
}

// maxTableFloats bounds the embeddings table as it is held in memory: a
// table of one-byte numbers (I8) takes four times its file's size as
// float32.
const maxTableFloats = MaxModelFileBytes / 4

// Model names the model by its directory and a digest of its files.
func (m *Static) Model() string { return m.name }

// Dimensions is the length of the model's vectors.
func (m *Static) Dimensions() int { return m.dims }

// Embed returns the mean of each text's token vectors, normalised when the
// model's config asks for it. A text with no known token has a zero vector.
func (m *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = m.embedOne(t)
	}
	// A table's large numbers may sum past float32's range: such a vector
	// is refused as an endpoint's would be.
	if err := checkVectors(out, len(texts), m.dims); err != nil {
		return nil, refusal{fmt.Errorf("model2vec model %s: %w", m.name, err)}
	}
	return out, nil
}

func (m *Static) embedOne(text string) []float32 {
	v := make([]float32, m.dims)
	n := 0
	for _, id := range m.tok.encode(text, MaxTokens) {
		row, w := id, float32(1)
		if m.mapping != nil {
			row = int(m.mapping[id])
		}
		if row >= m.rows {
			continue
		}
		if m.weights != nil {
			w = m.weights[id]
		}
		vec := m.vectors[row*m.dims : (row+1)*m.dims]
		for j, x := range vec {
			v[j] += w * x
		}
		n++
	}
	if n == 0 {
		return v
	}
	inv := 1 / float32(n)
	for j := range v {
		v[j] *= inv
	}
	if m.normalize {
		Normalize(v)
	}
	return v
}

// tensor is one entry of a safetensors file: a little-endian array.
type tensor struct {
	dtype string
	shape []int
	data  []byte
}

func (t tensor) count() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// floats converts a floating-point or int8 tensor to float32.
func (t tensor) floats() ([]float32, error) {
	n := t.count()
	out := make([]float32, n)
	switch t.dtype {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(t.data[8*i:])))
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(t.data[2*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.data[2*i:])) << 16)
		}
	case "I8":
		for i := range out {
			out[i] = float32(int8(t.data[i]))
		}
	default:
		return nil, fmt.Errorf("type %s is not a number type memstore reads (F32, F16, BF16, F64, I8)", t.dtype)
	}
	for _, x := range out {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("holds a number that is not finite")
		}
	}
	return out, nil
}

// ints converts an integer tensor to int64.
func (t tensor) ints() ([]int64, error) {
	out := make([]int64, t.count())
	switch t.dtype {
	case "I64":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		}
	case "I32":
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
		}
	default:
		return nil, fmt.Errorf("type %s is not an integer type memstore reads (I64, I32)", t.dtype)
	}
	return out, nil
}

var dtypeSize = map[string]int{"F64": 8, "I64": 8, "F32": 4, "I32": 4, "F16": 2, "BF16": 2, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}

// parseSafetensors reads the safetensors layout: an 8-byte little-endian
// header length, a JSON header naming each tensor's type, shape and byte
// range, then the bytes. Every range is checked against the file.
func parseSafetensors(b []byte) (map[string]tensor, error) {
	if len(b) < 8 {
		return nil, errors.New("too short to be a safetensors file")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeaderBytes || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("header length %d does not fit the file", n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("header is not JSON: %w", err)
	}
	data := b[8+n:]
	out := map[string]tensor{}
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var h struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		size, ok := dtypeSize[h.Dtype]
		if !ok {
			return nil, fmt.Errorf("tensor %q has unknown type %q", name, h.Dtype)
		}
		if len(h.Offsets) != 2 || h.Offsets[0] > h.Offsets[1] || h.Offsets[1] > uint64(len(data)) {
			return nil, fmt.Errorf("tensor %q has a byte range outside the file", name)
		}
		count := uint64(1)
		for _, d := range h.Shape {
			if d < 0 || (d > 0 && count > math.MaxUint32/uint64(d)) {
				return nil, fmt.Errorf("tensor %q has shape %v, too large", name, h.Shape)
			}
			count *= uint64(d)
		}
		if count*uint64(size) != h.Offsets[1]-h.Offsets[0] {
			return nil, fmt.Errorf("tensor %q: shape %v of %s does not match its %d bytes", name, h.Shape, h.Dtype, h.Offsets[1]-h.Offsets[0])
		}
		out[name] = tensor{dtype: h.Dtype, shape: h.Shape, data: data[h.Offsets[0]:h.Offsets[1]]}
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 half-precision number.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = frac × 2^-24
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

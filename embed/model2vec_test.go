package embed_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
)

// testVocab is a small BERT-like vocabulary, with a continuation piece.
var testVocab = []string{"[UNK]", "[CLS]", "hello", "world", "##s", "memory", "cafe", ",", "deploy"}

type tensorSpec = embedtest.Tensor

var f32 = embedtest.F32

// f16 encodes small exact values (integers and halves) as IEEE halves.
func f16(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		bits := math.Float32bits(v)
		var h uint16
		if v != 0 {
			exp := int((bits>>23)&0xff) - 127 + 15
			h = uint16(bits>>31)<<15 | uint16(exp)<<10 | uint16((bits>>13)&0x3ff)
		}
		b = binary.LittleEndian.AppendUint16(b, h)
	}
	return b
}

// rowVectors gives token i the vector (i, 1, -i) in 3 dimensions.
func rowVectors(n int) []float32 {
	var v []float32
	for i := range n {
		v = append(v, float32(i), 1, -float32(i))
	}
	return v
}

func writeModel(t *testing.T, normalize bool, tensors map[string]tensorSpec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny-model")
	embedtest.WriteModel2Vec(t, dir, testVocab, normalize, tensors)
	return dir
}

func embedOne(t *testing.T, m embed.Embedder, text string) []float32 {
	t.Helper()
	vs, err := m.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

func near(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			return false
		}
	}
	return true
}

// The text's vector is the mean of its tokens' rows: "Héllo, worlds!"
// is hello + "," + world + ##s (the accent stripped, the case folded), and
// the unknown "!" is dropped.
func TestModel2VecMeanPools(t *testing.T) {
	n := len(testVocab)
	dir := writeModel(t, false, map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: f32(rowVectors(n)...)}})
	m, err := embed.LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dimensions() != 3 || !strings.HasPrefix(m.Model(), "model2vec:tiny-model@") {
		t.Fatalf("dimensions %d, model %q", m.Dimensions(), m.Model())
	}
	// ids: hello 2, "," 7, world 3, ##s 4 → mean 4
	if got, want := embedOne(t, m, "Héllo, worlds!"), []float32{4, 1, -4}; !near(got, want) {
		t.Errorf("vector %v, want %v", got, want)
	}
	if got := embedOne(t, m, "zzz qqq"); !near(got, []float32{0, 0, 0}) {
		t.Errorf("a text of unknown words has vector %v, want zeros", got)
	}
}

func TestModel2VecNormalisesHalfFloats(t *testing.T) {
	n := len(testVocab)
	dir := writeModel(t, true, map[string]tensorSpec{"embeddings": {Dtype: "F16", Shape: []int{n, 3}, Data: f16(rowVectors(n)...)}})
	m, err := embed.LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := embedOne(t, m, "deploy")
	s := float32(1 / math.Sqrt(8*8+1+8*8))
	if want := []float32{8 * s, s, -8 * s}; !near(got, want) {
		t.Errorf("vector %v, want %v", got, want)
	}
}

// A quantised vocabulary maps tokens to shared rows and weighs each token.
func TestModel2VecMappingAndWeights(t *testing.T) {
	n := len(testVocab)
	mapping := make([]byte, 0, 8*n)
	weights := make([]float32, n)
	for i := range n {
		mapping = binary.LittleEndian.AppendUint64(mapping, uint64(i%2))
		weights[i] = float32(i)
	}
	dir := writeModel(t, false, map[string]tensorSpec{
		"embeddings": {Dtype: "F32", Shape: []int{2, 3}, Data: f32(1, 0, 0, 0, 1, 0)},
		"mapping":    {Dtype: "I64", Shape: []int{n}, Data: mapping},
		"weights":    {Dtype: "F32", Shape: []int{n}, Data: f32(weights...)},
	})
	m, err := embed.LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	// memory (5) → row 1 weight 5; deploy (8) → row 0 weight 8: mean (4, 2.5, 0)
	if got, want := embedOne(t, m, "memory deploy"), []float32{4, 2.5, 0}; !near(got, want) {
		t.Errorf("vector %v, want %v", got, want)
	}
}

func TestModel2VecChangedFileChangesName(t *testing.T) {
	n := len(testVocab)
	a, _ := embed.LoadModel2Vec(writeModel(t, false, map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: f32(rowVectors(n)...)}}))
	v := rowVectors(n)
	v[0] = 9
	b, _ := embed.LoadModel2Vec(writeModel(t, false, map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: f32(v...)}}))
	if a == nil || b == nil || a.Model() == b.Model() {
		t.Fatal("two different model files have the same name: a changed model would not re-embed")
	}
}

func TestModel2VecRefusesBadFiles(t *testing.T) {
	n := len(testVocab)
	good := f32(rowVectors(n)...)
	cases := map[string]struct {
		tensors map[string]tensorSpec
		want    string
	}{
		"no embeddings":  {map[string]tensorSpec{"other": {Dtype: "F32", Shape: []int{n, 3}, Data: good}}, `no "embeddings" tensor`},
		"short table":    {map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{2, 3}, Data: f32(1, 2, 3, 4, 5, 6)}}, "the tokenizer has 9 tokens"},
		"shape mismatch": {map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 4}, Data: good}}, "does not match"},
		"text type":      {map[string]tensorSpec{"embeddings": {Dtype: "BOOL", Shape: []int{n, 3}, Data: make([]byte, n*3)}}, "not a number type"},
		"not finite":     {map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: append(f32(float32(math.Inf(1))), good[4:]...)}}, "not finite"},
		"bad mapping":    {map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: good}, "mapping": {Dtype: "I64", Shape: []int{1}, Data: binary.LittleEndian.AppendUint64(nil, 99)}}, "row 99"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := embed.LoadModel2Vec(writeModel(t, false, tc.tensors))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	t.Run("header out of range", func(t *testing.T) {
		dir := writeModel(t, false, map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: good}})
		os.WriteFile(filepath.Join(dir, "model.safetensors"), binary.LittleEndian.AppendUint64(nil, 1<<40), 0o644)
		if _, err := embed.LoadModel2Vec(dir); err == nil || !strings.Contains(err.Error(), "header length") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unigram tokenizer", func(t *testing.T) {
		dir := writeModel(t, false, map[string]tensorSpec{"embeddings": {Dtype: "F32", Shape: []int{n, 3}, Data: good}})
		os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"model":{"type":"Unigram","vocab":[["a",0]]}}`), 0o644)
		if _, err := embed.LoadModel2Vec(dir); err == nil || !strings.Contains(err.Error(), `"Unigram" is not one memstore reads`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, err := embed.LoadModel2Vec(filepath.Join(t.TempDir(), "none")); err == nil {
			t.Fatal("a missing model loaded")
		}
	})
}

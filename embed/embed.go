// Package embed turns text into vectors for semantic search. An Embedder
// is either a client of an OpenAI-compatible /v1/embeddings endpoint
// (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio, Voyage) or a local
// static-embedding model file in the model2vec format, read in pure Go.
//
// The package knows nothing of stores or memories: the server's indexing
// worker and the core's nearest-memory search call it with plain texts.
package embed

import (
	"context"
	"fmt"
	"math"
)

// Embedder turns texts into vectors of one model. Embed returns one
// vector per text, in order, each of Dimensions() numbers.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model and everything that changes its vectors
	// (for a model file, a digest of its contents): a vector stored
	// under another name is computed again.
	Model() string
	Dimensions() int
}

// Limits of the vectors a provider may return.
const (
	// MaxDimensions bounds a vector's length, from a server or a model
	// file: larger models exist, but memstore stores one vector per
	// memory and scans them, so it refuses what it cannot keep fast.
	MaxDimensions = 4096
	// MaxBatch is how many texts go to the endpoint in one request.
	MaxBatch = 64
)

// Normalize scales v to unit length in place, so that a dot product is the
// cosine similarity. A zero vector (a text with no known token) stays zero.
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// A Refusal is a model's answer that the texts themselves cannot be
// embedded: trying them again will not change it. Any other failure may
// pass (a rate limit, a wrong key or model name fixed later, an outage),
// so a caller that keeps work queued keeps it.
type Refusal interface{ Refused() bool }

// refusal marks err as a Refusal.
type refusal struct{ error }

func (r refusal) Refused() bool { return true }
func (r refusal) Unwrap() error { return r.error }

// checkVectors checks what a provider answered: one finite vector per
// text, all of the expected length.
func checkVectors(vs [][]float32, texts, dims int) error {
	if len(vs) != texts {
		return fmt.Errorf("returned %d vectors for %d texts", len(vs), texts)
	}
	for i, v := range vs {
		if len(v) != dims {
			return fmt.Errorf("returned a vector of %d dimensions, expected %d (check the dimensions setting)", len(v), dims)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("returned a vector with a number that is not finite, for text %d", i)
			}
		}
	}
	return nil
}

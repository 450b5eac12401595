package memdir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/vector"
)

// VectorCacheName is the file in a memory directory that keeps the
// vectors of its topic files for semantic and hybrid recall, by model and
// by the SHA-256 of the text embedded, so that a recall embeds only the
// files whose text changed since the last. Hidden, as the directory's
// other state is, so that nothing takes it for a memory; deleting it only
// costs the next recall the embedding of every file.
const VectorCacheName = ".recall-vectors.json"

// maxVectorCache bounds what recall reads of the cache: RecallMaxFiles
// files, the team's too, of embed.MaxDimensions bytes each, fit with room
// to spare; a larger or unreadable cache is ignored and written again.
const maxVectorCache = 16 << 20

// vectorCache is VectorCacheName's content.
type vectorCache struct {
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
	// Vectors maps the hex SHA-256 of a file's embedded text to its
	// vector, as internal/vector's blob (base64 in JSON).
	Vectors map[string][]byte `json:"vectors"`
}

// Errors of semantic and hybrid recall.
var (
	// ErrNoEmbedder is a semantic or hybrid recall without a model.
	ErrNoEmbedder = errors.New("semantic and hybrid recall need an embedding model")
	// ErrModel wraps what the model failed with.
	ErrModel = errors.New("the embedding model failed")
)

// fileVectors returns the vectors of texts, by index, each of dims
// numbers, from the cache in dir where it has them and from e for the
// others, then keeps in the cache the vectors of texts alone. A cache
// that cannot be written is left as it was: it only saves work.
func fileVectors(ctx context.Context, dir string, e memstore.Embedder, texts []string, dims int) ([][]byte, error) {
	old := readVectorCache(dir, e.Model(), dims)
	now := vectorCache{Model: e.Model(), Dimensions: dims, Vectors: make(map[string][]byte, len(texts))}
	out := make([][]byte, len(texts))
	var missing []int
	keys := make([]string, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		keys[i] = hex.EncodeToString(sum[:])
		if v, ok := old.Vectors[keys[i]]; ok && len(v) == now.Dimensions {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		batch := make([]string, len(missing))
		for j, i := range missing {
			batch[j] = texts[i]
		}
		vs, err := e.Embed(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embedding the memories: %w: %w", ErrModel, err)
		}
		if len(vs) != len(batch) {
			return nil, fmt.Errorf("embedding the memories: %w: %d vectors for %d texts", ErrModel, len(vs), len(batch))
		}
		for j, i := range missing {
			if len(vs[j]) != dims {
				return nil, fmt.Errorf("embedding the memories: %w: a vector of %d dimensions, the query's of %d", ErrModel, len(vs[j]), dims)
			}
			out[i] = vector.Encode(vs[j])
		}
	}
	for i, k := range keys {
		now.Vectors[k] = out[i]
	}
	if len(missing) > 0 || len(now.Vectors) != len(old.Vectors) {
		writeVectorCache(dir, now)
	}
	return out, nil
}

// readVectorCache reads the cache of dir for model's vectors of dims
// numbers; an absent, unreadable or other model's cache is empty.
func readVectorCache(dir, model string, dims int) vectorCache {
	var c vectorCache
	f, err := os.Open(filepath.Join(dir, VectorCacheName))
	if err != nil {
		return c
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxVectorCache+1))
	if err != nil || len(b) > maxVectorCache || json.Unmarshal(b, &c) != nil || c.Model != model || c.Dimensions != dims {
		return vectorCache{}
	}
	return c
}

// writeVectorCache replaces the cache of dir with c, whole or not at all.
func writeVectorCache(dir string, c vectorCache) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	f, err := os.CreateTemp(dir, VectorCacheName+".*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, VectorCacheName))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// queryVector embeds the query with e.
func queryVector(ctx context.Context, e memstore.Embedder, query string) ([]byte, error) {
	vs, err := e.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w: %w", ErrModel, err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedding the query: %w: %d vectors for 1 text", ErrModel, len(vs))
	}
	return vector.Encode(vs[0]), nil
}

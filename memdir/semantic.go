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
	"github.com/memstore/memstore/internal/private"
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

// textKey is the cache's key of a text: its SHA-256, in hex.
func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// fileVectors returns the vectors of texts, by index, each of dims
// numbers, from the cache in dir where it has them and from e for the
// others, then keeps in the cache the vectors of texts alone. A cache
// that cannot be written is left as it was: it only saves work.
func fileVectors(ctx context.Context, dir string, e memstore.Embedder, texts []string, dims int) ([][]byte, error) {
	old := readVectorCache(dir)
	if old.Model != e.Model() || old.Dimensions != dims {
		old.Vectors = nil
	}
	now := vectorCache{Model: e.Model(), Dimensions: dims, Vectors: make(map[string][]byte, len(texts))}
	out := make([][]byte, len(texts))
	var missing []int
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = textKey(t)
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
			forgetVectors(dir, keys)
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

// forgetVectors drops from the cache of dir, if there is one, the
// vectors of texts not among keys: a vector is its text in another form,
// so a file deleted or changed takes its vector along at the next recall,
// whatever its mode, and even when the model fails.
func forgetVectors(dir string, keys []string) {
	c := readVectorCache(dir)
	if len(c.Vectors) == 0 {
		return
	}
	keep := make(map[string]bool, len(keys))
	for _, k := range keys {
		keep[k] = true
	}
	n := len(c.Vectors)
	for k := range c.Vectors {
		if !keep[k] {
			delete(c.Vectors, k)
		}
	}
	if len(c.Vectors) != n {
		writeVectorCache(dir, c)
	}
}

// readVectorCache reads the cache of dir; an absent or unreadable cache,
// or anything but a regular file, is empty.
func readVectorCache(dir string) vectorCache {
	var c vectorCache
	name := filepath.Join(dir, VectorCacheName)
	st, err := os.Lstat(name)
	if err != nil || !st.Mode().IsRegular() {
		return c
	}
	f, err := os.Open(name)
	if err != nil {
		return c
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return c // replaced since it was looked at
	}
	b, err := io.ReadAll(io.LimitReader(f, maxVectorCache+1))
	if err != nil || len(b) > maxVectorCache || json.Unmarshal(b, &c) != nil {
		return vectorCache{}
	}
	return c
}

// writeVectorCache replaces the cache of dir with c, whole or not at all,
// readable by its owner only.
func writeVectorCache(dir string, c vectorCache) {
	if b, err := json.Marshal(c); err == nil {
		_ = private.WriteFile(filepath.Join(dir, VectorCacheName), b)
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

// hasVectorCache says whether dir has a vector cache, which a lexical
// recall then prunes (forgetVectors) without computing a key per file
// where there is none.
func hasVectorCache(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, VectorCacheName))
	return err == nil
}

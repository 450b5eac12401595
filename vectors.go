package memstore

import (
	"context"
	"time"
)

// Semantic search: each live memory's current version has one vector,
// computed in the background by the indexing worker (a write never waits
// for a model) with the server's embedding model, and kept by the backend
// beside the memory. A change of the memory's content, its deletion and
// the redaction of its version delete the vector; a vector of another
// model is never compared, and is computed again.

// Limits of semantic search.
const (
	// MaxEmbeddingText is how much of a memory (its path, a line break,
	// its content) is given to the model: models read a few hundred
	// tokens at most, and the start of a memory says what it is about.
	MaxEmbeddingText = 8 << 10
	// EmbeddingLease is how long a worker holds the memories it claimed
	// before another may claim them.
	EmbeddingLease = 2 * time.Minute
	// VectorCopyBytes bounds the memory a process keeps of the stores'
	// vectors, the copies that spare a search reading them from the
	// database: 1 GiB holds about 2.2 million vectors of 384 dimensions.
	// Past it the copies of the stores least recently searched go.
	VectorCopyBytes = 1 << 30
	// VectorCopyBytesPerWorkspace is a workspace's share of them: past
	// it, the workspace's own copies least recently searched go, so that
	// a workspace searching store after store leaves the others room for
	// theirs. At VectorCopyBytes, the workspace holding the most gives.
	VectorCopyBytesPerWorkspace = VectorCopyBytes / 2
	// EmbeddingAttempts is how many claims of a memory the indexing
	// worker makes before it gives up on a text the model refuses (an
	// answer that is not "later"): the memory leaves the queue, stays
	// found by the lexical search, and is queued again by its next change.
	EmbeddingAttempts = 5
	// VectorCopyIdle is how long a copy not searched is kept: a sweep
	// every VectorCopySweep drops it, so that the vectors of memories
	// erased through another process (a deletion, a redaction) stay in
	// this one's memory for at most the two together.
	VectorCopyIdle  = 2 * time.Minute
	VectorCopySweep = 30 * time.Second
)

// An Embedder turns texts into vectors of one model (package embed has
// the providers).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model; vectors of another name are computed again.
	Model() string
	Dimensions() int
}

// An EmbeddingTask is a memory whose current version has no vector yet.
type EmbeddingTask struct {
	WorkspaceID, StoreID, MemoryID, VersionID string
	Path, Content                             string
	Attempts                                  int // claims before this one
}

// EmbeddingText is what the model reads of a memory: its path, which
// often names its subject, and the start of its content.
func EmbeddingText(path, content string) string {
	s := path + "\n" + content
	if len(s) <= MaxEmbeddingText {
		return s
	}
	cut := MaxEmbeddingText
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut]
}

// An Embedding is the vector of one version of a memory.
type Embedding struct {
	MemoryID, VersionID string
	Vector              []float32
}

// VectorStorage keeps the vectors of memories and the queue of memories
// to embed. It is trusted: only a Core and the indexing worker call it.
type VectorStorage interface {
	// StartEmbeddings makes every write queue its memory from now on, and
	// queues each memory without a vector of its current version: a
	// backend may leave the queue off until a worker starts, which calls
	// it first (a backend whose writes always queue does nothing).
	StartEmbeddings(ctx context.Context) error
	// ResetEmbeddings deletes every vector not of model and dims, and
	// queues their memories, so that a change of model computes every
	// vector again.
	ResetEmbeddings(ctx context.Context, model string, dims int) error
	// ClaimEmbeddings takes up to limit queued memories whose lease
	// expired, holding them until until, shared between workspaces: each
	// workspace with work gets an equal part of limit, and when they are
	// more than limit, those whose oldest memory waited longest go first.
	ClaimEmbeddings(ctx context.Context, now, until time.Time, limit int) ([]EmbeddingTask, error)
	// PutEmbeddings stores vectors of model and ends their tasks; a
	// vector of a version that is no longer its memory's current one
	// (the memory is queued again by its change), or that is redacted,
	// is dropped.
	PutEmbeddings(ctx context.Context, model string, es []Embedding) error
	// DeferEmbeddings holds claimed tasks until until, when the model
	// failed them: they are claimed again then, not at their lease's end.
	DeferEmbeddings(ctx context.Context, tasks []EmbeddingTask, until time.Time) error
	// DropEmbeddings ends claimed tasks without a vector, when the model
	// refused them EmbeddingAttempts times; a later change of the memory
	// queues it again.
	DropEmbeddings(ctx context.Context, tasks []EmbeddingTask) error
	// NearestMemories returns the limit live memories of the stores,
	// inside workspaceID, whose vectors of model are nearest to query,
	// best first, with their cosine similarity as Score, each Memory
	// holding only its ID (SearchStorage.ReadResults reads the rest);
	// memories not yet embedded are not among them (ENotFound: a store
	// not in the workspace).
	NearestMemories(ctx context.Context, workspaceID string, storeIDs []string, model string, query []float32, pathPrefix string, limit int) ([]SearchResult, error)
	// EmbeddingCounts is how many memories have a vector and how many
	// wait for one.
	EmbeddingCounts(ctx context.Context) (embedded, queued int64, err error)
}

// WithEmbedder sets the model that embeds the queries of semantic and
// hybrid search; it must be the indexing worker's, whose vectors the
// queries are compared with.
func WithEmbedder(e Embedder) CoreOption {
	return func(co *Core) { co.embedder = e }
}

// ClaimShared is the share of a claim of limit tasks between the
// workspaces that have work, for the backends' ClaimEmbeddings: each gets
// an equal part, and what one leaves of its part goes to the others, in
// passes. claim takes up to n of a workspace's tasks and says how many
// it took. workspaces come longest waiting first: when they are more
// than limit, the first ones get one each.
func ClaimShared(workspaces []string, limit int, claim func(workspaceID string, n int) (int, error)) error {
	left := limit
	for len(workspaces) > 0 && left > 0 {
		var full []string
		for i, w := range workspaces {
			share := max(1, left/(len(workspaces)-i))
			got, err := claim(w, min(share, left))
			if err != nil {
				return err
			}
			if got == share {
				full = append(full, w)
			}
			if left -= got; left <= 0 {
				break
			}
		}
		workspaces = full
	}
	return nil
}

// Package embedindex is the indexing worker of semantic search: it runs
// in memstore serve, claims the memories waiting for a vector from the
// storage (memstore.VectorStorage), embeds them in batches with the
// server's model and stores their vectors. Writes never wait for it; a
// memory it has not reached yet is still found by the lexical search.
// Claims hold a lease, so that the workers of several servers on one
// database share the work, and each claim shares its batch between the
// workspaces that have work.
package embedindex

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/memstore/memstore"
)

// Defaults of the worker.
const (
	// DefaultBatch is how many memories one claim takes and one request
	// to the model embeds.
	DefaultBatch = 64
	// DefaultIdle is how long the worker waits when nothing is queued.
	DefaultIdle = time.Second
	// MaxBackoff bounds the wait after a failure of the model.
	MaxBackoff = time.Minute
)

// Config configures a Worker.
type Config struct {
	Storage  memstore.VectorStorage
	Embedder memstore.Embedder
	Batch    int           // 0 means DefaultBatch
	Idle     time.Duration // 0 means DefaultIdle
	Log      *slog.Logger  // nil logs nothing
}

// Worker embeds queued memories until its context ends.
type Worker struct {
	cfg      Config
	embedded atomic.Int64
	failures atomic.Int64
}

// New returns a worker; Run starts it.
func New(cfg Config) *Worker {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{cfg: cfg}
}

// Embedded is how many vectors this worker stored; Failures how many
// batches the model failed.
func (w *Worker) Embedded() int64 { return w.embedded.Load() }

// Failures is how many batches the model failed to embed.
func (w *Worker) Failures() int64 { return w.failures.Load() }

// Run embeds until ctx ends. At start it drops the vectors of any other
// model, so that a change of model computes every vector again; then it
// claims, embeds and stores batch after batch, waiting Idle when nothing
// is queued and backing off, doubling up to MaxBackoff, while the model
// fails (the memories it held are claimed again when their lease ends).
func (w *Worker) Run(ctx context.Context) error {
	e := w.cfg.Embedder
	if e.Dimensions() == 0 {
		// An endpoint's dimensions are learned from its first answer.
		if _, err := e.Embed(ctx, []string{"memstore"}); err != nil && ctx.Err() == nil {
			w.cfg.Log.Error("embedding model did not answer; semantic indexing waits for it", "err", err)
		}
	}
	backoff := time.Duration(0)
	reset := false
	for ctx.Err() == nil {
		if !reset && e.Dimensions() > 0 {
			if err := w.cfg.Storage.ResetEmbeddings(ctx, e.Model(), e.Dimensions()); err != nil {
				w.cfg.Log.Error("reset vectors", "err", err)
			} else {
				reset = true
			}
		}
		wait, err := w.step(ctx, reset)
		if err != nil && ctx.Err() == nil {
			w.failures.Add(1)
			backoff = min(max(2*backoff, time.Second), MaxBackoff)
			w.cfg.Log.Warn("embedding memories failed; retrying", "err", err, "retry_in", backoff)
			wait = backoff
		} else if err == nil {
			backoff = 0
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
	return ctx.Err()
}

// Drain embeds every queued memory whose lease is not held, then
// returns: Run's work, once, without waiting, for tests and benchmarks
// that search right after writing. It fails at the model's first
// failure.
func (w *Worker) Drain(ctx context.Context) error {
	e := w.cfg.Embedder
	if e.Dimensions() == 0 {
		if _, err := e.Embed(ctx, []string{"memstore"}); err != nil {
			return err
		}
	}
	if err := w.cfg.Storage.ResetEmbeddings(ctx, e.Model(), e.Dimensions()); err != nil {
		return err
	}
	for {
		before := w.embedded.Load()
		if _, err := w.step(ctx, true); err != nil {
			return err
		}
		if w.embedded.Load() == before {
			return nil
		}
	}
}

var errNoDimensions = errors.New("the embedding model has not answered yet")

// step embeds one batch; it returns how long to wait before the next.
func (w *Worker) step(ctx context.Context, reset bool) (time.Duration, error) {
	e := w.cfg.Embedder
	if !reset {
		_, err := e.Embed(ctx, []string{"memstore"})
		if err == nil {
			err = errNoDimensions
		}
		return 0, err
	}
	now := time.Now()
	tasks, err := w.cfg.Storage.ClaimEmbeddings(ctx, now, now.Add(memstore.EmbeddingLease), w.cfg.Batch)
	if err != nil {
		return 0, err
	}
	if len(tasks) == 0 {
		return w.cfg.Idle, nil
	}
	texts := make([]string, len(tasks))
	for i, t := range tasks {
		texts[i] = memstore.EmbeddingText(t.Path, t.Content)
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		// Each memory is retried after a wait that doubles with its
		// attempts, so that one the model always refuses costs little.
		retry := time.Second << min(tasks[0].Attempts, 6)
		if derr := w.cfg.Storage.DeferEmbeddings(context.WithoutCancel(ctx), tasks, time.Now().Add(min(retry, MaxBackoff))); derr != nil {
			w.cfg.Log.Error("defer memories to embed", "err", derr)
		}
		return 0, err
	}
	if len(vecs) != len(tasks) {
		return 0, errors.New("the embedding model returned a vector count unlike the texts'")
	}
	es := make([]memstore.Embedding, len(tasks))
	for i, t := range tasks {
		es[i] = memstore.Embedding{MemoryID: t.MemoryID, VersionID: t.VersionID, Vector: vecs[i]}
	}
	if err := w.cfg.Storage.PutEmbeddings(ctx, e.Model(), es); err != nil {
		return 0, err
	}
	w.embedded.Add(int64(len(es)))
	if len(tasks) < w.cfg.Batch {
		// The queue is short: let it fill for a while, so that a steady
		// trickle of writes is embedded in a few full batches, not in
		// a claim and a store of vectors for every few writes, each a
		// write that the writes queue behind.
		return w.cfg.Idle, nil
	}
	return 0, nil
}

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
	"github.com/memstore/memstore/embed"
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
	// DefaultRetryWait is the first wait before a memory the model failed
	// is claimed again; it doubles with the memory's attempts.
	DefaultRetryWait = time.Second
)

// Config configures a Worker.
type Config struct {
	Storage  memstore.VectorStorage
	Embedder memstore.Embedder
	Batch    int           // 0 means DefaultBatch
	Idle     time.Duration // 0 means DefaultIdle
	// RetryWait is the first wait before a failed memory is claimed
	// again; 0 means DefaultRetryWait.
	RetryWait time.Duration
	Log       *slog.Logger // nil logs nothing
}

// Worker embeds queued memories until its context ends.
type Worker struct {
	cfg      Config
	embedded atomic.Int64
	failures atomic.Int64
	dropped  atomic.Int64
}

// New returns a worker; Run starts it.
func New(cfg Config) *Worker {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = DefaultRetryWait
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

// Dropped is how many memories left the queue without a vector, their
// text refused by the model EmbeddingAttempts times.
func (w *Worker) Dropped() int64 { return w.dropped.Load() }

// Run embeds until ctx ends. It first turns the queue on
// (StartEmbeddings: that needs no model, and a write made while the model
// is away then waits for it), then drops the vectors of any other model,
// so that a change of model computes every vector again; then it claims,
// embeds and stores batch after batch, waiting Idle when nothing is
// queued and backing off, doubling up to MaxBackoff, while the model or
// the database fails (the memories it held are claimed again when their
// lease ends).
func (w *Worker) Run(ctx context.Context) error {
	e := w.cfg.Embedder
	// Before the probe, which may wait long for a model away: the queue
	// is on meanwhile. A failure is logged, and tried again after the
	// loop's back-off.
	startErr := w.cfg.Storage.StartEmbeddings(ctx)
	if err := w.probe(ctx); err != nil && ctx.Err() == nil {
		w.cfg.Log.Error("embedding model did not answer; semantic indexing waits for it", "err", err)
	}
	backoff := time.Duration(0)
	reset := false
	for ctx.Err() == nil {
		var wait time.Duration
		var err error
		switch {
		case startErr != nil:
			if err = startErr; ctx.Err() == nil {
				w.cfg.Log.Error("turn the queue of memories to embed on", "err", err)
			}
		case !reset && e.Dimensions() > 0:
			if err = w.cfg.Storage.ResetEmbeddings(ctx, e.Model(), e.Dimensions()); err == nil {
				reset = true
				continue
			}
			w.cfg.Log.Error("reset vectors", "err", err)
		default:
			if wait, err = w.step(ctx, reset); err != nil && ctx.Err() == nil {
				w.failures.Add(1)
				w.cfg.Log.Warn("embedding memories failed; retrying", "err", err, "retry_in", min(max(2*backoff, time.Second), MaxBackoff))
			}
		}
		if err != nil && ctx.Err() == nil {
			backoff = min(max(2*backoff, time.Second), MaxBackoff)
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
		if startErr != nil && ctx.Err() == nil {
			startErr = w.cfg.Storage.StartEmbeddings(ctx)
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
	if err := w.cfg.Storage.StartEmbeddings(ctx); err != nil {
		return err
	}
	if err := w.probe(ctx); err != nil {
		return err
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

// probe asks the model for one vector while its dimensions are unknown:
// an endpoint's are learned from its first answer.
func (w *Worker) probe(ctx context.Context) error {
	if w.cfg.Embedder.Dimensions() > 0 {
		return nil
	}
	_, err := w.cfg.Embedder.Embed(ctx, []string{"memstore"})
	return err
}

// step embeds one batch; it returns how long to wait before the next.
func (w *Worker) step(ctx context.Context, reset bool) (time.Duration, error) {
	if !reset {
		err := w.probe(ctx)
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
	if err := w.embed(ctx, tasks); err != nil {
		return 0, err
	}
	if len(tasks) < w.cfg.Batch {
		// The queue is short: let it fill for a while, so that a steady
		// trickle of writes is embedded in a few full batches, not in
		// a claim and a store of vectors for every few writes, each a
		// write that the writes queue behind.
		return w.cfg.Idle, nil
	}
	return 0, nil
}

// embed embeds tasks and stores their vectors. A text the model refuses
// fails only its own memory: the batch, which mixes workspaces, is split
// in halves until the refused memory is alone, so that one workspace's
// memory never holds back another's. Only a failure that says "later"
// (rate limits, the endpoint's own errors, timeouts, no answer) is
// returned, for the worker to back off; the tasks it held are deferred,
// each by its own attempts.
func (w *Worker) embed(ctx context.Context, tasks []memstore.EmbeddingTask) error {
	texts := make([]string, len(tasks))
	for i, t := range tasks {
		texts[i] = memstore.EmbeddingText(t.Path, t.Content)
	}
	vecs, err := w.cfg.Embedder.Embed(ctx, texts)
	if err == nil && len(vecs) != len(tasks) {
		err = errors.New("the embedding model returned a vector count unlike the texts'")
	}
	if err != nil {
		if !refused(err) || ctx.Err() != nil {
			w.deferTasks(ctx, tasks)
			return err
		}
		if len(tasks) > 1 {
			half := len(tasks) / 2
			if err := w.embed(ctx, tasks[:half]); err != nil {
				w.deferTasks(ctx, tasks[half:])
				return err
			}
			return w.embed(ctx, tasks[half:])
		}
		w.refuse(ctx, tasks[0], err)
		return nil
	}
	es := make([]memstore.Embedding, len(tasks))
	for i, t := range tasks {
		es[i] = memstore.Embedding{MemoryID: t.MemoryID, VersionID: t.VersionID, Vector: vecs[i]}
	}
	if err := w.cfg.Storage.PutEmbeddings(ctx, w.cfg.Embedder.Model(), es); err != nil {
		return err
	}
	w.embedded.Add(int64(len(es)))
	return nil
}

// refused says whether the model refused the texts themselves (an answer
// such as 400 that trying again will not change), not "later": a wrong
// key or model name is "later", so that fixing it embeds the queue
// instead of dropping it.
func refused(err error) bool {
	var r embed.Refusal
	return errors.As(err, &r) && r.Refused()
}

// refuse handles a memory whose text the model refused alone: it is
// claimed again after its own wait, and after EmbeddingAttempts claims it
// leaves the queue (counted in Dropped); it stays found by the lexical
// search.
func (w *Worker) refuse(ctx context.Context, t memstore.EmbeddingTask, err error) {
	ctx = context.WithoutCancel(ctx)
	if t.Attempts+1 < memstore.EmbeddingAttempts {
		w.cfg.Log.Warn("the embedding model refused a memory; retrying it later", "memory_id", t.MemoryID, "workspace_id", t.WorkspaceID, "attempt", t.Attempts+1, "err", err)
		w.deferTasks(ctx, []memstore.EmbeddingTask{t})
		return
	}
	if derr := w.cfg.Storage.DropEmbeddings(ctx, []memstore.EmbeddingTask{t}); derr != nil {
		w.cfg.Log.Error("drop a memory the model refused", "err", derr)
		return
	}
	w.dropped.Add(1)
	w.cfg.Log.Warn("the embedding model refused a memory every time; it is left to the lexical search until it changes", "memory_id", t.MemoryID, "workspace_id", t.WorkspaceID, "attempts", t.Attempts+1, "err", err)
}

// deferTasks holds failed tasks until a wait that doubles with each
// task's own attempts, so that a memory that always fails costs little.
func (w *Worker) deferTasks(ctx context.Context, tasks []memstore.EmbeddingTask) {
	byAttempts := map[int][]memstore.EmbeddingTask{}
	for _, t := range tasks {
		byAttempts[t.Attempts] = append(byAttempts[t.Attempts], t)
	}
	now := time.Now()
	for attempts, ts := range byAttempts {
		wait := min(w.cfg.RetryWait<<min(attempts, 6), MaxBackoff)
		if err := w.cfg.Storage.DeferEmbeddings(context.WithoutCancel(ctx), ts, now.Add(wait)); err != nil {
			w.cfg.Log.Error("defer memories to embed", "err", err)
		}
	}
}

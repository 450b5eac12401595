// Package dream runs memstore's dreams: the worker that memstore serve
// starts claims pending dreams from the core (a lease, so that on
// PostgreSQL exactly one replica runs each), starts each (its output
// store and session, memstore.Core.BeginDream), and runs a model on it
// with internal/agentloop: the prompt holds the input sessions'
// transcripts and the output store's listing, and the model works
// through the six agent tools as the dream's session, whose only store
// is the output store, so nothing it does reaches another store. Each
// step is kept in the dream's session transcript, renews the lease and
// checks for a cancel; the end is recorded with the usage summed from
// every answer (memstore.Core.FinishDream).
//
// A dream whose worker stopped (a restart, a crash) is claimed again when
// its lease expires and resumed on its output store as it is, up to
// memstore.MaxDreamAttempts claims; the core then fails it. A worker that
// stops gracefully lets its leases go at once.
package dream

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/internal/agentloop"
)

// The defaults of a worker, each a flag of memstore serve.
const (
	// DefaultMaxSteps caps the model's answers in one run of a dream
	// (--dream-max-steps).
	DefaultMaxSteps = 50
	// DefaultMaxTokens caps the tokens of one run, input (the whole
	// conversation, sent again at each step), output and cache summed
	// over every answer (--dream-max-tokens).
	DefaultMaxTokens = 1_000_000
	// DefaultMaxWrites caps the writing tool calls (memory_write,
	// memory_edit, memory_delete) of one run (--dream-max-writes).
	DefaultMaxWrites = 100
	// DefaultMaxTime caps the wall time of one run (--dream-max-time).
	DefaultMaxTime = 15 * time.Minute
	// DefaultConcurrency is how many dreams a worker runs at once
	// (--dream-concurrency); the core hands them out fairly between
	// workspaces.
	DefaultConcurrency = 2
	// DefaultLease is how long a claim lasts without renewal: a dream
	// whose worker died is resumed by another after at most this long.
	DefaultLease = 2 * time.Minute
	// DefaultPoll is how often an idle worker looks for a pending dream.
	DefaultPoll = 2 * time.Second
)

// releaseTimeout bounds the recording of a dream's end (or the release of
// its lease) once the worker is stopping.
const releaseTimeout = 10 * time.Second

// The error types a failed dream records, beside the core's
// (memstore.DreamErrorTimeout when the run reached its time cap,
// memstore.DreamErrorInternal) and the model endpoint's own (such as
// invalid_request_error or overloaded_error).
const (
	// ErrTypeLimit: the run reached its step, token or write cap, or an
	// answer was cut at its max_tokens or the model's context window.
	ErrTypeLimit = "limit_exceeded"
	// ErrTypeModel: the model's endpoint could not be reached, or the
	// model refused to go on.
	ErrTypeModel = "model_error"
)

// Options configure a Worker. Zero fields take the defaults.
type Options struct {
	// Model is the endpoint and key the dreams call; each dream names its
	// model (Model.Model is ignored).
	Model agentloop.Config
	// Limits cap each run of a dream.
	Limits      agentloop.Limits
	Concurrency int
	Lease       time.Duration
	Poll        time.Duration
	// Owner names the worker in its claims; "" makes a random one. Two
	// workers must never share one.
	Owner string
	// Logger hears of each dream's start and end (IDs, status and error
	// types only: never content); nil discards.
	Logger *slog.Logger
}

// A Worker runs the dreams of a core.
type Worker struct {
	core  *memstore.Core
	o     Options
	owner string
}

// New returns a worker of core's dreams.
func New(core *memstore.Core, o Options) *Worker {
	l := &o.Limits
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxTokens <= 0 {
		l.MaxTokens = DefaultMaxTokens
	}
	if l.MaxWrites <= 0 {
		l.MaxWrites = DefaultMaxWrites
	}
	if l.MaxTime <= 0 {
		l.MaxTime = DefaultMaxTime
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	owner := o.Owner
	if owner == "" {
		owner = "dreamer-" + rand.Text()
	}
	return &Worker{core: core, o: o, owner: owner}
}

// Owner is the name the worker claims dreams under.
func (w *Worker) Owner() string { return w.owner }

// Run claims and runs dreams until ctx ends, Options.Concurrency at once,
// then stops the dreams it runs, letting their leases go, and returns.
func (w *Worker) Run(ctx context.Context) {
	slots := make(chan struct{}, w.o.Concurrency)
	var running sync.WaitGroup
	defer running.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		d, err := w.core.ClaimDream(ctx, w.owner, w.o.Lease)
		if err != nil && ctx.Err() == nil {
			w.o.Logger.Warn("dream: claim failed", "err", err)
		}
		if d == nil {
			<-slots
			select {
			case <-time.After(w.o.Poll):
			case <-ctx.Done():
				return
			}
			continue
		}
		running.Go(func() {
			defer func() { <-slots }()
			w.runDream(ctx, d)
		})
	}
}

// RunOne claims one dream and runs it to its end (or until ctx ends),
// and reports whether there was one: for tests and tools that run dreams
// one at a time.
func (w *Worker) RunOne(ctx context.Context) (bool, error) {
	d, err := w.core.ClaimDream(ctx, w.owner, w.o.Lease)
	if err != nil || d == nil {
		return false, err
	}
	w.runDream(ctx, d)
	return true, nil
}

// Why a run stopped, besides the model's end and agentloop's errors.
var (
	errCanceled  = errors.New("the dream was canceled")
	errLeaseLost = errors.New("the dream's lease was lost to another worker")
	errRefused   = errors.New("the model refused to go on (stop_reason refusal)")
)

// run is one claimed dream's run.
type run struct {
	w      *Worker
	d      *memstore.Dream
	caller *memstore.Caller
	base   memstore.DreamUsage // the usage of earlier attempts

	mu    sync.Mutex
	usage memstore.DreamUsage // base and this run's, so far
}

func (r *run) total() memstore.DreamUsage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

func (r *run) setUsage(u agentloop.Usage) {
	r.mu.Lock()
	r.usage = r.base.Add(memstore.DreamUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens})
	r.mu.Unlock()
}

// runDream runs d, claimed by w, to its end: completed, failed or
// canceled, or let go when ctx ends (the worker stops) or the lease is
// lost.
func (w *Worker) runDream(ctx context.Context, d *memstore.Dream) {
	log := w.o.Logger.With("dream", d.ID, "workspace", d.WorkspaceID, "attempt", d.Attempts)
	r := &run{w: w, d: d, base: d.Usage, usage: d.Usage}
	if d.Status == memstore.DreamCanceled {
		// Canceled while its last worker ran it, which stopped: only its
		// end is left to record.
		r.finish(ctx, log, errCanceled)
		return
	}
	log.Info("dream: starting")
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	// The lease is renewed in the background too: one answer of a slow
	// model may take longer than a lease.
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(w.o.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				if err := r.renew(runCtx); err != nil {
					stop(err)
					return
				}
			}
		}
	}()
	err := r.do(runCtx)
	stop(nil)
	<-renewed
	if cause := context.Cause(runCtx); cause != nil && (errors.Is(cause, errCanceled) || errors.Is(cause, errLeaseLost)) && !errors.Is(err, errCanceled) && !errors.Is(err, errLeaseLost) {
		err = cause
	}
	r.finish(ctx, log, err)
}

// renew keeps the lease and records the usage so far: errCanceled when
// the dream was canceled, errLeaseLost when another worker holds it.
func (r *run) renew(ctx context.Context) error {
	canceled, err := r.w.core.RenewDream(ctx, r.d.ID, r.w.owner, r.w.o.Lease, r.total())
	switch {
	case err != nil && memstore.ErrorCode(err) == memstore.EConflict:
		return fmt.Errorf("%w: %v", errLeaseLost, err)
	case err != nil:
		// A passing failure of the database: the lease holds a while
		// yet, and the next renewal will tell if it was lost.
		if ctx.Err() == nil {
			r.w.o.Logger.Warn("dream: lease renewal failed", "dream", r.d.ID, "code", memstore.ErrorCode(err))
		}
		return nil
	case canceled:
		return errCanceled
	}
	return nil
}

// do begins the dream and runs the model on it.
func (r *run) do(ctx context.Context) error {
	caller, err := r.w.core.BeginDream(ctx, r.d, r.w.owner)
	if err != nil {
		if memstore.ErrorCode(err) == memstore.EConflict {
			return fmt.Errorf("%w: %v", errLeaseLost, err)
		}
		return err
	}
	r.caller = caller
	tools, err := agenttool.New(agenttool.Services{Memories: r.w.core, Search: r.w.core}, caller)
	if err != nil {
		return err
	}
	ts := toolset{tools}
	prompt, record, err := r.prompt(ctx, ts)
	if err != nil {
		return err
	}
	cfg := r.w.o.Model
	cfg.Model = r.d.Model.ID
	res, err := agentloop.Do(ctx, cfg, agentloop.Run{
		System: systemPrompt(r.d, caller.Session),
		Prompt: prompt,
		Tools:  ts,
		Limits: r.w.o.Limits,
		Step: func(s agentloop.StepInfo) error {
			r.setUsage(s.Usage)
			if s.Step == 1 && len(s.Messages) > 0 {
				s.Messages[0].Content = textContent(record)
			}
			r.record(ctx, s.Messages)
			return r.renew(ctx)
		},
	})
	r.setUsage(res.Usage)
	if err == nil && res.StopReason == "refusal" {
		return errRefused
	}
	return err
}

// textContent is a message's content of one text block.
func textContent(text string) json.RawMessage {
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	return b
}

// record keeps a step's messages in the dream's session transcript. A
// message the transcript refuses (over its limits) is logged and left
// out: the dream's work matters more than its record.
func (r *run) record(ctx context.Context, msgs []agentloop.Message) {
	turn := memstore.Turn{Messages: make([]memstore.TurnMessage, len(msgs))}
	for i, m := range msgs {
		turn.Messages[i] = memstore.TurnMessage{Role: m.Role, Content: m.Content}
	}
	if _, err := r.w.core.AppendSessionTurn(ctx, r.caller, r.d.SessionID, turn); err != nil && ctx.Err() == nil {
		r.w.o.Logger.Warn("dream: a step could not be kept in its session's transcript", "dream", r.d.ID, "session", r.d.SessionID, "code", memstore.ErrorCode(err))
	}
}

// finish records how the run ended. A run stopped by the worker's own
// stop lets its lease go, so that another worker resumes it at once; one
// whose lease was lost records nothing (its new worker will).
func (r *run) finish(ctx context.Context, log *slog.Logger, err error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	status, dreamErr := outcome(err)
	switch {
	case errors.Is(err, errLeaseLost):
		log.Warn("dream: lease lost; another worker has it")
		return
	case ctx.Err() != nil && status == memstore.DreamFailed && !isCap(err):
		// The worker is stopping: let the lease go at once.
		if _, rerr := r.w.core.RenewDream(fctx, r.d.ID, r.w.owner, time.Nanosecond, r.total()); rerr != nil {
			log.Warn("dream: could not let the lease go", "code", memstore.ErrorCode(rerr))
		}
		log.Info("dream: stopped with the server; it resumes when a worker claims it again")
		return
	}
	if ferr := r.w.core.FinishDream(fctx, r.d.ID, r.w.owner, status, r.total(), dreamErr); ferr != nil {
		log.Warn("dream: its end could not be recorded", "code", memstore.ErrorCode(ferr))
		return
	}
	if dreamErr != nil {
		if dreamErr.Type == memstore.DreamErrorInternal {
			log.Error("dream: failed", "err", err)
		}
		log.Info("dream: failed", "type", dreamErr.Type)
	} else {
		u := r.total()
		log.Info("dream: "+string(status), "input_tokens", u.InputTokens, "output_tokens", u.OutputTokens)
	}
}

func isCap(err error) bool {
	var ce *agentloop.CapError
	return errors.As(err, &ce)
}

// outcome is the final status of a run that ended with err, and the error
// a failed one records.
func outcome(err error) (memstore.DreamStatus, *memstore.DreamError) {
	var ce *agentloop.CapError
	var cut *agentloop.CutError
	var me *agentloop.ModelError
	switch {
	case err == nil:
		return memstore.DreamCompleted, nil
	case errors.Is(err, errCanceled):
		return memstore.DreamCanceled, nil
	case errors.As(err, &ce):
		typ := ErrTypeLimit
		if ce.Cap == agentloop.CapTime {
			typ = memstore.DreamErrorTimeout
		}
		return memstore.DreamFailed, &memstore.DreamError{Type: typ,
			Message: fmt.Sprintf("the dream stopped at its %s cap (%s; memstore serve %s): what it wrote so far stays in the output store", ce.Cap, ce.Limit, capFlags[ce.Cap])}
	case errors.As(err, &cut):
		return memstore.DreamFailed, &memstore.DreamError{Type: ErrTypeLimit,
			Message: "the dream stopped: " + cut.Error() + "; what it wrote so far stays in the output store"}
	case errors.Is(err, errRefused):
		return memstore.DreamFailed, &memstore.DreamError{Type: ErrTypeModel, Message: errRefused.Error() + "; what it wrote so far stays in the output store"}
	case errors.As(err, &me):
		typ := me.Type
		if typ == "" {
			typ = ErrTypeModel
		}
		return memstore.DreamFailed, &memstore.DreamError{Type: typ, Message: me.Error()}
	}
	var merr *memstore.Error
	if errors.As(err, &merr) {
		return memstore.DreamFailed, &memstore.DreamError{Type: merr.Code, Message: merr.Error()}
	}
	// Anything else may name internals: the log has it, the dream says
	// where to look.
	return memstore.DreamFailed, &memstore.DreamError{Type: memstore.DreamErrorInternal, Message: "the dream stopped on an internal error; the server's log has the details"}
}

// capFlags are the serve flags of the caps, for the errors that name them.
var capFlags = map[string]string{
	agentloop.CapSteps:  "--dream-max-steps",
	agentloop.CapTokens: "--dream-max-tokens",
	agentloop.CapWrites: "--dream-max-writes",
	agentloop.CapTime:   "--dream-max-time",
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dream"
	"github.com/memstore/memstore/internal/agentloop"
)

// dreamFlags configure the model that runs dreams, and the caps of each
// run. Dreams are on when a model endpoint is configured: a key, a base
// URL, or both.
type dreamFlags struct {
	baseURL     string
	keyFile     string
	maxSteps    count
	maxTokens   count
	maxWrites   count
	maxTime     duration
	concurrency count

	key string // read from keyFile or ANTHROPIC_API_KEY; never printed
}

// dreamEnv names the variable of each flag of dreamFlags. The model's
// endpoint and key take the variables the official SDKs read.
var dreamEnv = map[string]string{
	"model-base-url":     "ANTHROPIC_BASE_URL",
	"model-api-key-file": "MEMSTORE_MODEL_API_KEY_FILE",
	"dream-max-steps":    "MEMSTORE_DREAM_MAX_STEPS",
	"dream-max-tokens":   "MEMSTORE_DREAM_MAX_TOKENS",
	"dream-max-writes":   "MEMSTORE_DREAM_MAX_WRITES",
	"dream-max-time":     "MEMSTORE_DREAM_MAX_TIME",
	"dream-concurrency":  "MEMSTORE_DREAM_CONCURRENCY",
}

func (d *dreamFlags) register(fs *flag.FlagSet) {
	d.maxSteps, d.maxTokens, d.maxWrites = dream.DefaultMaxSteps, dream.DefaultMaxTokens, dream.DefaultMaxWrites
	d.maxTime, d.concurrency = duration(dream.DefaultMaxTime), dream.DefaultConcurrency
	fs.StringVar(&d.baseURL, "model-base-url", "", "run dreams with the Anthropic-compatible Messages API at `URL` (a gateway, a local model server); default Anthropic's API when a key is set (ANTHROPIC_BASE_URL)")
	fs.StringVar(&d.keyFile, "model-api-key-file", "", "read the model endpoint's API key from `FILE`; default the variable ANTHROPIC_API_KEY (MEMSTORE_MODEL_API_KEY_FILE)")
	fs.Var(&d.maxSteps, "dream-max-steps", fmt.Sprintf("cap on the model's answers in one run of a dream, `N`; 0 for the default of %d (MEMSTORE_DREAM_MAX_STEPS)", dream.DefaultMaxSteps))
	fs.Var(&d.maxTokens, "dream-max-tokens", fmt.Sprintf("cap on the tokens of one run of a dream, input, output and cache summed over its answers, `N`; 0 for the default of %d (MEMSTORE_DREAM_MAX_TOKENS)", dream.DefaultMaxTokens))
	fs.Var(&d.maxWrites, "dream-max-writes", fmt.Sprintf("cap on the memory writes, edits and deletes of one run of a dream, `N`; 0 for the default of %d (MEMSTORE_DREAM_MAX_WRITES)", dream.DefaultMaxWrites))
	fs.Var(&d.maxTime, "dream-max-time", "cap on the time of one run of a dream, `DURATION` (MEMSTORE_DREAM_MAX_TIME)")
	fs.Var(&d.concurrency, "dream-concurrency", fmt.Sprintf("dreams the server runs at once, `N`; 0 for the default of %d (MEMSTORE_DREAM_CONCURRENCY)", dream.DefaultConcurrency))
}

// resolve checks the flags and reads the key. It runs after the
// environment is applied. A cap given as 0 stays 0: the worker takes
// its default for it (dream.New).
func (d *dreamFlags) resolve(e env) error {
	key, err := modelEndpoint(e, "serve", d.baseURL, d.keyFile)
	if err != nil {
		return err
	}
	d.key = key
	return nil
}

// enabled reports whether the server runs dreams: it has a model
// endpoint, by a key or a base URL (a local server may need no key).
func (d *dreamFlags) enabled() bool { return d.key != "" || d.baseURL != "" }

// start runs the dream worker on core until the returned stop is called,
// which waits for the dreams in progress to let their leases go. Nothing
// runs when dreams are off.
func (d *dreamFlags) start(ctx context.Context, core *memstore.Core, log *slog.Logger) (stop func()) {
	if !d.enabled() {
		return func() {}
	}
	w := dream.New(core, dream.Options{
		Model: agentloop.Config{BaseURL: d.baseURL, APIKey: d.key},
		Limits: agentloop.Limits{MaxSteps: int(d.maxSteps), MaxTokens: int(d.maxTokens), MaxWrites: int(d.maxWrites),
			MaxTime: time.Duration(d.maxTime)},
		Concurrency: int(d.concurrency),
		Logger:      log,
	})
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var done sync.WaitGroup
	done.Go(func() { w.Run(wctx) })
	return func() { cancel(); done.Wait() }
}

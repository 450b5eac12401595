package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embedindex"
	"github.com/prometheus/client_golang/prometheus"
)

// embedFlags configure semantic search's embedding model: an
// OpenAI-compatible endpoint (--embed-url and --embed-model) or a local
// model2vec model (--embed-model-file). Semantic search is off when
// neither is set.
type embedFlags struct {
	url        string
	model      string
	keyFile    string
	dimensions count
	modelFile  string
	// weight is the semantic ranking's weight in hybrid search.
	weight float64
	// cmd names the command in messages ("serve" unless set).
	cmd string

	embedder memstore.Embedder // nil when off
}

// embedEnv names the variable of each flag of embedFlags. The key itself
// may also be in MEMSTORE_EMBED_API_KEY.
var embedEnv = map[string]string{
	"embed-url":              "MEMSTORE_EMBED_URL",
	"embed-model":            "MEMSTORE_EMBED_MODEL",
	"embed-api-key-file":     "MEMSTORE_EMBED_API_KEY_FILE",
	"embed-dimensions":       "MEMSTORE_EMBED_DIMENSIONS",
	"embed-model-file":       "MEMSTORE_EMBED_MODEL_FILE",
	"search-semantic-weight": "MEMSTORE_SEARCH_SEMANTIC_WEIGHT",
}

func (f *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "embed-url", "", "embed memories for semantic search with the OpenAI-compatible API at `URL` (such as http://localhost:11434/v1); needs --embed-model (MEMSTORE_EMBED_URL)")
	fs.StringVar(&f.model, "embed-model", "", "the embedding `MODEL` that --embed-url serves (MEMSTORE_EMBED_MODEL)")
	fs.StringVar(&f.keyFile, "embed-api-key-file", "", "read --embed-url's API key from `FILE`; default the variable MEMSTORE_EMBED_API_KEY, else none (MEMSTORE_EMBED_API_KEY_FILE)")
	fs.Var(&f.dimensions, "embed-dimensions", fmt.Sprintf("ask --embed-url for vectors of `N` dimensions, 1 to %d; 0 for the model's own (MEMSTORE_EMBED_DIMENSIONS)", embed.MaxDimensions))
	fs.StringVar(&f.modelFile, "embed-model-file", "", "embed memories with the model2vec model in `DIR` (model.safetensors, tokenizer.json, config.json), in the process (MEMSTORE_EMBED_MODEL_FILE)")
	fs.Float64Var(&f.weight, "search-semantic-weight", memstore.DefaultSemanticWeight, "the semantic ranking's weight `W` in hybrid search, 0 to 1, the lexical one's being 1-W (MEMSTORE_SEARCH_SEMANTIC_WEIGHT)")
}

// resolve checks the flags, reads the key and loads the model. It runs
// after the environment is applied.
func (f *embedFlags) resolve(e env) error {
	cmd := "memstore " + cmp.Or(f.cmd, "serve")
	if err := memstore.ValidateSemanticWeight(f.weight); err != nil {
		return usageError(e, "%s: %s", cmd, memstore.ErrorMessage(err))
	}
	switch {
	case f.url != "" && f.modelFile != "":
		return usageError(e, "%s: --embed-url and --embed-model-file both name a model; give one", cmd)
	case f.modelFile != "":
		if f.model != "" || f.keyFile != "" || f.dimensions != 0 {
			return usageError(e, "%s: --embed-model, --embed-api-key-file and --embed-dimensions go with --embed-url, not --embed-model-file", cmd)
		}
		m, err := embed.LoadModel2Vec(f.modelFile)
		if err != nil {
			return fmt.Errorf("cannot load the embedding model (--embed-model-file): %w", err)
		}
		f.embedder = m
	case f.url != "":
		key, err := f.key(e)
		if err != nil {
			return err
		}
		c, err := embed.NewOpenAI(embed.OpenAIConfig{URL: f.url, Model: f.model, APIKey: key, Dimensions: int(f.dimensions)})
		if err != nil {
			return usageError(e, "%s: --embed-url: %v", cmd, err)
		}
		f.embedder = c
	case f.model != "" || f.keyFile != "" || f.dimensions != 0:
		return usageError(e, "%s: --embed-model, --embed-api-key-file and --embed-dimensions need --embed-url", cmd)
	}
	return nil
}

// key reads the endpoint's key, never printed: from the key file, else
// MEMSTORE_EMBED_API_KEY, else none (a local server needs none).
func (f *embedFlags) key(e env) (string, error) {
	if f.keyFile == "" {
		return strings.TrimSpace(e.getenv("MEMSTORE_EMBED_API_KEY")), nil
	}
	b, err := os.ReadFile(f.keyFile)
	if err != nil {
		return "", fmt.Errorf("cannot read the embedding API key (--embed-api-key-file): %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("the embedding API key file %s (--embed-api-key-file) is empty", f.keyFile)
	}
	return key, nil
}

var errNoVectors = errors.New("semantic indexing is off: this database backend does not keep vectors yet")

// start runs the indexing worker until the returned stop is called, and
// reports its progress in /metrics. Nothing runs when semantic search is off.
func (f *embedFlags) start(ctx context.Context, db memstore.Database, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	if f.embedder == nil {
		return func() {}, nil
	}
	vs, ok := db.(memstore.VectorStorage)
	if !ok {
		return func() {}, errNoVectors
	}
	w := embedindex.New(embedindex.Config{Storage: vs, Embedder: f.embedder, Log: log})
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memstore_embeddings_computed_total", Help: "Vectors the indexing worker computed and stored."},
			func() float64 { return float64(w.Embedded()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memstore_embedding_failures_total", Help: "Batches the embedding model failed to embed."},
			func() float64 { return float64(w.Failures()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memstore_embeddings_dropped_total", Help: "Memories left without a vector: the embedding model refused their text every time."},
			func() float64 { return float64(w.Dropped()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memstore_embeddings_queued", Help: "Memories waiting for a vector."},
			func() float64 {
				_, q, err := vs.EmbeddingCounts(context.WithoutCancel(ctx))
				if err != nil {
					return -1
				}
				return float64(q)
			}),
	)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var done sync.WaitGroup
	done.Go(func() { w.Run(wctx) })
	return func() { cancel(); done.Wait() }, nil
}

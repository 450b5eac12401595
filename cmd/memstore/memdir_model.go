package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/memstore/memstore/dream"
	"github.com/memstore/memstore/internal/agentloop"
)

// modelFlags say which model a memdir command calls, and the caps of its
// run: the Anthropic-compatible Messages endpoint, its key and the model,
// from the same flags and variables as serve's dreams.
type modelFlags struct {
	baseURL, keyFile, model        string
	maxSteps, maxTokens, maxWrites count
	maxTime                        duration
}

// modelEnv names the variable of each flag of modelFlags.
var modelEnv = map[string]string{
	"model-base-url":     "ANTHROPIC_BASE_URL",
	"model-api-key-file": "MEMSTORE_MODEL_API_KEY_FILE",
	"model":              "ANTHROPIC_MODEL",
}

func addModelFlags(fs *flag.FlagSet) *modelFlags {
	// The caps of a store's dream (docs/dreams.md, The memory directory).
	m := &modelFlags{maxSteps: dream.DefaultMaxSteps, maxTokens: dream.DefaultMaxTokens, maxWrites: dream.DefaultMaxWrites, maxTime: duration(dream.DefaultMaxTime)}
	fs.StringVar(&m.baseURL, "model-base-url", "", "the Anthropic-compatible Messages API at `URL` (a gateway, a local model server); default Anthropic's (ANTHROPIC_BASE_URL)")
	fs.StringVar(&m.keyFile, "model-api-key-file", "", "read the endpoint's API key from `FILE`; default the variable ANTHROPIC_API_KEY (MEMSTORE_MODEL_API_KEY_FILE)")
	fs.StringVar(&m.model, "model", defaultDreamModel, "the model `ID` to call (ANTHROPIC_MODEL)")
	fs.Var(&m.maxSteps, "max-steps", "cap on the model's answers, `N`")
	fs.Var(&m.maxTokens, "max-tokens", "cap on the tokens, input, output and cache summed over the answers, `N`")
	fs.Var(&m.maxWrites, "max-writes", "cap on the memory tool's calls, `N`")
	fs.Var(&m.maxTime, "max-time", "cap on the run's time, `DURATION`")
	return m
}

// resolve checks the flags, after the environment is applied, and
// returns the endpoint's configuration and the run's caps. An error was
// reported and is the exit status.
func (m *modelFlags) resolve(e env, cmd string, fs *flag.FlagSet) (agentloop.Config, agentloop.Limits, error) {
	var cfg agentloop.Config
	var lim agentloop.Limits
	if err := applyEnv(e, cmd, fs, modelEnv); err != nil {
		return cfg, lim, err
	}
	if m.model == "" {
		return cfg, lim, usageError(e, "memstore %s: say which model to call: --model ID, or ANTHROPIC_MODEL", cmd)
	}
	key, err := modelEndpoint(e, cmd, m.baseURL, m.keyFile)
	if err != nil {
		return cfg, lim, err
	}
	if key == "" && m.baseURL == "" {
		return cfg, lim, usageError(e, "memstore %s: no model endpoint: set ANTHROPIC_API_KEY (or --model-api-key-file) for Anthropic's API, or --model-base-url for another", cmd)
	}
	for name, v := range map[string]count{"max-steps": m.maxSteps, "max-tokens": m.maxTokens, "max-writes": m.maxWrites} {
		if v <= 0 {
			return cfg, lim, usageError(e, "memstore %s: --%s must be 1 or more, not %d", cmd, name, v)
		}
	}
	if m.maxTime <= 0 {
		return cfg, lim, usageError(e, "memstore %s: --max-time must be positive", cmd)
	}
	cfg = agentloop.Config{BaseURL: m.baseURL, APIKey: key, Model: m.model}
	lim = agentloop.Limits{MaxSteps: int(m.maxSteps), MaxTokens: int(m.maxTokens), MaxWrites: int(m.maxWrites), MaxTime: time.Duration(m.maxTime)}
	return cfg, lim, nil
}

// usageJSON is a run's usage as --json prints it, in the Messages API's
// names.
type usageJSON struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func usageOf(u agentloop.Usage) usageJSON {
	return usageJSON{u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens}
}

// usageLine says what a run cost, for a person.
func usageLine(res agentloop.Result) string {
	u := res.Usage
	return fmt.Sprintf("%s; %d input and %d output tokens", plural(res.Steps, "step", "steps"), u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, u.OutputTokens)
}

// modelEndpoint checks the base URL of a model endpoint and reads its
// key, from keyFile or else ANTHROPIC_API_KEY ("" for none), for command
// cmd. The key is never printed.
func modelEndpoint(e env, cmd, baseURL, keyFile string) (key string, err error) {
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", usageError(e, "memstore %s: --model-base-url (ANTHROPIC_BASE_URL) must be an http or https URL, such as https://api.anthropic.com", cmd)
		}
		if u.User != nil {
			return "", usageError(e, "memstore %s: --model-base-url (ANTHROPIC_BASE_URL) must not hold credentials; put the key in --model-api-key-file or ANTHROPIC_API_KEY", cmd)
		}
	}
	if keyFile == "" {
		return strings.TrimSpace(e.getenv("ANTHROPIC_API_KEY")), nil
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return "", fmt.Errorf("cannot read the model's API key (--model-api-key-file): %w", err)
	}
	if key = strings.TrimSpace(string(b)); key == "" {
		return "", fmt.Errorf("the model's API key file %s (--model-api-key-file) is empty", keyFile)
	}
	return key, nil
}

package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Limits of the endpoint client.
const (
	// MaxResponseBytes bounds an endpoint's answer: a full batch of the
	// largest vectors, written as JSON numbers, fits well within it.
	MaxResponseBytes = 32 << 20
	// DefaultTimeout bounds one request to the endpoint.
	DefaultTimeout = 60 * time.Second
	// maxErrorText bounds the message of an endpoint's error quoted back.
	maxErrorText = 200
	// echoRun is the shortest run of bytes a quoted message may not share
	// with the texts sent: an endpoint may echo its input (memories) in
	// its error, and the error reaches logs.
	echoRun = 12
)

// OpenAIConfig configures a client of an OpenAI-compatible embeddings API.
type OpenAIConfig struct {
	// URL is the API's base URL (http://localhost:11434/v1); requests go to
	// URL + "/embeddings". A URL that already ends in /embeddings is used
	// as it is.
	URL   string
	Model string
	// APIKey, when set, is sent as a bearer token, to URL only.
	APIKey string
	// Dimensions, when set, is asked of the endpoint and checked in every
	// answer; when 0 it is learned from the first answer.
	Dimensions int
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient, when set, is copied; its redirect policy is replaced.
	HTTPClient *http.Client
}

// OpenAI embeds texts with an OpenAI-compatible /v1/embeddings endpoint.
type OpenAI struct {
	endpoint string
	model    string
	key      string
	asked    int // dimensions sent in each request, 0 for none
	client   *http.Client

	mu   sync.Mutex
	dims int
}

// NewOpenAI checks cfg and returns a client; it makes no request.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embedding URL %q is not an http or https URL; give the API's base URL, such as http://localhost:11434/v1", cfg.URL)
	}
	if u.User != nil {
		return nil, errors.New("embedding URL holds a user name or password; give the key with the API key file or its environment variable instead")
	}
	// The URL is named in errors, which reach logs: it must hold no key,
	// and a query (where some services take one) is not where memstore
	// sends anything.
	if u.RawQuery != "" || u.Fragment != "" || strings.Contains(cfg.URL, "?") {
		return nil, errors.New("embedding URL holds a query or fragment; give the API's base URL alone, and the key with the API key file or its environment variable")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("no embedding model named; set the model the endpoint serves (such as nomic-embed-text)")
	}
	if cfg.Dimensions < 0 || cfg.Dimensions > MaxDimensions {
		return nil, fmt.Errorf("embedding dimensions %d out of range: 1 to %d, or 0 to take the model's own", cfg.Dimensions, MaxDimensions)
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return nil, errors.New("the embedding API key holds a line break; the key file must hold the key alone")
	}
	endpoint := strings.TrimRight(u.String(), "/")
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	c := &http.Client{}
	if cfg.HTTPClient != nil {
		*c = *cfg.HTTPClient
	}
	// A redirect is refused: Go would resend the Authorization header and
	// the texts (memories) to whatever host it names.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	c.Timeout = cfg.Timeout
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return &OpenAI{endpoint: endpoint, model: cfg.Model, key: cfg.APIKey, asked: cfg.Dimensions, dims: cfg.Dimensions, client: c}, nil
}

var errRedirect = errors.New("answered with a redirect, which is not followed; set the embedding URL to the address that answers")

// Model is the model's name as the endpoint knows it.
func (o *OpenAI) Model() string { return o.model }

// Dimensions is the configured length, or the one learned from the first
// answer (0 before it).
func (o *OpenAI) Dimensions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dims
}

// Probe embeds one short text, so that Dimensions is known and a wrong
// URL, model or key shows at start rather than at the first write.
func (o *OpenAI) Probe(ctx context.Context) error {
	_, err := o.Embed(ctx, []string{"memstore"})
	return err
}

// Embed sends texts in batches of MaxBatch and returns their vectors.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += MaxBatch {
		batch := texts[start:min(start+MaxBatch, len(texts))]
		vs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	// Error is OpenAI's {"message": ...} or, from Ollama and others, a
	// string.
	Error json.RawMessage `json:"error"`
}

// errorMessage is the message of an error answer, "" when it has none.
func errorMessage(raw []byte) string {
	var ans embeddingsResponse
	if json.Unmarshal(raw, &ans) != nil || len(ans.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(ans.Error, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(ans.Error, &obj) == nil {
		return obj.Message
	}
	return ""
}

func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: o.model, Input: texts, EncodingFormat: "float", Dimensions: o.asked})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
	res, err := o.client.Do(req)
	if err != nil {
		return nil, o.fail(o.scrub(err.Error()))
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, o.fail("answer could not be read: " + o.scrub(err.Error()))
	}
	if len(raw) > MaxResponseBytes {
		return nil, o.fail(fmt.Sprintf("sent an answer over %d bytes, which is not read; check the embedding URL", MaxResponseBytes))
	}
	if res.StatusCode != http.StatusOK {
		// Only the message of a JSON error is quoted, never the rest of
		// the body, which may echo the texts.
		msg := o.quote(errorMessage(raw), texts)
		return nil, &StatusError{Status: res.StatusCode, err: o.fail(fmt.Sprintf("answered %s: %s", res.Status, msg))}
	}
	var ans embeddingsResponse
	jerr := json.Unmarshal(raw, &ans)
	if jerr != nil {
		return nil, o.fail("answered with JSON that is not an embeddings answer: " + o.scrub(jerr.Error()))
	}
	vs := make([][]float32, len(texts))
	for i, d := range ans.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(texts) || vs[at] != nil {
			return nil, o.fail(fmt.Sprintf("answered with an embedding index %d that is out of range or repeated", at))
		}
		vs[at] = d.Embedding
	}
	if len(ans.Data) != len(texts) {
		return nil, o.fail(fmt.Sprintf("returned %d vectors for %d texts", len(ans.Data), len(texts)))
	}
	o.mu.Lock()
	if o.dims == 0 && len(vs[0]) > 0 && len(vs[0]) <= MaxDimensions {
		o.dims = len(vs[0])
	}
	dims := o.dims
	o.mu.Unlock()
	if dims == 0 {
		return nil, o.fail(fmt.Sprintf("returned vectors of %d dimensions; memstore keeps 1 to %d", len(vs[0]), MaxDimensions))
	}
	if err := checkVectors(vs, len(texts), dims); err != nil {
		return nil, o.fail(err.Error())
	}
	return vs, nil
}

// StatusError is an endpoint's answer other than 200 OK; Refused says
// whether it refused the texts themselves.
type StatusError struct {
	Status int
	err    error
}

func (e *StatusError) Error() string { return e.err.Error() }
func (e *StatusError) Unwrap() error { return e.err }

// Refused is true for answers that say the texts themselves are wrong
// (400, 413, 422). A wrong key or model name (401, 403, 404) is not: once
// fixed, the same texts embed.
func (e *StatusError) Refused() bool {
	return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge || e.Status == http.StatusUnprocessableEntity
}

func (o *OpenAI) fail(msg string) error {
	return fmt.Errorf("embedding endpoint %s (model %s): %s", o.endpoint, o.model, msg)
}

// scrub removes the key from a text that may quote the request: some
// servers echo a wrong key in their error.
func (o *OpenAI) scrub(s string) string {
	if o.key != "" {
		s = strings.ReplaceAll(s, o.key, "[key]")
	}
	return s
}

// quote bounds and scrubs an error message from the endpoint, and
// withholds it when it repeats a run of the texts sent.
func (o *OpenAI) quote(s string, texts []string) string {
	s = strings.TrimSpace(o.scrub(s))
	if len(s) > maxErrorText {
		s = strings.ToValidUTF8(s[:maxErrorText], "") + "..."
	}
	switch {
	case s == "":
		return "(no error message; the endpoint's own log may say more)"
	case echoes(s, texts):
		return "(message withheld: it quotes the texts sent; the endpoint's own log may say more)"
	}
	return s
}

// echoes says whether msg shares a run of echoRun bytes with a text.
func echoes(msg string, texts []string) bool {
	if len(msg) < echoRun {
		return false
	}
	runs := make(map[string]struct{}, len(msg))
	for i := 0; i+echoRun <= len(msg); i++ {
		runs[msg[i:i+echoRun]] = struct{}{}
	}
	for _, t := range texts {
		for i := 0; i+echoRun <= len(t); i++ {
			if _, ok := runs[t[i:i+echoRun]]; ok {
				return true
			}
		}
	}
	return false
}

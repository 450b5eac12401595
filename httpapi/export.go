package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sse"
)

// The export stream, GET /v1/memory_stores/{id}/memories/export
// (docs/api.md, Export): a store's live memories as newline-delimited
// JSON in one request, one snapshot, the hosted API's route that Claude
// Code mounts a store with. The view=full stream (the default) is a
// store line, one memory line per memory with its content, and a
// complete line; view=basic leaves the content out. A stream without its
// complete line failed: a client reads it as unfinished. The core decides
// who may export and bounds how long and how many (memstore.ExportHold).

// The types of the lines of an export.
const (
	exportStore       = "store"
	exportMemory      = "memory"
	exportMemoryError = "memory_error"
	exportComplete    = "complete"
)

// exportChunk is how many bytes of lines the server gathers before it
// writes and flushes them: each write is bounded in time (sse.Writer),
// so a client that stops reading lets the export go.
const exportChunk = 32 << 10

// ExportStoreJSON is the first line of an export: the store it is of.
type ExportStoreJSON struct {
	Type        string     `json:"type"` // "store"
	View        string     `json:"view"` // "full" or "basic"
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	ArchivedAt  *Timestamp `json:"archived_at"`
}

// ExportMemoryJSON is a memory line of the full view: all six fields
// are always there (content may be "").
type ExportMemoryJSON struct {
	Type          string    `json:"type"` // "memory"
	ID            string    `json:"id"`
	Path          string    `json:"path"`
	Content       string    `json:"content"`
	ContentSHA256 string    `json:"content_sha256"`
	UpdatedAt     Timestamp `json:"updated_at"`
}

// ExportMemoryBasicJSON is a memory line of the basic view.
type ExportMemoryBasicJSON struct {
	Type          string `json:"type"` // "memory"
	ID            string `json:"id"`
	Path          string `json:"path"`
	ContentSHA256 string `json:"content_sha256"`
	ContentSize   int64  `json:"content_size_bytes"`
}

// ExportCompleteJSON is the last line of an export that succeeded:
// MemoryCount memory lines and ErrorCount memory_error lines came
// before it.
type ExportCompleteJSON struct {
	Type        string `json:"type"` // "complete"
	MemoryCount int64  `json:"memory_count"`
	ErrorCount  int64  `json:"error_count"`
}

// exportMemories serves GET .../memories/export. What can be refused
// (the caller, the view, the store, too many exports) is refused before
// the first byte, as an ordinary error; a failure after it ends the
// stream without its complete line, which the client reads as failed.
func (s *Server) exportMemories(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(true)
	if p.err != nil {
		return p.err
	}
	ctx, cancel := streamContext(r, c)
	defer cancel()
	storeID := r.PathValue("memory_store_id")
	// A credential revoked, or a store detached from the session, ends
	// the export in progress, as it ends an event stream.
	defer s.held.Hold(ctx, c, storeID, cancel)()
	x := &exportWriter{w: w, full: full}
	err := s.exports.ExportMemories(ctx, c, storeID, full, x)
	if x.sw == nil {
		return err // nothing sent yet: an ordinary answer
	}
	if err == nil {
		err = x.finish()
	}
	if err != nil {
		// The stream ends unfinished. Never the content, only why.
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "export ended unfinished",
			slog.String("request_id", w.requestID), slog.String("memory_store_id", storeID), slog.String("error", err.Error()))
	}
	return nil
}

// exportWriter writes an export's lines as the core hands it the store
// and its memories, a chunk at a time.
type exportWriter struct {
	w    *responseWriter
	full bool
	sw   *sse.Writer // nil until the first line
	buf  bytes.Buffer
	n    int64 // memory lines
}

// Store implements memstore.ExportSink: the answer starts.
func (x *exportWriter) Store(st *memstore.Store) error {
	h := x.w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer would hold the stream back
	h.Del("Content-Length")
	x.sw = sse.NewWriter(x.w)
	x.sw.WriteHeader(http.StatusOK)
	view := "basic"
	if x.full {
		view = "full"
	}
	return x.line(ExportStoreJSON{Type: exportStore, View: view, ID: st.ID, Name: st.Name, Description: st.Description, ArchivedAt: timestampPtr(st.ArchivedAt)})
}

// Memory implements memstore.ExportSink.
func (x *exportWriter) Memory(m *memstore.Memory) error {
	x.n++
	if x.full {
		return x.line(ExportMemoryJSON{Type: exportMemory, ID: m.ID, Path: m.Path, Content: m.Content, ContentSHA256: m.ContentSHA256, UpdatedAt: Timestamp(m.UpdatedAt)})
	}
	return x.line(ExportMemoryBasicJSON{Type: exportMemory, ID: m.ID, Path: m.Path, ContentSHA256: m.ContentSHA256, ContentSize: m.ContentSize})
}

// finish sends the complete line and what is left.
func (x *exportWriter) finish() error {
	if err := encodeJSON(&x.buf, ExportCompleteJSON{Type: exportComplete, MemoryCount: x.n}); err != nil {
		return err
	}
	return x.flush()
}

// line adds one line, sending the chunk once it is full.
func (x *exportWriter) line(v any) error {
	if err := encodeJSON(&x.buf, v); err != nil {
		return err
	}
	if x.buf.Len() < exportChunk {
		return nil
	}
	return x.flush()
}

func (x *exportWriter) flush() error {
	_, err := x.sw.Write(x.buf.Bytes())
	x.buf.Reset()
	return err
}

// Package yardstick is the floor that `memstore bench --compare` measures
// memstore against: the least server that answers the requests of the
// bench's mixes (create and delete a store; create, update, delete, get
// and list memories) with the JSON memstore gives for them. It has no
// authentication (any API key is accepted), no search, no change feed,
// no limits but a body size, no sessions: whatever memstore costs beyond
// it is the price of those.
//
// Three engines: "sqlite", one transaction of an INSERT, UPDATE or
// DELETE plus a version row per write, on memstore's SQLite driver and
// with its pragmas; "postgres", the same in one statement per write, on
// pgx; "map", the simplest credible server over an in-memory map under
// one lock. Keep it short: its worth is being obviously minimal.
package yardstick

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/httpstatus"
	"github.com/memstore/memstore/internal/ids"
)

// The engines.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
	EngineMap      = "map"
)

// maxBody bounds a request's body: memstore's own limit on a memory's
// content is far below it.
const maxBody = 4 << 20

// engine keeps stores and memories. Memories are memstore.Memory, stores
// memstore.Store, so that httpapi writes them as memstore does.
type engine interface {
	createStore(ctx context.Context, s *memstore.Store) error
	deleteStore(ctx context.Context, id string) error
	// create stores m; update changes m.ID's content to m's and fills in
	// m's path and creation time; delete removes a memory. Each writes a
	// version row (the map engine keeps none).
	create(ctx context.Context, m *memstore.Memory) error
	update(ctx context.Context, m *memstore.Memory) error
	delete(ctx context.Context, storeID, id, versionID string, at time.Time) error
	get(ctx context.Context, storeID, id string) (*memstore.Memory, error)
	// list is up to limit memories of the store by path, after the path
	// after, without content.
	list(ctx context.Context, storeID, after string, limit int) ([]memstore.Memory, error)
	close() error
}

// Server is the yardstick's HTTP handler.
type Server struct {
	http.Handler
	e   engine
	ids *ids.Generator
}

// New opens a yardstick of engine; db is the SQLite engine's database
// file, made if missing, or the PostgreSQL engine's database URL, whose
// tables are made if missing.
func New(ctx context.Context, engineName, db string) (*Server, error) {
	s := &Server{ids: ids.NewGenerator()}
	switch engineName {
	case EngineSQLite:
		if db == "" {
			return nil, errors.New("the sqlite engine needs a database file (--db FILE)")
		}
		e, err := openSQLite(ctx, db)
		if err != nil {
			return nil, err
		}
		s.e = e
	case EnginePostgres:
		if db == "" {
			return nil, errors.New("the postgres engine needs a database URL (--db postgres://...)")
		}
		e, err := openPostgres(ctx, db)
		if err != nil {
			return nil, err
		}
		s.e = e
	case EngineMap:
		s.e = newMapEngine()
	default:
		return nil, fmt.Errorf("unknown engine %q: want %s, %s or %s", engineName, EngineSQLite, EnginePostgres, EngineMap)
	}
	mux := http.NewServeMux()
	const base = "/v1/memory_stores/{store}"
	mux.HandleFunc("POST /v1/memory_stores", s.handle(s.createStore))
	mux.HandleFunc("DELETE "+base, s.handle(s.deleteStore))
	mux.HandleFunc("POST "+base+"/memories", s.handle(s.createMemory))
	mux.HandleFunc("GET "+base+"/memories", s.handle(s.listMemories))
	mux.HandleFunc("GET "+base+"/memories/{id}", s.handle(s.getMemory))
	mux.HandleFunc("POST "+base+"/memories/{id}", s.handle(s.updateMemory))
	mux.HandleFunc("DELETE "+base+"/memories/{id}", s.handle(s.deleteMemory))
	mux.HandleFunc("GET "+base+"/memories/search", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotImplemented, "not_implemented_error", "the yardstick does not search: compare the search mix between memstore servers only")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, memstore.ENotFound, fmt.Sprintf("the yardstick serves only the requests of memstore bench's mixes, not %s %s", r.Method, r.URL.Path))
	})
	s.Handler = mux
	return s, nil
}

// Close closes the engine.
func (s *Server) Close() error { return s.e.close() }

// handle runs h and answers its error as memstore would.
func (s *Server) handle(h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		v, err := h(r)
		if err != nil {
			code := memstore.ErrorCode(err)
			e := httpapi.ErrorJSON{Type: "error", Error: httpapi.ErrorDetail{Type: code, Message: memstore.ErrorMessage(err)}}
			if me := (*memstore.Error)(nil); errors.As(err, &me) && me.ConflictingMemoryID != "" {
				e.Error.ConflictingMemoryID, e.Error.ConflictingPath = &me.ConflictingMemoryID, &me.ConflictingPath
			}
			writeJSON(w, httpstatus.Of(code), e)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// writeJSON writes v as memstore does: HTML characters unescaped, a
// final newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"type":"error","error":{"type":"api_error","message":"encode"}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, httpapi.ErrorJSON{Type: "error", Error: httpapi.ErrorDetail{Type: code, Message: message}})
}

func decode(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return memstore.Errorf(memstore.EInvalid, "the body is not the JSON object expected: %v", err)
	}
	return nil
}

func (s *Server) createStore(r *http.Request) (any, error) {
	var req httpapi.StoreCreateRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Name == nil || *req.Name == "" {
		return nil, memstore.Errorf(memstore.EInvalid, "name is required")
	}
	now := time.Now().UTC()
	st := &memstore.Store{ID: s.ids.New(memstore.StoreIDPrefix, now), Name: *req.Name, CreatedAt: now, UpdatedAt: now}
	if err := s.e.createStore(r.Context(), st); err != nil {
		return nil, err
	}
	return httpapi.NewStoreJSON(st), nil
}

func (s *Server) deleteStore(r *http.Request) (any, error) {
	id := r.PathValue("store")
	if err := s.e.deleteStore(r.Context(), id); err != nil {
		return nil, err
	}
	return httpapi.StoreDeleted(id), nil
}

func (s *Server) createMemory(r *http.Request) (any, error) {
	var req httpapi.MemoryCreateRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Path == nil || req.Content == nil {
		return nil, memstore.Errorf(memstore.EInvalid, "path and content are required")
	}
	now := time.Now().UTC()
	m := &memstore.Memory{
		ID: s.ids.New(memstore.MemoryIDPrefix, now), StoreID: r.PathValue("store"), Path: *req.Path,
		VersionID: s.ids.New(memstore.VersionIDPrefix, now), CreatedAt: now, UpdatedAt: now,
	}
	setContent(m, *req.Content)
	if err := s.e.create(r.Context(), m); err != nil {
		return nil, err
	}
	return httpapi.NewMemoryJSON(m, false), nil
}

func (s *Server) updateMemory(r *http.Request) (any, error) {
	var req httpapi.MemoryUpdateRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Content == nil || req.Path != nil || req.Precondition != nil {
		return nil, memstore.Errorf(memstore.EInvalid, "the yardstick updates content only: send content, without path or precondition")
	}
	now := time.Now().UTC()
	m := &memstore.Memory{ID: r.PathValue("id"), StoreID: r.PathValue("store"), VersionID: s.ids.New(memstore.VersionIDPrefix, now), UpdatedAt: now}
	setContent(m, *req.Content)
	if err := s.e.update(r.Context(), m); err != nil {
		return nil, err
	}
	return httpapi.NewMemoryJSON(m, false), nil
}

func (s *Server) deleteMemory(r *http.Request) (any, error) {
	now := time.Now().UTC()
	id := r.PathValue("id")
	if err := s.e.delete(r.Context(), r.PathValue("store"), id, s.ids.New(memstore.VersionIDPrefix, now), now); err != nil {
		return nil, err
	}
	return httpapi.MemoryDeleted(id), nil
}

func (s *Server) getMemory(r *http.Request) (any, error) {
	m, err := s.e.get(r.Context(), r.PathValue("store"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return httpapi.NewMemoryJSON(m, true), nil
}

// listMemories pages by path; the cursor is the last path of the page.
func (s *Server) listMemories(r *http.Request) (any, error) {
	limit := memstore.DefaultPageSize
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > memstore.MaxPageSize {
			return nil, memstore.Errorf(memstore.EInvalid, "limit must be an integer from 1 to %d, not %q", memstore.MaxPageSize, v)
		}
		limit = n
	}
	ms, err := s.e.list(r.Context(), r.PathValue("store"), r.URL.Query().Get("page"), limit+1)
	if err != nil {
		return nil, err
	}
	page := httpapi.PageJSON[httpapi.MemoryJSON]{Data: make([]httpapi.MemoryJSON, 0, len(ms))}
	if len(ms) > limit {
		ms = ms[:limit]
		next := ms[limit-1].Path
		page.NextPage = &next
	}
	for i := range ms {
		page.Data = append(page.Data, httpapi.NewMemoryJSON(&ms[i], false))
	}
	return page, nil
}

// pathTaken is the refusal of a create at the path of memory id.
func pathTaken(id, path string) error {
	return &memstore.Error{Code: memstore.EPathConflict, Message: "a memory already has path " + path, ConflictingMemoryID: id, ConflictingPath: path}
}

func setContent(m *memstore.Memory, content string) {
	sum := sha256.Sum256([]byte(content))
	m.Content, m.ContentSHA256, m.ContentSize = content, hex.EncodeToString(sum[:]), int64(len(content))
}

package httpapi

import (
	"net/http"

	"github.com/memstore/memstore"
)

// storeCreateBody is the body of a store create as the server reads it:
// metadata values are pointers so that a null value, which only an update
// may send (to remove a key), is refused rather than read as "".
type storeCreateBody struct {
	StoreCreateRequest
	Metadata map[string]*string `json:"metadata"`
}

// createStore serves POST /v1/memory_stores (#1).
func (s *Server) createStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var req storeCreateBody
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return invalid("name is required")
	}
	sc := memstore.StoreCreate{Name: *req.Name, Metadata: make(map[string]string, len(req.Metadata))}
	if req.Description != nil {
		sc.Description = *req.Description
	}
	for k, v := range req.Metadata {
		if v == nil {
			return invalid("metadata.%s must be a string, not null", k)
		}
		sc.Metadata[k] = *v
	}
	st, err := s.stores.CreateStore(r.Context(), c, sc)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewStoreJSON(st))
	return nil
}

// listStores serves GET /v1/memory_stores (#2), newest first.
func (s *Server) listStores(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	f := memstore.StoreFilter{
		IncludeArchived: p.boolean("include_archived"),
		CreatedAtGTE:    p.createdAt("gte"),
		CreatedAtLTE:    p.createdAt("lte"),
		Limit:           p.limit(false),
		Page:            p.get("page"),
	}
	if p.err != nil {
		return p.err
	}
	page, err := s.stores.Stores(r.Context(), c, f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewStoreJSON))
	return nil
}

// getStore serves GET /v1/memory_stores/{id} (#3), archived stores too.
func (s *Server) getStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	st, err := s.stores.Store(r.Context(), c, r.PathValue("memory_store_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewStoreJSON(st))
	return nil
}

// updateStore serves POST /v1/memory_stores/{id} (#4): absent or null
// fields stay, metadata is a merge patch.
func (s *Server) updateStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var req StoreUpdateRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	st, err := s.stores.UpdateStore(r.Context(), c, r.PathValue("memory_store_id"),
		memstore.StoreUpdate{Name: req.Name, Description: req.Description, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewStoreJSON(st))
	return nil
}

// deleteStore serves DELETE /v1/memory_stores/{id} (#5).
func (s *Server) deleteStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	id := r.PathValue("memory_store_id")
	if err := s.stores.DeleteStore(r.Context(), c, id); err != nil {
		return err
	}
	s.kept.clear() // the store's memories are gone: forget their content
	s.writeJSON(w, http.StatusOK, StoreDeleted(id))
	return nil
}

// archiveStore serves POST /v1/memory_stores/{id}/archive (#6).
func (s *Server) archiveStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	st, err := s.stores.ArchiveStore(r.Context(), c, r.PathValue("memory_store_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewStoreJSON(st))
	return nil
}

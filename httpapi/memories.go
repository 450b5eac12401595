package httpapi

import (
	"bytes"
	"net/http"

	"github.com/memstore/memstore"
)

// precondition reads the precondition of a create or update body
// (docs/api.md, Preconditions): a content hash to match (content_sha256,
// in lowercase) or not_exists; nil is neither.
func precondition(p *Precondition) (sha string, notExists bool, err error) {
	if p == nil {
		return "", false, nil
	}
	switch p.Type {
	case PreconditionSHA256:
		if p.ContentSHA256 == nil {
			return "", false, invalid("precondition.content_sha256 is required with precondition type %s", PreconditionSHA256)
		}
		sha, err = checkSHA256("precondition.content_sha256", *p.ContentSHA256)
		return sha, false, err
	case PreconditionNotExists:
		if p.ContentSHA256 != nil {
			return "", false, invalid("precondition type %s takes no content_sha256", PreconditionNotExists)
		}
		return "", true, nil
	}
	return "", false, invalid("precondition.type must be %s or %s, not %q", PreconditionSHA256, PreconditionNotExists, p.Type)
}

// createMemory serves POST .../memories (#7). An occupied path is a 409
// memory_path_conflict_error, or replaced in upsert mode; not_exists makes
// it a 409 memory_precondition_failed_error.
func (s *Server) createMemory(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(false)
	if p.err != nil {
		return p.err
	}
	var req MemoryCreateRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	switch {
	case req.Path == nil:
		return invalid("path is required")
	case req.Content == nil:
		return invalid(`content is required (send "" for an empty memory)`)
	}
	sha, notExists, err := precondition(req.Precondition)
	if err != nil {
		return err
	}
	if sha != "" {
		return invalid("a create takes only the precondition type %s; %s applies to updates", PreconditionNotExists, PreconditionSHA256)
	}
	m, err := s.memories.CreateMemory(r.Context(), c, r.PathValue("memory_store_id"),
		memstore.MemoryCreate{Path: *req.Path, Content: *req.Content, IfNotExists: notExists, Upsert: s.upsert})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewMemoryJSON(m, full))
	return nil
}

// listMemories serves GET .../memories (#8): by path, with prefixes for
// what lies deeper than depth. path_prefix goes to the backend as given.
func (s *Server) listMemories(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(false)
	f := memstore.MemoryFilter{
		PathPrefix: p.get("path_prefix"),
		Depth:      p.depth(),
		Full:       full,
		Limit:      p.limit(full),
		Page:       p.get("page"),
	}
	if p.err != nil {
		return p.err
	}
	page, err := s.memories.Memories(r.Context(), c, r.PathValue("memory_store_id"), f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, func(it *memstore.ListItem) ListItemJSON { return NewListItemJSON(it, full) }))
	return nil
}

// getMemory serves GET .../memories/{id} (#9), with content by default.
func (s *Server) getMemory(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(true)
	if p.err != nil {
		return p.err
	}
	storeID, id := r.PathValue("memory_store_id"), r.PathValue("memory_id")
	rv, revalidates := s.memories.(memstore.MemoryRevalidator)
	if !revalidates || !full {
		m, err := s.memories.Memory(r.Context(), c, storeID, id)
		if err != nil {
			return err
		}
		s.writeJSON(w, http.StatusOK, NewMemoryJSON(m, full))
		return nil
	}
	kept := s.kept.get(id)
	m, err := rv.MemoryUnlessAt(r.Context(), c, storeID, id, kept.version)
	switch {
	case memstore.ErrorCode(err) == memstore.ENotFound:
		s.kept.drop(id)
		return err
	case err != nil:
		return err
	case m == nil:
		writeBody(w, http.StatusOK, kept.body)
		return nil
	}
	var body bytes.Buffer
	if err := encodeJSON(&body, NewMemoryJSON(m, true)); err != nil {
		return err
	}
	s.kept.put(id, m.VersionID, body.Bytes())
	writeBody(w, http.StatusOK, body.Bytes())
	return nil
}

// updateMemory serves POST, PATCH or PUT .../memories/{id} (#10).
func (s *Server) updateMemory(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(false)
	if p.err != nil {
		return p.err
	}
	var req MemoryUpdateRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	sha, notExists, err := precondition(req.Precondition)
	if err != nil {
		return err
	}
	if notExists && req.Path == nil {
		return invalid("precondition type %s guards a rename and needs path", PreconditionNotExists)
	}
	m, err := s.memories.UpdateMemory(r.Context(), c, r.PathValue("memory_store_id"), r.PathValue("memory_id"),
		memstore.MemoryUpdate{Content: req.Content, Path: req.Path, IfSHA256: sha, RenameIfFree: notExists})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewMemoryJSON(m, full))
	return nil
}

// deleteMemory serves DELETE .../memories/{id} (#11). The hash to match
// comes from the query, or from a JSON body; both must agree.
func (s *Server) deleteMemory(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	sha := p.sha256("expected_content_sha256")
	if p.err != nil {
		return p.err
	}
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var body struct {
		ExpectedContentSHA256 string `json:"expected_content_sha256"`
	}
	if err := unmarshalOptional(b, &body); err != nil {
		return err
	}
	if body.ExpectedContentSHA256 != "" {
		h, err := checkSHA256("expected_content_sha256", body.ExpectedContentSHA256)
		if err != nil {
			return err
		}
		if sha != "" && sha != h {
			return invalid("expected_content_sha256 differs between the query and the body; send one")
		}
		sha = h
	}
	id := r.PathValue("memory_id")
	if err := s.memories.DeleteMemory(r.Context(), c, r.PathValue("memory_store_id"), id, sha); err != nil {
		return err
	}
	s.kept.drop(id)
	s.writeJSON(w, http.StatusOK, MemoryDeleted(id))
	return nil
}

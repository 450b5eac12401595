package httpapi

import (
	"net/http"

	"github.com/memstore/memstore"
)

// listVersions serves GET .../memory_versions (#12), newest first; the
// filters AND together.
func (s *Server) listVersions(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(false)
	f := memstore.VersionFilter{
		MemoryID:         p.get("memory_id"),
		Operation:        p.operation(),
		SessionID:        p.get("session_id"),
		APIKeyID:         p.get("api_key_id"),
		ServiceAccountID: p.get("service_account_id"),
		CreatedAtGTE:     p.createdAt("gte"),
		CreatedAtLTE:     p.createdAt("lte"),
		Full:             full,
		Limit:            p.limit(full),
		Page:             p.get("page"),
	}
	if p.err != nil {
		return p.err
	}
	page, err := s.versions.Versions(r.Context(), c, r.PathValue("memory_store_id"), f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, func(v *memstore.Version) VersionJSON { return NewVersionJSON(v, full) }))
	return nil
}

// getVersion serves GET .../memory_versions/{id} (#13), with content by
// default.
func (s *Server) getVersion(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	full := p.view(true)
	if p.err != nil {
		return p.err
	}
	v, err := s.versions.Version(r.Context(), c, r.PathValue("memory_store_id"), r.PathValue("memory_version_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewVersionJSON(v, full))
	return nil
}

// redactVersion serves POST .../memory_versions/{id}/redact (#14). The
// answer has no content to show, so it takes no view.
func (s *Server) redactVersion(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	v, err := s.versions.RedactVersion(r.Context(), c, r.PathValue("memory_store_id"), r.PathValue("memory_version_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewVersionJSON(v, false))
	return nil
}

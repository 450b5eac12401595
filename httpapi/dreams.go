package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/memstore/memstore"
)

// BetaDreams is the beta header the SDKs send on the dream routes.
const BetaDreams = "dreaming-2026-04-21"

// routeDreams adds the routes of /v1/dreams (docs/dreams.md, The API). The
// dream service decides who may do what: API keys, and console users as
// for stores; never a session token.
func (s *Server) routeDreams() {
	const (
		dreams = "/v1/dreams"
		dream  = dreams + "/{dream_id}"
	)
	s.handle("POST "+dreams, s.createDream)
	s.handle("GET "+dreams, s.listDreams)
	s.handle("GET "+dream, s.getDream)
	s.handle("POST "+dream+"/archive", s.archiveDream)
	s.handle("POST "+dream+"/cancel", s.cancelDream)
}

// DreamJSON is a dream object, as the SDKs' BetaDream.
type DreamJSON struct {
	Type           string            `json:"type"` // always "dream"
	ID             string            `json:"id"`
	Status         string            `json:"status"`
	Inputs         []DreamInputJSON  `json:"inputs"`
	Model          DreamModelJSON    `json:"model"`
	Instructions   *string           `json:"instructions"`
	OutputBehavior DreamOutputJSON   `json:"output_behavior"`
	Outputs        []DreamOutputJSON `json:"outputs"`
	SessionID      *string           `json:"session_id"`
	Usage          DreamUsageJSON    `json:"usage"`
	Error          *DreamErrorJSON   `json:"error"`
	CreatedAt      Timestamp         `json:"created_at"`
	EndedAt        *Timestamp        `json:"ended_at"`
	ArchivedAt     *Timestamp        `json:"archived_at"`
}

// DreamInputJSON is an entry of a dream's inputs: a memory_store or a
// sessions input.
type DreamInputJSON struct {
	Type          string   `json:"type"`
	MemoryStoreID string   `json:"memory_store_id,omitempty"`
	SessionIDs    []string `json:"session_ids,omitempty"`
}

// DreamModelJSON is a dream's model, always an object on output.
type DreamModelJSON struct {
	ID    string `json:"id"`
	Speed string `json:"speed"`
}

// DreamOutputJSON is an output behavior ({"type": "create_new"} or
// update_existing with its store) or an entry of outputs (memory_store).
type DreamOutputJSON struct {
	Type          string `json:"type"`
	MemoryStoreID string `json:"memory_store_id,omitempty"`
}

// DreamUsageJSON is a dream's usage.
type DreamUsageJSON struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// DreamErrorJSON is why a dream failed.
type DreamErrorJSON struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// NewDreamJSON is d on the wire: its output store and session only once
// it runs (Dream.Outputs, Dream.RunningSessionID).
func NewDreamJSON(d *memstore.Dream) DreamJSON {
	j := DreamJSON{
		Type: "dream", ID: d.ID, Status: string(d.Status),
		Inputs: []DreamInputJSON{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: d.InputStoreID},
			{Type: memstore.DreamInputSessions, SessionIDs: d.SessionIDs}},
		Model:          DreamModelJSON{ID: d.Model.ID, Speed: d.Model.Speed},
		OutputBehavior: DreamOutputJSON{Type: d.OutputBehavior},
		Outputs:        []DreamOutputJSON{},
		Usage: DreamUsageJSON{d.Usage.InputTokens, d.Usage.OutputTokens,
			d.Usage.CacheCreationInputTokens, d.Usage.CacheReadInputTokens},
		CreatedAt: Timestamp(d.CreatedAt), EndedAt: timestampPtr(d.EndedAt), ArchivedAt: timestampPtr(d.ArchivedAt),
	}
	if d.Instructions != "" {
		j.Instructions = &d.Instructions
	}
	if d.OutputBehavior == memstore.OutputUpdateExisting {
		j.OutputBehavior.MemoryStoreID = d.InputStoreID
	}
	for _, id := range d.Outputs() {
		j.Outputs = append(j.Outputs, DreamOutputJSON{Type: memstore.DreamInputMemoryStore, MemoryStoreID: id})
	}
	if id := d.RunningSessionID(); id != "" {
		j.SessionID = &id
	}
	if d.Error != nil {
		j.Error = &DreamErrorJSON{Type: d.Error.Type, Message: d.Error.Message}
	}
	return j
}

// Dream is the dream j describes, as far as the wire tells it (no
// workspace, lease or attempts).
func (j *DreamJSON) Dream() *memstore.Dream {
	d := &memstore.Dream{
		ID: j.ID, Status: memstore.DreamStatus(j.Status), Model: memstore.DreamModel{ID: j.Model.ID, Speed: j.Model.Speed},
		Instructions: orZero(j.Instructions), OutputBehavior: j.OutputBehavior.Type, SessionID: orZero(j.SessionID),
		Usage: memstore.DreamUsage{InputTokens: j.Usage.InputTokens, OutputTokens: j.Usage.OutputTokens,
			CacheCreationInputTokens: j.Usage.CacheCreationInputTokens, CacheReadInputTokens: j.Usage.CacheReadInputTokens},
		CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.CreatedAt), EndedAt: timePtr(j.EndedAt), ArchivedAt: timePtr(j.ArchivedAt),
	}
	for _, in := range j.Inputs {
		switch in.Type {
		case memstore.DreamInputMemoryStore:
			d.InputStoreID = in.MemoryStoreID
		case memstore.DreamInputSessions:
			d.SessionIDs = in.SessionIDs
		}
	}
	if len(j.Outputs) > 0 {
		d.OutputStoreID = j.Outputs[0].MemoryStoreID
	}
	if j.Error != nil {
		d.Error = &memstore.DreamError{Type: j.Error.Type, Message: j.Error.Message}
	}
	return d
}

// dreamCreateKeys are the fields of a dream create.
var dreamCreateKeys = []string{"inputs", "model", "instructions", "output_behavior"}

// dreamCreate reads the body of POST /v1/dreams. A field the API does not
// define is refused by name, never ignored.
func dreamCreate(body map[string]json.RawMessage) (memstore.DreamCreate, error) {
	var dc memstore.DreamCreate
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(dreamCreateKeys, k) {
			return dc, invalid("%s is not a field of a dream create, which takes inputs, model, instructions and output_behavior", shortParam(k))
		}
	}
	var inputs []json.RawMessage
	if err := unmarshalNullable(body["inputs"], &inputs); err != nil {
		return dc, invalid("inputs must be a list of objects: %v", err)
	}
	for i, raw := range inputs {
		var in struct {
			Type          string   `json:"type"`
			MemoryStoreID string   `json:"memory_store_id"`
			SessionIDs    []string `json:"session_ids"`
		}
		if err := strictJSON(raw, &in); err != nil {
			return dc, invalid("inputs[%d] must be {\"type\": \"memory_store\", \"memory_store_id\": ...} or {\"type\": \"sessions\", \"session_ids\": [...]}: %v", i, err)
		}
		dc.Inputs = append(dc.Inputs, memstore.DreamInput{Type: in.Type, MemoryStoreID: in.MemoryStoreID, SessionIDs: in.SessionIDs})
	}
	if raw := body["model"]; len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &dc.Model.ID); err != nil {
			var m DreamModelJSON
			if err := strictJSON(raw, &m); err != nil {
				return dc, invalid("model must be a model ID or {\"id\": ..., \"speed\": \"standard\"}: %v", err)
			}
			dc.Model = memstore.DreamModel{ID: m.ID, Speed: m.Speed}
		}
	}
	if raw, ok := body["instructions"]; ok {
		if err := unmarshalNullable(raw, &dc.Instructions); err != nil {
			return dc, invalid("instructions must be text: %v", err)
		}
	}
	if raw := body["output_behavior"]; len(raw) > 0 {
		var ob *DreamOutputJSON
		if err := strictJSON(raw, &ob); err != nil {
			return dc, invalid("output_behavior must be {\"type\": \"create_new\"} or {\"type\": \"update_existing\", \"memory_store_id\": ...}: %v", err)
		}
		if ob != nil {
			if ob.Type == "" {
				return dc, invalid("output_behavior.type is required: create_new or update_existing")
			}
			dc.OutputBehavior, dc.OutputStoreID = ob.Type, ob.MemoryStoreID
		}
	}
	return dc, nil
}

// strictJSON decodes raw into v, refusing fields v does not have.
func strictJSON(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// createDream serves POST /v1/dreams.
func (s *Server) createDream(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body map[string]json.RawMessage
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	dc, err := dreamCreate(body)
	if err != nil {
		return err
	}
	d, err := s.dreams.CreateDream(r.Context(), c, dc)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewDreamJSON(d))
	return nil
}

// getDream serves GET /v1/dreams/{id}.
func (s *Server) getDream(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	d, err := s.dreams.Dream(r.Context(), c, r.PathValue("dream_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewDreamJSON(d))
	return nil
}

// dreamListParams are the query parameters of the dream list: the SDKs'
// filters, and beta=true. Any other is refused by name.
var dreamListParams = map[string]bool{
	"beta": true, "limit": true, "page": true, "include_archived": true,
	"statuses[]": true, "statuses": true, "created_at[gt]": true, "created_at[lt]": true,
}

// listDreams serves GET /v1/dreams, newest first.
func (s *Server) listDreams(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	if err := p.only(dreamListParams, "the dream list cannot filter by %s; it takes statuses[], include_archived, created_at[gt], created_at[lt], limit and page"); err != nil {
		return err
	}
	f := memstore.DreamFilter{IncludeArchived: p.boolean("include_archived"), CreatedAtGT: p.createdAt("gt"), CreatedAtLT: p.createdAt("lt"),
		Limit: p.limit(false), Page: p.get("page")}
	if p.err != nil {
		return p.err
	}
	for _, st := range p.list("statuses") {
		f.Statuses = append(f.Statuses, memstore.DreamStatus(st))
	}
	page, err := s.dreams.Dreams(r.Context(), c, f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewDreamJSON))
	return nil
}

// archiveDream serves POST /v1/dreams/{id}/archive.
func (s *Server) archiveDream(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	return s.changeDream(w, r, c, s.dreams.ArchiveDream)
}

// cancelDream serves POST /v1/dreams/{id}/cancel.
func (s *Server) cancelDream(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	return s.changeDream(w, r, c, s.dreams.CancelDream)
}

func (s *Server) changeDream(w *responseWriter, r *http.Request, c *memstore.Caller,
	change func(context.Context, *memstore.Caller, string) (*memstore.Dream, error)) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	d, err := change(r.Context(), c, r.PathValue("dream_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewDreamJSON(d))
	return nil
}

// clientDreamPath is the path of a dream, and of its action when given.
func clientDreamPath(id, action string) (string, error) {
	if id == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no dream with an empty ID")
	}
	p := "/v1/dreams/" + url.PathEscape(id)
	if action != "" {
		p += "/" + action
	}
	return p, nil
}

func dreamIn(j *DreamJSON, ws string) *memstore.Dream {
	d := j.Dream()
	d.WorkspaceID = ws
	return d
}

// CreateDream implements memstore.DreamService (POST /v1/dreams).
func (c *Client) CreateDream(ctx context.Context, caller *memstore.Caller, dc memstore.DreamCreate) (*memstore.Dream, error) {
	inputs := make([]DreamInputJSON, len(dc.Inputs))
	for i, in := range dc.Inputs {
		inputs[i] = DreamInputJSON{Type: in.Type, MemoryStoreID: in.MemoryStoreID, SessionIDs: in.SessionIDs}
	}
	body := map[string]any{"inputs": inputs, "model": DreamModelJSON{ID: dc.Model.ID, Speed: dc.Model.Speed}}
	if dc.Model.Speed == "" {
		body["model"] = dc.Model.ID
	}
	if dc.Instructions != nil {
		body["instructions"] = *dc.Instructions
	}
	if dc.OutputBehavior != "" {
		body["output_behavior"] = DreamOutputJSON{Type: dc.OutputBehavior, MemoryStoreID: dc.OutputStoreID}
	}
	_, err := memstore.ValidateDreamCreate(dc)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: "/v1/dreams", body: body, err: err}, dreamIn)
}

// Dream implements memstore.DreamService (GET /v1/dreams/{id}).
func (c *Client) Dream(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Dream, error) {
	p, err := clientDreamPath(id, "")
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, dreamIn)
}

// Dreams implements memstore.DreamService (GET /v1/dreams).
func (c *Client) Dreams(ctx context.Context, caller *memstore.Caller, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	q := clientListQuery(f.Limit, f.Page, false)
	if f.IncludeArchived {
		q.Set("include_archived", "true")
	}
	for _, st := range f.Statuses {
		q.Add("statuses[]", string(st))
	}
	clientCreatedAt(q, f.CreatedAtGT, nil, f.CreatedAtLT, nil)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: "/v1/dreams", query: q},
		pageIn(func(j *DreamJSON, ws string) memstore.Dream { return *dreamIn(j, ws) }))
}

// ArchiveDream implements memstore.DreamService (POST
// /v1/dreams/{id}/archive).
func (c *Client) ArchiveDream(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Dream, error) {
	p, err := clientDreamPath(id, "archive")
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, err: err}, dreamIn)
}

// CancelDream implements memstore.DreamService (POST
// /v1/dreams/{id}/cancel).
func (c *Client) CancelDream(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Dream, error) {
	p, err := clientDreamPath(id, "cancel")
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, err: err}, dreamIn)
}

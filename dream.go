package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Dreams: asynchronous jobs, as the hosted API's /v1/dreams, that read a
// memory store and the transcripts of past sessions and write a
// reorganized store. The core keeps them and decides every change of
// their status; the worker of memstore serve (package dream) runs them
// through the trusted methods below (ClaimDream, BeginDream, RenewDream,
// FinishDream), writing as the dream's own session, whose only store is
// the output store.

// DreamIDPrefix begins every dream's ID.
const DreamIDPrefix = "drm_"

// DreamStatus is where a dream is in its life, as the SDKs name it.
type DreamStatus string

// The statuses. Completed, failed and canceled are final: a dream's
// status never changes once it has one of them.
const (
	DreamPending   DreamStatus = "pending"   // waiting for the worker
	DreamRunning   DreamStatus = "running"   // its session and output store are made; the model is working
	DreamCompleted DreamStatus = "completed" // the output store holds the whole result
	DreamFailed    DreamStatus = "failed"    // stopped with an error (Error)
	DreamCanceled  DreamStatus = "canceled"  // stopped by a cancel
)

// DreamStatuses lists every status, in the order of a dream's life.
var DreamStatuses = []DreamStatus{DreamPending, DreamRunning, DreamCompleted, DreamFailed, DreamCanceled}

// Final reports whether st is final.
func (st DreamStatus) Final() bool {
	return st == DreamCompleted || st == DreamFailed || st == DreamCanceled
}

// The output behaviors: where a dream writes its result.
const (
	// OutputCreateNew writes to a new store, a copy of the input made
	// when the dream starts; the input is left alone. The default.
	OutputCreateNew = "create_new"
	// OutputUpdateExisting writes to the input store itself, each change
	// a new version.
	OutputUpdateExisting = "update_existing"
)

// The kinds of a dream's inputs.
const (
	DreamInputMemoryStore = "memory_store"
	DreamInputSessions    = "sessions"
)

// SpeedStandard is the one model speed a dream takes, as hosted.
const SpeedStandard = "standard"

// Limits of dreams (docs/dreams.md, The API; docs/security.md, Limits).
const (
	MaxDreamSessions     = 100  // session IDs of a dream's sessions input, as hosted
	MaxDreamInstructions = 4096 // characters, as hosted
	MaxDreamModelID      = 256  // bytes of a model ID
	// MaxLiveDreams caps the dreams of a workspace that are pending or
	// running, so that one workspace cannot fill the worker's queue.
	MaxLiveDreams = 10
	// MaxDreamError bounds a failed dream's error message and code, in
	// bytes: what the worker gives is cut to it (StorableText).
	MaxDreamError = 1024
	// MaxDreamAttempts caps how often a dream is claimed: a dream whose
	// worker stopped (a restart) is claimed again when its lease
	// expires, and fails once it has been claimed this often.
	MaxDreamAttempts = 3
)

// DreamModel is the model that runs a dream.
type DreamModel struct {
	ID    string
	Speed string // SpeedStandard
}

// DreamUsage counts the tokens of the model's answers so far.
type DreamUsage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
}

// Add returns u with o's counts added.
func (u DreamUsage) Add(o DreamUsage) DreamUsage {
	return DreamUsage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens,
		u.CacheCreationInputTokens + o.CacheCreationInputTokens, u.CacheReadInputTokens + o.CacheReadInputTokens}
}

// DreamError is why a dream failed.
type DreamError struct {
	Type    string // a code, such as DreamErrorInternal or DreamErrorTimeout
	Message string
}

// Codes of a failed dream's error, as the hosted API names them.
const (
	DreamErrorInternal = "internal_error" // the dream could not go on: its worker stopped too often, say
	DreamErrorTimeout  = "timeout"        // the dream ran out of time
)

// A Dream is one consolidation job of a workspace.
type Dream struct {
	ID          string // drm_...
	WorkspaceID string
	Status      DreamStatus
	// InputStoreID is the memory_store input; SessionIDs the sessions
	// input, sorted, each once.
	InputStoreID   string
	SessionIDs     []string
	Model          DreamModel
	Instructions   string // "" when none was given
	OutputBehavior string // OutputCreateNew or OutputUpdateExisting
	// OutputStoreID is the store the dream writes: the input for
	// OutputUpdateExisting, the copy for OutputCreateNew once made ("" before).
	// The API shows it once the dream runs.
	OutputStoreID string
	// SessionID is the dream's own session, made when it starts ("" before);
	// the API shows it once the dream runs.
	SessionID string
	Usage     DreamUsage
	Error     *DreamError // nil unless failed
	// CancelRequested is set by a cancel of a running dream: its status
	// is canceled at once, and the worker stops at its next step.
	CancelRequested bool
	Attempts        int // claims so far
	// Owner is the worker that holds the dream until LeaseUntil; "" and
	// nil when none does.
	Owner      string
	LeaseUntil *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time // when it started running
	EndedAt    *time.Time // when its status became final
	ArchivedAt *time.Time
}

// Outputs is the output store as the API shows it: none while the dream
// is pending, nor when it stopped before it was prepared (its store and
// session made, in one transaction).
func (d *Dream) Outputs() []string {
	if d.Status == DreamPending || d.OutputStoreID == "" || d.SessionID == "" {
		return nil
	}
	return []string{d.OutputStoreID}
}

// RunningSessionID is the dream's session as the API shows it: "" while
// the dream is pending, or when it stopped before its session was made.
func (d *Dream) RunningSessionID() string {
	if d.Status == DreamPending {
		return ""
	}
	return d.SessionID
}

// DreamInput is one entry of a create's inputs.
type DreamInput struct {
	Type          string   // DreamInputMemoryStore or DreamInputSessions
	MemoryStoreID string   // of a memory_store input
	SessionIDs    []string // of a sessions input
}

// DreamCreate is what a new dream is made of.
type DreamCreate struct {
	// Inputs must be exactly one memory_store and one sessions input.
	Inputs       []DreamInput
	Model        DreamModel
	Instructions *string // nil when not given; 1 to MaxDreamInstructions characters
	// OutputBehavior is "" (OutputCreateNew), OutputCreateNew or
	// OutputUpdateExisting, which names the input store in
	// OutputStoreID.
	OutputBehavior string
	OutputStoreID  string
}

// DreamFilter selects dreams for a list, newest first.
type DreamFilter struct {
	CreatedAtGT, CreatedAtLT *time.Time
	IncludeArchived          bool
	Statuses                 []DreamStatus // any of them; all when empty
	Limit                    int           // page size, 1-100
	Page                     string        // cursor from a previous page's Next
}

// DreamService keeps the dreams of the caller's workspace (ENotFound for
// another's). Only API keys and console users whose role allows it
// (as for stores: reading lists and gets, writing creates, cancels and
// archives) may call it; a session token may not (EPermission).
type DreamService interface {
	// CreateDream validates dc and makes a pending dream (EInvalid for
	// bad input, a store or session not in the workspace, an archived
	// input store, or a workspace holding MaxLiveDreams; EConflict while
	// another update_existing dream of the same store has not stopped).
	CreateDream(ctx context.Context, c *Caller, dc DreamCreate) (*Dream, error)
	// Dream returns a dream, archived or not (ENotFound).
	Dream(ctx context.Context, c *Caller, id string) (*Dream, error)
	// Dreams lists dreams newest first (EInvalid for a bad filter or
	// cursor).
	Dreams(ctx context.Context, c *Caller, f DreamFilter) (Page[Dream], error)
	// ArchiveDream hides a final dream from the default list (EInvalid
	// for a pending or running one; archiving again changes nothing).
	ArchiveDream(ctx context.Context, c *Caller, id string) (*Dream, error)
	// CancelDream stops a pending or running dream: its status is
	// canceled at once, and a running one's worker stops at its next
	// step. Canceling a canceled dream changes nothing; a completed or
	// failed one is EInvalid.
	CancelDream(ctx context.Context, c *Caller, id string) (*Dream, error)
}

// DreamStorage keeps dreams. It is trusted: only a Core calls it, once
// the caller may and the input is valid.
type DreamStorage interface {
	// Dream returns a dream of the workspace (ENotFound).
	Dream(ctx context.Context, workspaceID, id string) (*Dream, error)
	// Dreams lists the workspace's dreams by f, newest first (EInvalid
	// for a bad cursor).
	Dreams(ctx context.Context, workspaceID string, f DreamFilter) (Page[Dream], error)
	// WriteDreams runs fn in one write transaction of the workspace,
	// over a DreamTx, and commits what it changed when fn returns nil;
	// otherwise it changes nothing and returns fn's error. fn may run
	// more than once, so it must have no effect outside tx.
	WriteDreams(ctx context.Context, workspaceID string, fn func(tx DreamTx) error) error
	// DreamByID returns a dream of whichever workspace (ENotFound): the
	// worker names dreams by their ID alone.
	DreamByID(ctx context.Context, id string) (*Dream, error)
	// ClaimDream takes, of whichever workspace, the oldest dream that is
	// pending or running with no lease or an expired one at now,
	// preferring the workspaces with the fewest dreams held: sets its
	// Owner, LeaseUntil (until) and Attempts+1 and returns it, nil when
	// there is none. Concurrent claims, of any process, never take the
	// same dream.
	ClaimDream(ctx context.Context, owner string, now, until time.Time) (*Dream, error)
}

// A DreamTx is a workspace's dreams, sessions and stores inside a
// backend's write transaction. A dream read here stays locked until the
// transaction ends.
type DreamTx interface {
	SessionTx
	// Dream returns a dream of the workspace (ENotFound).
	Dream(id string) (*Dream, error)
	// LiveDreams counts the workspace's pending and running dreams, up
	// to max, waiting for concurrent counts as LiveSessions does.
	LiveDreams(max int) (int, error)
	// UpdatingDream returns the ID of an update_existing dream of the
	// store that has not stopped at now, "" when none: one pending or
	// running, or canceled while its worker's lease still holds (the
	// worker may write until its next step).
	UpdatingDream(storeID string, now time.Time) (string, error)
	// CreateDream stores d, giving it an ID.
	CreateDream(d *Dream) error
	// UpdateDream stores every field of d.
	UpdateDream(d *Dream) error
	// CreateStore stores s, a new store of the workspace, giving it an
	// ID, within q (counting the workspace's stores).
	CreateStore(s *Store, q Quota) error
	// QueueWebhookEvent adds a pending delivery of e for each enabled
	// endpoint of the workspace that asks for e.Type, all with one event
	// ID, due at e.CreatedAt.
	QueueWebhookEvent(e WebhookEvent) error
}

// WithDreams says whether the Core's server runs dreams (it has a model
// to call): without, CreateDream refuses, saying how to configure one.
func WithDreams(enabled bool) CoreOption {
	return func(co *Core) { co.dreams = enabled }
}

// ErrDreamsOff is the refusal of a dream by a server with no model.
func ErrDreamsOff() *Error {
	return Errorf(EInvalid, "dreams are not enabled on this server: it has no model to run them. "+
		"Start memstore serve with a model endpoint (ANTHROPIC_API_KEY, or --model-base-url and --model-api-key-file; see docs/dreams.md)")
}

// ErrDreamNotFound is the refusal of a dream that is not in the
// workspace.
func ErrDreamNotFound(id string) *Error { return Errorf(ENotFound, "dream %s not found", id) }

// ValidateDreamCreate checks what can be checked of dc without a
// database, and returns the dream it makes, its stores and sessions still
// to check. Each message names the field at fault.
func ValidateDreamCreate(dc DreamCreate) (*Dream, error) {
	d := &Dream{Status: DreamPending, OutputBehavior: dc.OutputBehavior}
	var stores, sessions int
	for i, in := range dc.Inputs {
		what := fmt.Sprintf("inputs[%d]", i)
		switch in.Type {
		case DreamInputMemoryStore:
			stores++
			if in.SessionIDs != nil {
				return nil, Errorf(EInvalid, "%s is a %s input, which takes no session_ids: give them in the %s input", what, DreamInputMemoryStore, DreamInputSessions)
			}
			if in.MemoryStoreID == "" {
				return nil, Errorf(EInvalid, "%s.memory_store_id is required", what)
			}
			if err := ValidateID(what+".memory_store_id", in.MemoryStoreID); err != nil {
				return nil, err
			}
			d.InputStoreID = in.MemoryStoreID
		case DreamInputSessions:
			sessions++
			if in.MemoryStoreID != "" {
				return nil, Errorf(EInvalid, "%s is a %s input, which takes no memory_store_id: give it in the %s input", what, DreamInputSessions, DreamInputMemoryStore)
			}
			ids, err := validateDreamSessions(what, in.SessionIDs)
			if err != nil {
				return nil, err
			}
			d.SessionIDs = ids
		default:
			return nil, Errorf(EInvalid, "%s.type must be %s or %s, not %q", what, DreamInputMemoryStore, DreamInputSessions, in.Type)
		}
	}
	if stores != 1 || sessions != 1 {
		return nil, Errorf(EInvalid, "inputs must hold exactly one %s entry and one %s entry; %d and %d were given",
			DreamInputMemoryStore, DreamInputSessions, stores, sessions)
	}
	if err := validateDreamModel(dc.Model); err != nil {
		return nil, err
	}
	d.Model = DreamModel{ID: dc.Model.ID, Speed: SpeedStandard}
	if dc.Instructions != nil {
		in := *dc.Instructions
		if !utf8.ValidString(in) {
			return nil, Errorf(EInvalid, "instructions is not valid UTF-8")
		}
		if n := utf8.RuneCountInString(in); n < 1 || n > MaxDreamInstructions {
			return nil, Errorf(EInvalid, "instructions must be 1 to %d characters; %d were given", MaxDreamInstructions, n)
		}
		if err := ValidateText("instructions", in); err != nil {
			return nil, err
		}
		d.Instructions = in
	}
	switch dc.OutputBehavior {
	case "", OutputCreateNew:
		d.OutputBehavior = OutputCreateNew
		if dc.OutputStoreID != "" {
			return nil, Errorf(EInvalid, "output_behavior %s takes no memory_store_id: the dream makes its own store", OutputCreateNew)
		}
	case OutputUpdateExisting:
		if dc.OutputStoreID != d.InputStoreID {
			return nil, Errorf(EInvalid, "output_behavior.memory_store_id must be the memory store of the %s input (%s), not %q",
				DreamInputMemoryStore, d.InputStoreID, shortName(dc.OutputStoreID))
		}
		d.OutputStoreID = d.InputStoreID
	default:
		return nil, Errorf(EInvalid, "output_behavior.type must be %s or %s, not %q", OutputCreateNew, OutputUpdateExisting, shortName(dc.OutputBehavior))
	}
	return d, nil
}

// validateDreamSessions checks a sessions input: 1 to MaxDreamSessions
// IDs, none twice; it returns them sorted, as the API lists them.
func validateDreamSessions(what string, ids []string) ([]string, error) {
	if n := len(ids); n < 1 || n > MaxDreamSessions {
		return nil, Errorf(EInvalid, "%s.session_ids must list 1 to %d sessions; %d were given", what, MaxDreamSessions, n)
	}
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		field := fmt.Sprintf("%s.session_ids[%d]", what, i)
		if id == "" {
			return nil, Errorf(EInvalid, "%s is empty; give a session ID (sesn_...)", field)
		}
		if err := ValidateID(field, id); err != nil {
			return nil, err
		}
		if j, ok := seen[id]; ok {
			return nil, Errorf(EInvalid, "%s: session %s is already listed at session_ids[%d]; list each session once", field, shortName(id), j)
		}
		seen[id] = i
	}
	return slices.Sorted(slices.Values(ids)), nil
}

// validateDreamModel checks a dream's model: an ID, and no speed but
// standard.
func validateDreamModel(m DreamModel) error {
	switch {
	case strings.TrimSpace(m.ID) == "":
		return Errorf(EInvalid, "model is required: give a model ID, or {\"id\": ..., \"speed\": \"standard\"}")
	case len(m.ID) > MaxDreamModelID:
		return Errorf(EInvalid, "model.id is %d bytes; the limit is %d", len(m.ID), MaxDreamModelID)
	case m.Speed != "" && m.Speed != SpeedStandard:
		return Errorf(EInvalid, "model.speed must be %s, not %q: dreams run at standard speed only", SpeedStandard, shortName(m.Speed))
	}
	return ValidateText("model.id", m.ID)
}

// validateDreamFilter checks a list's filter.
func validateDreamFilter(f DreamFilter) error {
	if _, err := PageSize(f.Limit, false); err != nil {
		return err
	}
	for _, st := range f.Statuses {
		if !slices.Contains(DreamStatuses, st) {
			return Errorf(EInvalid, "statuses[] must be among pending, running, completed, failed and canceled, not %q", shortName(string(st)))
		}
	}
	return nil
}

// CanDream returns nil when c may read (write false) or create, cancel
// and archive (write true) the dreams of its workspace: an API key, or a
// user whose role reads, or writes, memories, as for stores (EPermission
// for a session token or any other role). Surfaces that ask before they
// offer (the console) call it too.
func (c *Caller) CanDream(write bool) error {
	if write {
		return c.canManage(ManageDreams, writeData)
	}
	return c.canManage(ListDreams, readData)
}

// CreateDream implements DreamService.
func (co *Core) CreateDream(ctx context.Context, c *Caller, dc DreamCreate) (*Dream, error) {
	if err := c.CanDream(true); err != nil {
		return nil, err
	}
	if !co.dreams {
		return nil, ErrDreamsOff()
	}
	d, err := ValidateDreamCreate(dc)
	if err != nil {
		return nil, err
	}
	d.WorkspaceID = c.WorkspaceID
	err = co.b.WriteDreams(ctx, c.WorkspaceID, func(tx DreamTx) error {
		return createDream(tx, d, co.b.Now())
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// createDream is CreateDream's rule, in the workspace's transaction: the
// input store is the workspace's and live, each session the workspace's,
// the workspace within MaxLiveDreams, and no other update_existing dream
// of the store unfinished (EConflict, as hosted).
func createDream(tx DreamTx, d *Dream, now time.Time) error {
	st, err := tx.Store(d.InputStoreID)
	switch {
	case err != nil:
		return err
	case st == nil:
		return Errorf(EInvalid, "memory store %s of the %s input is not in this workspace", d.InputStoreID, DreamInputMemoryStore)
	case st.ArchivedAt != nil:
		return Errorf(EInvalid, "%s: memory store %s of the %s input is archived; a dream reads only a live store", ArchivedMessage, st.ID, DreamInputMemoryStore)
	}
	for _, id := range d.SessionIDs {
		if _, err := tx.Session(id); err != nil {
			if ErrorCode(err) == ENotFound {
				return Errorf(EInvalid, "session %s of the %s input is not in this workspace", id, DreamInputSessions)
			}
			return err
		}
	}
	n, err := tx.LiveDreams(MaxLiveDreams)
	if err != nil {
		return err
	}
	if n >= MaxLiveDreams {
		return Errorf(EInvalid, "this workspace has %d dreams pending or running, the most it may have (a fixed limit); wait for one to finish, or cancel one", MaxLiveDreams)
	}
	if d.OutputBehavior == OutputUpdateExisting {
		other, err := tx.UpdatingDream(d.InputStoreID, now)
		if err != nil {
			return err
		}
		if other != "" {
			return Errorf(EConflict, "dream %s is still updating memory store %s; wait for it to stop, or cancel it", other, d.InputStoreID)
		}
	}
	d.CreatedAt, d.UpdatedAt = now, now
	return tx.CreateDream(d)
}

// Dream implements DreamService.
func (co *Core) Dream(ctx context.Context, c *Caller, id string) (*Dream, error) {
	if err := c.CanDream(false); err != nil {
		return nil, err
	}
	if err := ValidateID("dream_id", id); err != nil {
		return nil, err
	}
	return co.b.Dream(ctx, c.WorkspaceID, id)
}

// Dreams implements DreamService.
func (co *Core) Dreams(ctx context.Context, c *Caller, f DreamFilter) (Page[Dream], error) {
	if err := c.CanDream(false); err != nil {
		return Page[Dream]{}, err
	}
	if err := validateDreamFilter(f); err != nil {
		return Page[Dream]{}, err
	}
	return co.b.Dreams(ctx, c.WorkspaceID, f)
}

// ArchiveDream implements DreamService.
func (co *Core) ArchiveDream(ctx context.Context, c *Caller, id string) (*Dream, error) {
	return co.changeDream(ctx, c, id, func(d *Dream, now time.Time) (bool, error) {
		switch {
		case !d.Status.Final():
			return false, Errorf(EInvalid, "dream %s is %s; only a completed, failed or canceled dream can be archived: cancel it first", d.ID, d.Status)
		case d.ArchivedAt != nil:
			return false, nil
		}
		d.ArchivedAt = &now
		return true, nil
	})
}

// CancelDream implements DreamService: the status is canceled at once,
// as the hosted API answers; a running dream's worker learns it at its
// next renewal (RenewDream) and stops.
func (co *Core) CancelDream(ctx context.Context, c *Caller, id string) (*Dream, error) {
	return co.changeDream(ctx, c, id, func(d *Dream, now time.Time) (bool, error) {
		switch d.Status {
		case DreamCanceled:
			return false, nil
		case DreamCompleted, DreamFailed:
			return false, Errorf(EInvalid, "dream %s is %s; only a pending or running dream can be canceled", d.ID, d.Status)
		}
		d.CancelRequested = d.Status == DreamRunning || d.Owner != ""
		d.Status, d.EndedAt = DreamCanceled, &now
		return true, nil
	})
}

// changeDream applies change to dream id in the caller's workspace,
// storing it when it reports a change.
func (co *Core) changeDream(ctx context.Context, c *Caller, id string, change func(d *Dream, now time.Time) (bool, error)) (*Dream, error) {
	if err := c.CanDream(true); err != nil {
		return nil, err
	}
	if err := ValidateID("dream_id", id); err != nil {
		return nil, err
	}
	var d *Dream
	err := co.b.WriteDreams(ctx, c.WorkspaceID, func(tx DreamTx) (err error) {
		if d, err = tx.Dream(id); err != nil {
			return err
		}
		now := co.b.Now()
		changed, err := change(d, now)
		if err != nil || !changed {
			return err
		}
		d.UpdatedAt = now
		return tx.UpdateDream(d)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// The runner's side. These methods take no caller: only the worker of
// memstore serve (package dream) calls them, trusted as a backend is.
// owner names the worker (a process's own ID), so that a worker whose
// lease expired and was taken by another can change nothing.

// ClaimDream takes the next dream to run, nil when none: the oldest
// pending one, or a running one whose worker's lease expired, with
// Attempts+1, held until now+lease. A dream claimed more than
// MaxDreamAttempts times fails instead (its worker stopped that often),
// and the next is claimed. So does a dream canceled while it ran whose
// worker stopped before it learnt of the cancel: it is finished here
// (its session archived, its lease let go), or nobody ever would.
func (co *Core) ClaimDream(ctx context.Context, owner string, lease time.Duration) (*Dream, error) {
	if owner == "" || len(owner) > maxIDLength || lease <= 0 {
		return nil, Errorf(EInvalid, "a claim needs an owner of 1 to %d bytes and a positive lease", maxIDLength)
	}
	for {
		now := co.b.Now()
		d, err := co.b.ClaimDream(ctx, owner, now, now.Add(lease))
		if err != nil || d == nil {
			return nil, err
		}
		if d.Status == DreamCanceled {
			if err := co.FinishDream(ctx, d.ID, owner, DreamCanceled, d.Usage, nil); err != nil {
				return nil, err
			}
			continue
		}
		if d.Attempts <= MaxDreamAttempts {
			return d, nil
		}
		err = co.FinishDream(ctx, d.ID, owner, DreamFailed, d.Usage, &DreamError{Type: DreamErrorInternal,
			Message: fmt.Sprintf("the dream was interrupted %d times (the server stopped while it ran) and was not retried again", MaxDreamAttempts)})
		if err != nil {
			return nil, err
		}
	}
}

// BeginDream starts a claimed dream, and may be called again for the
// same dream (a resumed one): it makes, once each, the output store of a
// create_new dream (named after the input, "<input name> (dream <id>)")
// and the dream's session (title "Dream <id>", metadata dream_id, the
// output store attached read_write and nothing else), copies the input's
// memories into the new store (a copy interrupted is made to match the
// input, never redone over the dream's own changes), then marks the
// dream running. It returns the caller that the worker's tool calls and
// transcript go through: the dream's session, with no token.
func (co *Core) BeginDream(ctx context.Context, d *Dream, owner string) (*Caller, error) {
	if d == nil {
		return nil, Errorf(EInvalid, "no dream to begin")
	}
	// The lease the claim gave, which the copy keeps up.
	var lease time.Duration
	if d.LeaseUntil != nil {
		lease = d.LeaseUntil.Sub(d.UpdatedAt)
	}
	var ses *Session
	var started bool
	err := co.b.WriteDreams(ctx, d.WorkspaceID, func(tx DreamTx) error {
		cur, err := heldDream(tx, d.ID, owner)
		if err != nil {
			return err
		}
		ses, started, err = prepareDream(tx, cur, co.limits, co.b.Now())
		*d = *cur
		return err
	})
	if err != nil {
		return nil, err
	}
	// The caller reaches the output store alone, whatever else was
	// attached to the session since it was made: what a transcript asks
	// of the model must not reach another store.
	own := *ses
	own.Attachments = nil
	for _, a := range ses.Attachments {
		if a.StoreID == d.OutputStoreID {
			own.Attachments = append(own.Attachments, a)
		}
	}
	caller := &Caller{WorkspaceID: d.WorkspaceID, Actor: Actor{Type: ActorSession, ID: ses.ID}, Session: &own}
	if started {
		return caller, nil
	}
	if d.OutputBehavior == OutputCreateNew {
		if err := co.copyStore(ctx, d, owner, lease, caller.Actor); err != nil {
			return nil, err
		}
	}
	err = co.b.WriteDreams(ctx, d.WorkspaceID, func(tx DreamTx) error {
		cur, err := heldDream(tx, d.ID, owner)
		if err != nil {
			return err
		}
		if cur.StartedAt == nil {
			now := co.b.Now()
			cur.Status, cur.StartedAt, cur.UpdatedAt = DreamRunning, &now, now
			if err := tx.UpdateDream(cur); err != nil {
				return err
			}
		}
		*d = *cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	return caller, nil
}

// heldDream reads dream id for a change by its worker owner: EConflict
// when another worker holds it now, or when it is final (canceled while
// it waited, say).
func heldDream(tx DreamTx, id, owner string) (*Dream, error) {
	d, err := ownedDream(tx, id, owner)
	if err == nil && d.Status == DreamCanceled {
		return nil, Errorf(EConflict, "dream %s is %s", id, d.Status)
	}
	return d, err
}

// ownedDream reads dream id, canceled or not, for the worker owner that
// holds it: EConflict when another worker holds it now, or it is
// completed or failed.
func ownedDream(tx DreamTx, id, owner string) (*Dream, error) {
	d, err := tx.Dream(id)
	switch {
	case err != nil:
		return nil, err
	case d.Owner != owner:
		return nil, errLeaseLost(id)
	case d.Status == DreamCompleted || d.Status == DreamFailed:
		return nil, Errorf(EConflict, "dream %s is %s", id, d.Status)
	}
	return d, nil
}

// errLeaseLost refuses a worker's call about dream id, which another
// worker holds now.
func errLeaseLost(id string) error {
	return Errorf(EConflict, "dream %s is held by another worker: this worker's lease was lost", id)
}

// prepareDream makes what dream d lacks to run, in its transaction: the
// output store of create_new (within the workspace's quota of stores),
// then its session (within the quota of sessions). started reports that
// d already runs (its copy is done).
func prepareDream(tx DreamTx, d *Dream, l Limits, now time.Time) (ses *Session, started bool, err error) {
	if d.OutputStoreID == "" {
		in, err := tx.Store(d.InputStoreID)
		if err != nil {
			return nil, false, err
		}
		if in == nil {
			return nil, false, Errorf(EInvalid, "memory store %s, the dream's input, no longer exists", d.InputStoreID)
		}
		name := in.Name + " (dream " + d.ID + ")"
		if n := utf8.RuneCountInString(name); n > MaxStoreName {
			r := []rune(in.Name)
			name = string(r[:max(0, len(r)-(n-MaxStoreName))]) + " (dream " + d.ID + ")"
		}
		out := NewStore("", d.WorkspaceID, StoreCreate{Name: name, Description: in.Description,
			Metadata: map[string]string{"dream_id": d.ID}}, now)
		if err := tx.CreateStore(out, storeQuota(d.WorkspaceID, l.StoresPerWorkspace)); err != nil {
			return nil, false, err
		}
		d.OutputStoreID = out.ID
	}
	if d.SessionID != "" {
		ses, err := tx.Session(d.SessionID)
		return ses, d.StartedAt != nil, err
	}
	q := sessionQuota(d.WorkspaceID, l.SessionsPerWorkspace)
	if q.Limited() {
		n, err := tx.LiveSessions(q.Max())
		if err != nil {
			return nil, false, err
		}
		if err := q.Check(n); err != nil {
			return nil, false, err
		}
	}
	ses = newSession(d.WorkspaceID, SessionCreate{Title: "Dream " + d.ID, Metadata: map[string]string{"dream_id": d.ID}}, now)
	ses.Attachments, err = snapshotAttachments([]AttachmentCreate{{StoreID: d.OutputStoreID, Access: AccessReadWrite,
		Instructions: "The dream's output store: reorganize it here."}}, tx.Store)
	if err != nil {
		return nil, false, err
	}
	AssignMountPaths(ses.Attachments)
	if err := tx.CreateSession(ses); err != nil {
		return nil, false, err
	}
	d.SessionID, d.UpdatedAt = ses.ID, now
	return ses, false, tx.UpdateDream(d)
}

// dreamCopyCheck is how many memories a dream's copy writes between two
// checks that its worker still holds the dream, each of which renews the
// lease: a copy longer than a lease is neither taken over meanwhile nor
// goes on once another worker has the dream.
const dreamCopyCheck = 100

// copyStore makes d's output store a copy of its input store's live
// memories, as by, for owner, who holds the dream for lease at a time.
//
// What it copies is the input's memories at one moment: their IDs and
// paths, read in one snapshot (without content, and so small). Their
// contents are then read a page at a time, in the order of paths, and
// each page written after its read: a read held open across the writes
// would hold a connection of the database's pool that the writes need,
// and copies running at once could take every one. Each memory of the
// snapshot is written once, at its path in the snapshot (the snapshot's
// paths never overlap), with the content its read finds; one a rename
// moved behind the pages is read alone at the end; one deleted since is
// left out, as is one created since. The copy writes the input's own
// contents, so no content rule refuses them, as none refused them in
// the input.
//
// A copy interrupted (its worker stopped or lost the dream's lease) and
// begun again finds part of a copy in the output, of an input that may
// have changed since. It makes the output match its own snapshot: it
// first deletes what the snapshot does not hold, then passes over a
// memory whose content is the same and changes one whose content is not.
// Each of those writes names the content it found in the output, so
// that a worker that lost the dream, going on, cannot undo the dream's
// own writes: its write is refused, and so is the copy, once the lease
// says it is no longer its.
func (co *Core) copyStore(ctx context.Context, d *Dream, owner string, lease time.Duration, by Actor) error {
	if d.OutputBehavior != OutputCreateNew || d.OutputStoreID == "" || d.OutputStoreID == d.InputStoreID {
		return Errorf(EInternal, "dream %s copies its input only into a new store of its own", d.ID)
	}
	left := map[string]string{} // the snapshot's memories not copied yet: their paths by ID
	paths := map[string]bool{}  // the snapshot's paths
	err := co.b.ExportMemories(ctx, d.WorkspaceID, d.InputStoreID, false, ExportFunc(func(m *Memory) error {
		left[m.ID], paths[m.Path] = m.Path, true
		return nil
	}))
	if err != nil {
		return err
	}
	had := map[string]*Memory{} // what the output holds already, by path
	err = co.b.ExportMemories(ctx, d.WorkspaceID, d.OutputStoreID, false, ExportFunc(func(m *Memory) error {
		had[m.Path] = m
		return nil
	}))
	if err != nil {
		return err
	}
	steps := 0
	// step counts a memory read or written; every dreamCopyCheck steps
	// the copy checks that owner still holds the dream, and keeps it.
	step := func() error {
		if steps++; steps%dreamCopyCheck == 0 {
			return co.renewCopyLease(ctx, d, owner, lease)
		}
		return nil
	}
	// write runs fn on the output. A refusal that another's write could
	// explain (a path taken, a content changed) ends the copy with the
	// lease's word when the dream is no longer owner's, else with why.
	write := func(fn func(tx MemoryTx) error) error {
		err := co.b.WriteMemory(ctx, d.WorkspaceID, d.OutputStoreID, fn)
		if c := ErrorCode(err); c == EPathConflict || c == EPreconditionFailed {
			if lost := co.renewCopyLease(ctx, d, owner, lease); lost != nil {
				return lost
			}
			return Errorf(EConflict, "the output store %s of dream %s was written by another while the dream copied its input into it: %v", d.OutputStoreID, d.ID, err)
		}
		return err
	}
	drop := func(o *Memory) error {
		if err := step(); err != nil {
			return err
		}
		err := write(func(tx MemoryTx) error { return deleteMemory(tx, d.OutputStoreID, o.ID, o.ContentSHA256, by) })
		if ErrorCode(err) == ENotFound {
			return nil
		}
		return err
	}
	for _, path := range slices.Sorted(maps.Keys(had)) {
		if !paths[path] {
			if err := drop(had[path]); err != nil {
				return err
			}
		}
	}
	q := memoryQuota(d.OutputStoreID, co.limits.MemoriesPerStore)
	asIs := ContentRules{AllowCredentials: true, AllowOversizedIndex: true}
	// copyOne writes m if the snapshot holds it and it is not copied yet.
	copyOne := func(m *Memory) error {
		if err := step(); err != nil {
			return err
		}
		path, ok := left[m.ID]
		if !ok {
			return nil
		}
		delete(left, m.ID)
		if o := had[path]; o != nil {
			if o.ContentSHA256 == m.ContentSHA256 {
				return nil
			}
			return write(func(tx MemoryTx) error {
				_, err := updateMemory(tx, d.OutputStoreID, o.ID, MemoryUpdate{Content: &m.Content, IfSHA256: o.ContentSHA256}, m.ContentSHA256, by, asIs)
				return err
			})
		}
		return write(func(tx MemoryTx) error {
			_, err := createMemory(tx, d.OutputStoreID, MemoryCreate{Path: path, Content: m.Content}, m.ContentSHA256, by, q)
			return err
		})
	}
	f := MemoryFilter{Full: true, Limit: MaxFullPageSize}
	for {
		p, err := co.b.Memories(ctx, d.WorkspaceID, d.InputStoreID, f)
		if err != nil {
			return err
		}
		for _, it := range p.Items {
			if err := copyOne(it.Memory); err != nil {
				return err
			}
		}
		if f.Page = p.Next; f.Page == "" {
			break
		}
	}
	for _, id := range slices.Sorted(maps.Keys(left)) {
		m, err := co.b.Memory(ctx, d.WorkspaceID, d.InputStoreID, id)
		if ErrorCode(err) == ENotFound {
			if _, err := co.b.Store(ctx, d.WorkspaceID, d.InputStoreID); err != nil {
				return err // the input itself is gone
			}
			if o := had[left[id]]; o != nil { // deleted since the snapshot: so is its copy
				if err := drop(o); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := copyOne(m); err != nil {
			return err
		}
	}
	return nil
}

// renewCopyLease checks that owner still holds dream d and keeps it for
// lease more, in the course of its copy.
func (co *Core) renewCopyLease(ctx context.Context, d *Dream, owner string, lease time.Duration) error {
	return co.b.WriteDreams(ctx, d.WorkspaceID, func(tx DreamTx) error {
		cur, err := heldDream(tx, d.ID, owner)
		if err != nil || lease <= 0 {
			return err
		}
		until := co.b.Now().Add(lease)
		cur.LeaseUntil = &until
		return tx.UpdateDream(cur)
	})
}

// RenewDream keeps owner's lease of dream id for lease more and records
// its usage so far. cancelRequested reports that the dream was canceled:
// the worker stops. EConflict when the lease was lost to another worker,
// or the dream is completed or failed.
func (co *Core) RenewDream(ctx context.Context, id, owner string, lease time.Duration, usage DreamUsage) (cancelRequested bool, err error) {
	err = co.writeHeldDream(ctx, id, func(tx DreamTx) error {
		d, err := ownedDream(tx, id, owner)
		if err != nil {
			return err
		}
		now := co.b.Now()
		until := now.Add(lease)
		cancelRequested = d.Status == DreamCanceled
		d.Usage, d.LeaseUntil, d.UpdatedAt = usage, &until, now
		return tx.UpdateDream(d)
	})
	return cancelRequested, err
}

// FinishDream ends owner's dream id with status (completed, failed or
// canceled), its usage and, when failed, dreamErr: EndedAt is set, the
// lease let go, the dream's session archived, and the webhook event
// memstore.dream.completed or memstore.dream.failed queued in the same
// transaction (a canceled dream sends none). A dream canceled meanwhile
// stays canceled, its usage recorded.
func (co *Core) FinishDream(ctx context.Context, id, owner string, status DreamStatus, usage DreamUsage, dreamErr *DreamError) error {
	if !status.Final() {
		return Errorf(EInvalid, "a dream finishes completed, failed or canceled, not %q", status)
	}
	if status == DreamFailed && dreamErr == nil {
		return Errorf(EInvalid, "a failed dream needs its error")
	}
	return co.writeHeldDream(ctx, id, func(tx DreamTx) error {
		d, err := ownedDream(tx, id, owner)
		if err != nil {
			return err
		}
		now := co.b.Now()
		d.Usage, d.Owner, d.LeaseUntil, d.UpdatedAt = usage, "", nil, now
		if d.Status != DreamCanceled {
			d.Status, d.EndedAt = status, &now
			if status == DreamFailed {
				d.Error = &DreamError{Type: StorableText(dreamErr.Type, MaxDreamError), Message: StorableText(dreamErr.Message, MaxDreamError)}
			}
		}
		if d.SessionID != "" {
			if _, err := archiveSession(tx, d.SessionID, now); err != nil && ErrorCode(err) != ENotFound {
				return err
			}
		}
		if err := tx.UpdateDream(d); err != nil {
			return err
		}
		if typ := DreamWebhookType(d.Status); typ != "" {
			store := cmp.Or(d.OutputStoreID, d.InputStoreID)
			return tx.QueueWebhookEvent(WebhookEvent{Type: typ, WorkspaceID: d.WorkspaceID, StoreID: store, DreamID: d.ID, CreatedAt: now})
		}
		return nil
	})
}

// writeHeldDream runs fn in a write transaction of the workspace of
// dream id, for the worker's changes, which name a dream by its ID alone.
func (co *Core) writeHeldDream(ctx context.Context, id string, fn func(tx DreamTx) error) error {
	d, err := co.b.DreamByID(ctx, id)
	if err != nil {
		return err
	}
	return co.b.WriteDreams(ctx, d.WorkspaceID, fn)
}

// DreamWebhookType is the webhook event type of a dream that reached
// status: memstore.dream.completed or memstore.dream.failed; "" for any
// other.
func DreamWebhookType(status DreamStatus) string {
	switch status {
	case DreamCompleted:
		return WebhookDreamCompleted
	case DreamFailed:
		return WebhookDreamFailed
	}
	return ""
}

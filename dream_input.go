package memstore

import (
	"context"
	"slices"
)

// DreamInputEvents lists the events of session sessionID, one of the
// sessions input of dream id, for the worker owner that holds the dream:
// the transcripts a dream reads. The dream's own session caller reaches
// its own session only, so the core reads its inputs here, for the
// worker that holds the dream and for the sessions it was given alone.
// Trusted as the runner's other methods are (ClaimDream, BeginDream):
// only package dream calls it, with a filter of its own. EConflict when
// owner does not hold the dream; EPermission for a session that is not
// one of its inputs; ENotFound for an input session deleted since.
func (co *Core) DreamInputEvents(ctx context.Context, id, owner, sessionID string, f SessionEventFilter) (Page[SessionEvent], error) {
	d, err := co.b.DreamByID(ctx, id)
	switch {
	case err != nil:
		return Page[SessionEvent]{}, err
	case d.Owner != owner:
		return Page[SessionEvent]{}, errLeaseLost(id)
	case !slices.Contains(d.SessionIDs, sessionID):
		return Page[SessionEvent]{}, Errorf(EPermission, "session %s is not an input of dream %s", sessionID, id)
	}
	return co.b.SessionEvents(ctx, d.WorkspaceID, sessionID, f)
}

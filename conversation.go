package memstore

import (
	"context"
	"slices"
)

// ConversationKey is the metadata key by which a store says that its
// memories are turns of conversations ("true") or not ("false", the same
// as no key), and by which a session says so of every store its searches
// reach, whatever the stores say. A reserved key of the metadata the API
// already has, rather than a field of its own, so that the official SDKs
// set it as they set any metadata. Searches rank such memories with
// their neighbouring turns (SearchQuery.Conversation).
const ConversationKey = "memstore.conversation"

// validateConversationKey refuses a value of ConversationKey other than
// "true" or "false" (EInvalid).
func validateConversationKey(key, value string) error {
	if key == ConversationKey && value != "true" && value != "false" {
		return Errorf(EInvalid, "metadata %q must be \"true\" (the memories are turns of conversations, searched with their neighbouring turns) or \"false\", not %q", ConversationKey, shortName(value))
	}
	return nil
}

// Conversation reports whether the store says its memories are turns
// of conversations (ConversationKey "true").
func (s *Store) Conversation() bool {
	on, _ := conversationSays(s.Metadata)
	return on
}

// conversationSays reads ConversationKey in metadata: whether it is set,
// and to what.
func conversationSays(metadata map[string]string) (on, set bool) {
	v, ok := metadata[ConversationKey]
	return v == "true", ok
}

// conversationStores sets q.ConversationStores, the stores of storeIDs
// whose memories a search of the caller's ranks as turns of
// conversations, in one place for every surface: all or none when the
// query says (q.Conversation), else when the caller's session says
// (ConversationKey in its metadata), else each store that says so in its
// metadata (read only then).
func (co *Core) conversationStores(ctx context.Context, c *Caller, storeIDs []string, q *SearchQuery) error {
	q.ConversationStores = nil
	on, set := false, false
	switch {
	case q.Conversation != nil:
		on, set = *q.Conversation, true
	case c.Session != nil:
		on, set = conversationSays(c.Session.Metadata)
	}
	if set {
		if on {
			q.ConversationStores = slices.Clone(storeIDs)
		}
		return nil
	}
	for _, id := range storeIDs {
		s, err := co.b.Store(ctx, c.WorkspaceID, id)
		if err != nil {
			return err
		}
		if s.Conversation() {
			q.ConversationStores = append(q.ConversationStores, id)
		}
	}
	return nil
}

// A backend may keep in memory where the memories of the stores of
// conversations are, which a search of them reads for each of its best
// hits and their neighbouring turns, within these bounds and with the
// idle time and sweep of the copies of vectors (VectorCopyIdle).
const (
	// PlaceCopyBytes bounds the memory a process keeps of them: 256 MiB
	// holds about two million paths of 30 bytes. A store that would not
	// fit alone is read from the database at each search instead.
	PlaceCopyBytes = 256 << 20
	// PlaceCopyBytesPerWorkspace is a workspace's share of them, as
	// VectorCopyBytesPerWorkspace is of the vectors'.
	PlaceCopyBytesPerWorkspace = PlaceCopyBytes / 2
)

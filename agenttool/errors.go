package agenttool

import (
	"errors"

	"github.com/memstore/memstore"
)

// msgInternal is the text of every failure the model cannot act on; the
// cause may name internals, so it is never shown.
const msgInternal = "Memory is unavailable because of an internal error; nothing was changed. Try again later."

// explain turns an error of a service call about the memory at full (a
// full path, or a mount's directory) into a message for the model. The
// callers handle first the codes whose meaning depends on the operation
// (EPreconditionFailed, EPathConflict, ENotFound of a memory, and the
// EPermission of a change: see explainChange).
func explain(err error, m *mount, full string) error {
	var e *memstore.Error
	if !errors.As(err, &e) {
		return err // internal: Call gives a generic message
	}
	switch e.Code {
	case memstore.EInvalid:
		if memstore.IsArchived(e) {
			return failf("The memory store mounted at %s is archived: its memories can still be listed, searched and read, but not created, changed or deleted.", m.show(""))
		}
		// The services' EInvalid messages are written for clients and
		// name only what the request carried, or a store's limit.
		return failf("%s: %s.", full, trimDot(e.Error()))
	case memstore.ENotFound:
		return failf("The memory store mounted at %s no longer exists, so %s cannot be reached.", m.show(""), full)
	case memstore.EConflict:
		if e.Retry {
			return failf("The memory store mounted at %s is busy; nothing was changed. Try again in a moment.", m.show(""))
		}
		return failf("The memory store mounted at %s refused the change: %s.", m.show(""), trimDot(e.Error()))
	case memstore.EPermission:
		return failf("This session may not do that with %s: %s", full, accessText(m))
	case memstore.EUnauthenticated:
		return failf("Memory cannot be reached: this session's credentials were refused (the session may have ended).")
	case memstore.EPathConflict:
		return failf("%s cannot be written: it overlaps another memory. memory_list shows the memories around it.", full)
	case memstore.EPreconditionFailed:
		return failf("%s was changed by another writer meanwhile, so nothing was changed. Read it again with memory_read and retry on its current text.", full)
	case memstore.ERateLimited:
		// The server's message is for its operator; the model needs
		// only the wait.
		secs := memstore.RetrySeconds(e.RetryAfter)
		whose := "this session"
		if memstore.WorkspaceSearchRate(e) {
			whose = "this session's workspace, whose sessions and keys share a rate"
		}
		return failf("Memory searches are coming too fast for %s; nothing was searched. Wait %s and search again.", whose, count(secs, "second", "seconds"))
	}
	return err
}

// accessText says what a session may do with a mount.
func accessText(m *mount) string {
	if m.att.Writable() {
		return "the memory store mounted at " + m.show("") + " is attached read-write, but the server refused the request."
	}
	return "the memory store mounted at " + m.show("") + " is attached read-only: this session can list, search and read its memories but not create, change or delete them."
}

// explainChange is explain for a call that changes the memory at full: a
// refusal there is the services' (they decide what the session may do), and
// the message says why the memory cannot be changed, typically that its
// store is attached read-only.
func explainChange(err error, m *mount, full string) error {
	if memstore.ErrorCode(err) == memstore.EPermission {
		return failf("%s cannot be changed: %s", full, accessText(m))
	}
	return explain(err, m, full)
}

func trimDot(s string) string {
	for len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

package memstore

import (
	"context"
	"time"
)

// A Caller is who a request comes from, once authenticated: the workspace
// it acts in and the actor its changes are recorded as.
type Caller struct {
	WorkspaceID string
	Actor       Actor
	// Session is set when the caller holds a session token: it may then
	// reach only that session's stores, as their attachments allow (see
	// CanRead, CanWrite, CanAdminister). Nil for an API key.
	Session *Session
	// TokenID is the session token's ID ("" for an API key), so that its
	// revocation can be matched (Revocation.Stops).
	TokenID string
	// ExpiresAt is when the credential stops working by itself; nil when
	// it does not expire. Nothing may keep a caller past it.
	ExpiresAt *time.Time
	// Role is a console user's role, which narrows what the caller may do
	// (see Role); "" for every other credential.
	Role Role
}

// A Permission names what a caller asks to do, as a refusal says it
// ("a user with the auditor role cannot manage users"). Surfaces that
// ask before they offer (the console's links and forms) name the same
// permission as the call they lead to, so the two cannot drift apart.
type Permission string

// The permissions the Can methods check.
const (
	ReadMemories   Permission = "read memories"
	ChangeMemories Permission = "change memories"
	ListStores     Permission = "list memory stores"
	ManageStores   Permission = "manage memory stores"
	ReadSessions   Permission = "read sessions"
	ManageSessions Permission = "manage sessions"
	RedactVersions Permission = "redact versions"
	ListUsers      Permission = "list users"
	ManageUsers    Permission = "manage users"
	ListKeys       Permission = "list API keys"
	ManageKeys     Permission = "manage API keys"
	ManageWebhooks Permission = "manage webhooks"
	ListDreams     Permission = "list dreams"
	ManageDreams   Permission = "manage dreams"
)

// Credential names the credential c authenticated with, as a key of the
// shares that each credential has (searches, change-feed streams) and as
// messages say it: its session token, else its actor (API key, console
// user).
func (c *Caller) Credential() (key, name string) {
	switch {
	case c.Session != nil && c.TokenID != "":
		return "token\x00" + c.TokenID, "session token " + c.TokenID
	case c.Session != nil:
		return "session\x00" + c.Session.ID, "session " + c.Session.ID
	case c.Actor.Type == ActorUser:
		return string(c.Actor.Type) + "\x00" + c.Actor.ID, "user " + c.Actor.ID
	}
	return string(c.Actor.Type) + "\x00" + c.Actor.ID, "API key " + c.Actor.ID
}

// Expired reports whether c's credential has expired at now.
func (c *Caller) Expired(now time.Time) bool {
	return c.ExpiresAt != nil && !now.Before(*c.ExpiresAt)
}

// errNoCaller refuses a call made for nobody: every call of a service
// comes from an authenticated caller, so a nil one is a surface that
// skipped authentication.
func errNoCaller() error {
	return Errorf(EUnauthenticated, "no caller: every call to memstore must come from an authenticated caller")
}

// CanRead returns nil when the caller may read, list and search the
// memories and versions of a store: always for an API key or a user of
// any role, and for a session when the store is attached. Otherwise
// EPermission, whether or not the store exists, so that a session learns
// nothing of other stores. A nil caller may do nothing (EUnauthenticated).
func (c *Caller) CanRead(storeID string) error {
	switch {
	case c == nil:
		return errNoCaller()
	case c.Session == nil || c.Session.Attachment(storeID) != nil:
		return c.Role.allows(readData, ReadMemories)
	}
	return Errorf(EPermission, "memory store %s is not attached to session %s; a session token reaches only its own stores", storeID, c.Session.ID)
}

// CanWrite is CanRead for changes to memories: EPermission also when the
// store is attached read-only, or for a user whose role only reads.
func (c *Caller) CanWrite(storeID string) error {
	if err := c.CanRead(storeID); err != nil {
		return err
	}
	if c.Session == nil {
		return c.Role.allows(writeData, ChangeMemories)
	}
	if a := c.Session.Attachment(storeID); !a.Writable() {
		return Errorf(EPermission, "memory store %s is attached to session %s read-only; it cannot be changed", storeID, c.Session.ID)
	}
	return nil
}

// CanReadSession returns nil when the caller may read a session: an API
// key any of its workspace's, a user whose role reads the workspace's
// administration likewise, a session token its own alone (EPermission).
func (c *Caller) CanReadSession(sessionID string) error {
	return c.canReachSession(sessionID, readAdmin, ReadSessions)
}

// canReachSession returns nil when the caller may act on a session: an
// API key or a user whose role allows act on what, on any session of its
// workspace; a session caller on its own alone (EPermission).
func (c *Caller) canReachSession(sessionID string, act action, what Permission) error {
	switch {
	case c == nil:
		return errNoCaller()
	case c.Session == nil:
		return c.Role.allows(act, what)
	case c.Session.ID == sessionID:
		return nil
	}
	return Errorf(EPermission, "a session token reaches only its own session (%s)", c.Session.ID)
}

// CanAdminister returns nil when the caller may manage keys, users,
// sessions and redactions: an API key, or a user whose role administers
// (EPermission for a session or any other role).
func (c *Caller) CanAdminister(what Permission) error {
	return c.canManage(what, administer)
}

// CanManageStores returns nil when the caller may list and read the
// workspace's stores (write false) or create, change, archive and delete
// them (write true): an API key, or a user whose role reads, or writes,
// memories (EPermission for a session or any other role).
func (c *Caller) CanManageStores(write bool) error {
	act, what := readData, ListStores
	if write {
		act, what = writeData, ManageStores
	}
	if c != nil && c.Session != nil {
		what = ManageStores // a session may do neither
	}
	return c.canManage(what, act)
}

// CanReadAdmin returns nil when the caller may read what administrators
// manage (sessions, their tokens, users): an API key, or a user whose
// role reads it (EPermission for a session or any other role).
func (c *Caller) CanReadAdmin(what Permission) error {
	return c.canManage(what, readAdmin)
}

// canManage refuses a nil caller, a session (which manages nothing) and a
// role that does not allow act.
func (c *Caller) canManage(what Permission, act action) error {
	switch {
	case c == nil:
		return errNoCaller()
	case c.Session != nil:
		return Errorf(EPermission, "a session token cannot %s; use an API key", what)
	}
	return c.Role.allows(act, what)
}

// CheckHeld reads again what a caller held past its request (an event
// stream of storeID, or an MCP session with storeID "") stands on: its
// credential, by sessions' rule when it has one (CallerChecker), and, for
// a session token's caller of a store, that the store is still attached
// to the session as it is now (its stores may have changed since c was
// authenticated). EUnauthenticated when the credential no longer works,
// EPermission when the store is no longer the session's; nil when all
// still holds, or when there is nothing to read it by.
func CheckHeld(ctx context.Context, sessions SessionService, c *Caller, storeID string) error {
	if cc, ok := sessions.(CallerChecker); ok {
		if err := cc.CheckCaller(ctx, c); err != nil {
			return err
		}
	}
	if c == nil || c.Session == nil || storeID == "" || sessions == nil {
		return nil
	}
	ses, err := sessions.Session(ctx, c, c.Session.ID)
	if err != nil {
		return err
	}
	if ses.Attachment(storeID) == nil {
		return Errorf(EPermission, "memory store %s is no longer attached to session %s", storeID, ses.ID)
	}
	return nil
}

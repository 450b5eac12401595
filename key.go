package memstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// A Workspace is the unit of isolation: its stores, and everything in
// them, exist only for the credentials of that workspace.
type Workspace struct {
	ID        string // wrkspc_...
	Name      string // unique
	CreatedAt time.Time
}

// An APIKey is a credential of one workspace. Only a hash of its secret is
// kept; the secret itself is shown once, when the key is made.
type APIKey struct {
	ID          string // apikey_...
	WorkspaceID string
	Name        string
	// Hint is the end of the secret ("...a1b2"), enough for a person to
	// tell keys apart, too little to guess it.
	Hint       string
	CreatedAt  time.Time
	LastUsedAt *time.Time // nil until first used; updated at most once a minute
	RevokedAt  *time.Time // nil while the key works
}

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

// KeyService keeps workspaces and API keys, and authenticates secrets.
type KeyService interface {
	// CreateWorkspace makes a workspace (EInvalid for an empty or
	// overlong name; EConflict when the name is taken).
	CreateWorkspace(ctx context.Context, name string) (*Workspace, error)
	// Workspace returns the workspace with an ID or, failing that, a name
	// (ENotFound).
	Workspace(ctx context.Context, idOrName string) (*Workspace, error)
	// Workspaces lists all workspaces, oldest first.
	Workspaces(ctx context.Context) ([]Workspace, error)
	// CreateAPIKey makes a key in a workspace and returns it with its
	// secret, which is not kept and cannot be shown again (ENotFound for
	// an unknown workspace, EInvalid for an overlong name).
	CreateAPIKey(ctx context.Context, workspaceID, name string) (key *APIKey, secret string, err error)
	// APIKeys lists the keys of a workspace, or of all workspaces when
	// workspaceID is "", revoked ones included, oldest first.
	APIKeys(ctx context.Context, workspaceID string) ([]APIKey, error)
	// RevokeAPIKey stops a key from working, for good. Revoking again
	// changes nothing (ENotFound).
	RevokeAPIKey(ctx context.Context, id string) (*APIKey, error)
	// Authenticate returns the caller a secret stands for
	// (EUnauthenticated for an unknown or revoked secret; the message never
	// repeats the secret).
	Authenticate(ctx context.Context, secret string) (*Caller, error)
}

// DefaultWorkspace is the name of the workspace that a new server makes
// for its first key.
const DefaultWorkspace = "default"

// APIKeyPrefix begins every API key secret, so that people and secret
// scanners recognise one.
const APIKeyPrefix = "sk-memstore-"

// NewSecret returns prefix followed by 256 random bits in unpadded
// base64url: a credential that cannot be guessed, so a fast hash of it is
// as safe to keep as a slow one.
func NewSecret(prefix string) string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashSecret is the form in which a secret is kept and looked up: the
// lowercase hex SHA-256 of its bytes.
func HashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// SecretHint is the part of a secret that may be shown again: its last four
// characters.
func SecretHint(secret string) string {
	if len(secret) <= 8 {
		return "..."
	}
	return "..." + secret[len(secret)-4:]
}

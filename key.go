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
	// an unknown workspace, EInvalid for an overlong name, and
	// ErrAPIKeyLimit when the workspace holds MaxAPIKeysPerWorkspace
	// keys: the backend checks APIKeyQuota in the transaction of the
	// insert).
	CreateAPIKey(ctx context.Context, workspaceID, name string) (key *APIKey, secret string, err error)
	// APIKeys lists the keys of a workspace, or of all workspaces when
	// workspaceID is "", revoked ones included, oldest first: those whose
	// ID sorts after after ("" from the first), n at most (0 for all).
	APIKeys(ctx context.Context, workspaceID, after string, n int) ([]APIKey, error)
	// APIKey returns a key by ID, revoked or not (ENotFound): one indexed
	// read.
	APIKey(ctx context.Context, id string) (*APIKey, error)
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

// MaxAPIKeysPerWorkspace is how many API keys a workspace may hold,
// revoked ones included: a revoked key stays listed for good and no key
// can be deleted, so without a limit a workspace's keys would only grow.
const MaxAPIKeysPerWorkspace = 1000

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

// Keys manages a workspace's API keys for a caller that may: an API key
// or an admin changes them, an auditor lists them (CanAdminister,
// CanReadAdmin), a session token does neither. It is the KeyService's
// checked face for surfaces, as Users is for users; operators and
// authentication use the KeyService itself.
type Keys struct{ ks KeyService }

// NewKeys returns the API keys of ks, checked per caller.
func NewKeys(ks KeyService) *Keys { return &Keys{ks: ks} }

// maxKeyCursor bounds the cursor of the list of API keys, a key's ID.
const maxKeyCursor = 64

// APIKeys returns a page of the caller's workspace's keys, revoked ones
// included, oldest first: limit (0 for the default) from the page's
// cursor (the Next of the page before, "" for the first). Revoked keys
// stay listed, so a workspace's list only grows: it is paged.
func (k *Keys) APIKeys(ctx context.Context, c *Caller, page string, limit int) (Page[APIKey], error) {
	if err := c.CanReadAdmin(ListKeys); err != nil {
		return Page[APIKey]{}, err
	}
	n, err := PageSize(limit, false)
	if err != nil {
		return Page[APIKey]{}, err
	}
	// The cursor is a key's ID, as every database takes it.
	if len(page) > maxKeyCursor || ValidateText("page", page) != nil {
		return Page[APIKey]{}, Errorf(EInvalid, "page %.40q is not a cursor of the list of API keys; start from the first page", page)
	}
	keys, err := k.ks.APIKeys(ctx, c.WorkspaceID, page, n+1)
	if err != nil {
		return Page[APIKey]{}, err
	}
	p := Page[APIKey]{Items: keys}
	if len(keys) > n {
		p.Items = keys[:n]
		p.Next = keys[n-1].ID // keys are ordered by ID: the last one shown is where the next page starts
	}
	return p, nil
}

// APIKey returns a key of the caller's workspace by ID, revoked or not
// (ENotFound for a key of another workspace, as for none).
func (k *Keys) APIKey(ctx context.Context, c *Caller, id string) (*APIKey, error) {
	if err := c.CanReadAdmin(ListKeys); err != nil {
		return nil, err
	}
	return k.ownKey(ctx, c, id)
}

// ownKey is a key of the caller's workspace by ID, without a check of
// what the caller may do.
func (k *Keys) ownKey(ctx context.Context, c *Caller, id string) (*APIKey, error) {
	if err := ValidateID("api_key_id", id); err != nil {
		return nil, err
	}
	key, err := k.ks.APIKey(ctx, id)
	if ErrorCode(err) == ENotFound || err == nil && key.WorkspaceID != c.WorkspaceID {
		return nil, Errorf(ENotFound, "no API key %q in this workspace", id)
	}
	return key, err
}

// CreateAPIKey makes a key in the caller's workspace and returns it with
// its secret, shown this once (EInvalid for an overlong name or a
// workspace at MaxAPIKeysPerWorkspace).
func (k *Keys) CreateAPIKey(ctx context.Context, c *Caller, name string) (*APIKey, string, error) {
	if err := c.CanAdminister(ManageKeys); err != nil {
		return nil, "", err
	}
	return k.ks.CreateAPIKey(ctx, c.WorkspaceID, name)
}

// RevokeAPIKey stops a key of the caller's workspace from working, for
// good (ENotFound for a key of another workspace, as for none).
func (k *Keys) RevokeAPIKey(ctx context.Context, c *Caller, id string) (*APIKey, error) {
	if err := c.CanAdminister(ManageKeys); err != nil {
		return nil, err
	}
	if _, err := k.ownKey(ctx, c, id); err != nil {
		return nil, err
	}
	return k.ks.RevokeAPIKey(ctx, id)
}

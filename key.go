package memstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
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
// A Core implements it over its backend's KeyStorage: operators and
// authentication use it, before there is a caller.
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
	// keys).
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
	// Authenticate returns the caller a secret stands for, an API key or
	// a session token, told apart by its prefix (CredentialOf):
	// EUnauthenticated for an unknown or revoked secret, an expired token
	// or one of an archived session; the message never repeats the
	// secret.
	Authenticate(ctx context.Context, secret string) (*Caller, error)
}

// KeyStorage is KeyService as a backend keeps it: it stores workspaces
// and keys and looks keys up by the hash of their secret. It is trusted:
// only a Core calls it, which mints the secrets, checks the input and
// decides what a key that is found may do.
type KeyStorage interface {
	// CreateWorkspace stores a workspace named name, giving it an ID and
	// its creation time (EConflict when the name is taken).
	CreateWorkspace(ctx context.Context, name string) (*Workspace, error)
	Workspace(ctx context.Context, idOrName string) (*Workspace, error)
	Workspaces(ctx context.Context) ([]Workspace, error)
	// CreateAPIKey stores k, giving it an ID, with the hash of its
	// secret, once q allows one more key of k's workspace, checked in the
	// transaction of the insert (see Quota; ENotFound for an unknown
	// workspace).
	CreateAPIKey(ctx context.Context, k APIKey, secretHash string, q Quota) (*APIKey, error)
	APIKeys(ctx context.Context, workspaceID, after string, n int) ([]APIKey, error)
	APIKey(ctx context.Context, id string) (*APIKey, error)
	// APIKeyBySecret returns the key whose secret has hash secretHash,
	// revoked or not (ENotFound): one indexed read.
	APIKeyBySecret(ctx context.Context, secretHash string) (*APIKey, error)
	// RevokeAPIKey sets a key's RevokedAt to at, unless it has one
	// already, and announces r with it (see Revocation; ENotFound).
	RevokeAPIKey(ctx context.Context, id string, at time.Time, r Revocation) (*APIKey, error)
	// TouchAPIKey sets a key's LastUsedAt.
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
	// Now is the time by the backend's clock, as it keeps times: the
	// time the Core stamps what it stores with, and judges it by.
	Now() time.Time
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

// A Credential is the kind of secret a caller presents, as its prefix
// tells before any lookup.
type Credential int

// The kinds of secrets.
const (
	NoCredential           Credential = iota // neither prefix: no secret memstore makes
	APIKeyCredential                         // begins with APIKeyPrefix
	SessionTokenCredential                   // begins with SessionTokenPrefix
)

// CredentialOf tells what kind of credential secret is, by its prefix
// alone: the one place where a secret's kind is decided.
func CredentialOf(secret string) Credential {
	switch {
	case strings.HasPrefix(secret, APIKeyPrefix):
		return APIKeyCredential
	case strings.HasPrefix(secret, SessionTokenPrefix):
		return SessionTokenCredential
	}
	return NoCredential
}

// lastUsedEvery is how stale a key's LastUsedAt may get: authentication
// is a read, and turning every one into a write would make every request
// write.
const lastUsedEvery = time.Minute

// CreateWorkspace implements KeyService.
func (co *Core) CreateWorkspace(ctx context.Context, name string) (*Workspace, error) {
	if err := ValidateWorkspaceName(name); err != nil {
		return nil, err
	}
	return co.b.CreateWorkspace(ctx, name)
}

// Workspace implements KeyService.
func (co *Core) Workspace(ctx context.Context, idOrName string) (*Workspace, error) {
	return co.b.Workspace(ctx, idOrName)
}

// Workspaces implements KeyService.
func (co *Core) Workspaces(ctx context.Context) ([]Workspace, error) {
	return co.b.Workspaces(ctx)
}

// CreateAPIKey implements KeyService: the secret is minted here, and
// only its hash is stored.
func (co *Core) CreateAPIKey(ctx context.Context, workspaceID, name string) (*APIKey, string, error) {
	if err := ValidateKeyName(name); err != nil {
		return nil, "", err
	}
	secret := NewSecret(APIKeyPrefix)
	k := APIKey{WorkspaceID: workspaceID, Name: name, Hint: SecretHint(secret), CreatedAt: co.b.Now()}
	nk, err := co.b.CreateAPIKey(ctx, k, HashSecret(secret), APIKeyQuota(workspaceID))
	if err != nil {
		return nil, "", err
	}
	return nk, secret, nil
}

// APIKeys implements KeyService.
func (co *Core) APIKeys(ctx context.Context, workspaceID, after string, n int) ([]APIKey, error) {
	return co.b.APIKeys(ctx, workspaceID, after, n)
}

// APIKey implements KeyService.
func (co *Core) APIKey(ctx context.Context, id string) (*APIKey, error) {
	return co.b.APIKey(ctx, id)
}

// RevokeAPIKey implements KeyService: whatever holds the key's callers
// lets go of them (Revocation).
func (co *Core) RevokeAPIKey(ctx context.Context, id string) (*APIKey, error) {
	return co.b.RevokeAPIKey(ctx, id, co.b.Now(), Revocation{APIKeyID: id})
}

// Authenticate implements KeyService: the secret's prefix says which
// credential to look up, by the hash of the secret.
func (co *Core) Authenticate(ctx context.Context, secret string) (*Caller, error) {
	switch CredentialOf(secret) {
	case APIKeyCredential:
		return co.authenticateKey(ctx, secret)
	case SessionTokenCredential:
		return co.authenticateToken(ctx, secret)
	}
	return nil, errInvalidKey()
}

func errInvalidKey() error { return Errorf(EUnauthenticated, "invalid API key") }

// authenticateKey is the caller of an API key's secret: one indexed
// lookup, and a write only when LastUsedAt is older than lastUsedEvery.
func (co *Core) authenticateKey(ctx context.Context, secret string) (*Caller, error) {
	k, err := co.b.APIKeyBySecret(ctx, HashSecret(secret))
	switch {
	case ErrorCode(err) == ENotFound:
		return nil, errInvalidKey()
	case err != nil:
		return nil, err
	case k.RevokedAt != nil:
		return nil, errKeyRevoked(k.ID)
	}
	if now := co.b.Now(); k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= lastUsedEvery {
		if err := co.b.TouchAPIKey(ctx, k.ID, now); err != nil {
			return nil, err
		}
	}
	return &Caller{WorkspaceID: k.WorkspaceID, Actor: Actor{Type: ActorAPIKey, ID: k.ID}}, nil
}

// authenticateToken is the caller of a session token's secret: its
// session's, if the token still works (checkToken).
func (co *Core) authenticateToken(ctx context.Context, secret string) (*Caller, error) {
	t, s, err := co.b.SessionTokenBySecret(ctx, HashSecret(secret))
	switch {
	case ErrorCode(err) == ENotFound:
		return nil, errInvalidToken()
	case err != nil:
		return nil, err
	}
	if err := checkToken(t, s, co.b.Now()); err != nil {
		return nil, err
	}
	return &Caller{WorkspaceID: s.WorkspaceID, Actor: Actor{Type: ActorSession, ID: s.ID}, Session: s,
		TokenID: t.ID, ExpiresAt: t.ExpiresAt}, nil
}

func errInvalidToken() error { return Errorf(EUnauthenticated, "invalid session token") }

// APIKeyService manages the API keys of the caller's workspace: Keys
// implements it over a KeyService, the HTTP API serves it, and
// httpapi.Client calls it on a server. Only a caller that administers
// changes keys (CanAdminister), one that reads the administration lists
// them (CanReadAdmin), and a session token does neither; a key of
// another workspace is not found.
type APIKeyService interface {
	APIKeys(ctx context.Context, c *Caller, page string, limit int) (Page[APIKey], error)
	APIKey(ctx context.Context, c *Caller, id string) (*APIKey, error)
	CreateAPIKey(ctx context.Context, c *Caller, name string) (*APIKey, string, error)
	RevokeAPIKey(ctx context.Context, c *Caller, id string) (*APIKey, error)
}

var _ APIKeyService = (*Keys)(nil)

// Keys manages a workspace's API keys for a caller that may: an API key
// or an admin changes them, an auditor lists them (CanAdminister,
// CanReadAdmin), a session token does neither. It is the KeyService's
// checked face for surfaces, as Users is for users; operators and
// authentication use the KeyService itself (a Core).
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

package httpapi

import (
	"net/http"
	"time"

	"github.com/memstore/memstore"
)

// AdminPrefix begins memstore's own administration routes, API keys and
// console users (docs/api.md, Administration): a prefix the hosted API
// does not use, so that they never answer for its organization routes,
// whose objects differ.
const AdminPrefix = "/v1/memstore"

// The paths of the administration routes.
const (
	apiKeysPath = AdminPrefix + "/api_keys"
	usersPath   = AdminPrefix + "/users"
)

// routeAPIKeys adds the routes of the caller's workspace's API keys (the
// key service decides who may).
func (s *Server) routeAPIKeys() {
	const key = apiKeysPath + "/{api_key_id}"
	s.handle("POST "+apiKeysPath, s.createAPIKey)
	s.handle("GET "+apiKeysPath, s.listAPIKeys)
	s.handle("GET "+key, s.getAPIKey)
	s.handle("POST "+key+"/revoke", s.revokeAPIKey)
}

// routeUsers adds the routes of the caller's workspace's console users
// (the user service decides who may).
func (s *Server) routeUsers() {
	const user = usersPath + "/{user}"
	s.handle("POST "+usersPath, s.createUser)
	s.handle("GET "+usersPath, s.listUsers)
	s.handle("GET "+user, s.getUser)
	s.handle("DELETE "+user, s.deleteUser)
	s.handle("POST "+user+"/password", s.setUserPassword)
	s.handle("POST "+user+"/sign_in_link", s.createSignInLink)
}

// APIKeyJSON is an api_key object. Secret is set only in the answer to
// create: it is not kept and never shown again.
type APIKeyJSON struct {
	Type        string     `json:"type"`
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Name        string     `json:"name"`
	Hint        string     `json:"hint"`
	CreatedAt   Timestamp  `json:"created_at"`
	LastUsedAt  *Timestamp `json:"last_used_at"`
	RevokedAt   *Timestamp `json:"revoked_at"`
	Secret      string     `json:"secret,omitempty"`
}

// NewAPIKeyJSON is k on the wire, with secret ("" but on create).
func NewAPIKeyJSON(k *memstore.APIKey, secret string) APIKeyJSON {
	return APIKeyJSON{Type: "api_key", ID: k.ID, WorkspaceID: k.WorkspaceID, Name: k.Name, Hint: k.Hint,
		CreatedAt: Timestamp(k.CreatedAt), LastUsedAt: timestampPtr(k.LastUsedAt), RevokedAt: timestampPtr(k.RevokedAt), Secret: secret}
}

// APIKey is the key j stands for.
func (j *APIKeyJSON) APIKey() *memstore.APIKey {
	return &memstore.APIKey{ID: j.ID, WorkspaceID: j.WorkspaceID, Name: j.Name, Hint: j.Hint,
		CreatedAt: time.Time(j.CreatedAt), LastUsedAt: timePtr(j.LastUsedAt), RevokedAt: timePtr(j.RevokedAt)}
}

func (s *Server) createAPIKey(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var b struct {
		Name *string `json:"name"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		return err
	}
	k, secret, err := s.apiKeys.CreateAPIKey(r.Context(), c, deref(b.Name))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewAPIKeyJSON(k, secret))
	return nil
}

func (s *Server) listAPIKeys(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	limit, page := p.limit(false), p.get("page")
	if p.err != nil {
		return p.err
	}
	keys, err := s.apiKeys.APIKeys(r.Context(), c, page, limit)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(keys, func(k *memstore.APIKey) APIKeyJSON { return NewAPIKeyJSON(k, "") }))
	return nil
}

func (s *Server) getAPIKey(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	k, err := s.apiKeys.APIKey(r.Context(), c, r.PathValue("api_key_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewAPIKeyJSON(k, ""))
	return nil
}

func (s *Server) revokeAPIKey(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	k, err := s.apiKeys.RevokeAPIKey(r.Context(), c, r.PathValue("api_key_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewAPIKeyJSON(k, ""))
	return nil
}

// UserJSON is a user object: never the password or its hash, only
// whether there is one.
type UserJSON struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Name        string    `json:"name"`
	Role        string    `json:"role"`
	HasPassword bool      `json:"has_password"`
	CreatedAt   Timestamp `json:"created_at"`
	UpdatedAt   Timestamp `json:"updated_at"`
}

// NewUserJSON is u on the wire.
func NewUserJSON(u *memstore.User) UserJSON {
	return UserJSON{Type: "user", ID: u.ID, WorkspaceID: u.WorkspaceID, Name: u.Name, Role: string(u.Role),
		HasPassword: u.HasPassword, CreatedAt: Timestamp(u.CreatedAt), UpdatedAt: Timestamp(u.UpdatedAt)}
}

// User is the user j stands for.
func (j *UserJSON) User() *memstore.User {
	return &memstore.User{ID: j.ID, WorkspaceID: j.WorkspaceID, Name: j.Name, Role: memstore.Role(j.Role),
		HasPassword: j.HasPassword, CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.UpdatedAt)}
}

// SignInLinkJSON is the answer to a sign-in link's creation: its secret,
// shown this once, which the console's /link?t= page redeems.
type SignInLinkJSON struct {
	Type      string    `json:"type"`
	UserID    string    `json:"user_id"`
	Secret    string    `json:"secret"`
	ExpiresAt Timestamp `json:"expires_at"`
}

// userBody is the body of a user's creation; password, when present,
// also that of a new password.
type userBody struct {
	Name     *string `json:"name"`
	Role     *string `json:"role"`
	Password *string `json:"password"`
}

func (s *Server) createUser(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var b userBody
	if err := s.decodeBody(w, r, &b); err != nil {
		return err
	}
	u, err := s.users.CreateUser(r.Context(), c, memstore.UserCreate{Name: deref(b.Name), Role: memstore.Role(deref(b.Role)), Password: deref(b.Password)})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewUserJSON(u))
	return nil
}

func (s *Server) listUsers(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	f := memstore.UserFilter{Limit: p.limit(false), Page: p.get("page")}
	if p.err != nil {
		return p.err
	}
	users, err := s.users.Users(r.Context(), c, f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(users, NewUserJSON))
	return nil
}

func (s *Server) getUser(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	u, err := s.users.User(r.Context(), c, r.PathValue("user"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewUserJSON(u))
	return nil
}

func (s *Server) deleteUser(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	// Read first, to answer with the user's ID when named by name.
	u, err := s.users.User(r.Context(), c, r.PathValue("user"))
	if err != nil {
		return err
	}
	if err := s.users.DeleteUser(r.Context(), c, u.ID); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, DeletedJSON{Type: "user_deleted", ID: u.ID})
	return nil
}

func (s *Server) setUserPassword(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var b userBody
	if err := s.decodeBody(w, r, &b); err != nil {
		return err
	}
	if b.Password == nil {
		return invalid("password is required")
	}
	u, err := s.users.SetPassword(r.Context(), c, r.PathValue("user"), *b.Password)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewUserJSON(u))
	return nil
}

func (s *Server) createSignInLink(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	u, err := s.users.User(r.Context(), c, r.PathValue("user"))
	if err != nil {
		return err
	}
	secret, expires, err := s.users.CreateSignInLink(r.Context(), c, u.ID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, SignInLinkJSON{Type: "sign_in_link", UserID: u.ID, Secret: secret, ExpiresAt: Timestamp(expires)})
	return nil
}

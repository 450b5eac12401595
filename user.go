package memstore

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A User is a person who signs in to the console. Users belong to one
// workspace, where their name is unique; their role decides what they may
// do there (see Role), and their changes are recorded as
// Actor{ActorUser, ID}.
type User struct {
	ID          string // user_...
	WorkspaceID string
	Name        string
	Role        Role
	// PasswordHash is the password's HashPassword, "" while the user has
	// none (one who signs in with a link). Users never returns it, but
	// says whether there is one in HasPassword.
	PasswordHash string
	HasPassword  bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// UserCreate is a new user. Password may be "", for a user who will sign
// in with a link (Users.CreateSignInLink) and set one later.
type UserCreate struct {
	Name     string
	Role     Role
	Password string
}

// UserFilter selects users for a list, by name.
type UserFilter struct {
	Limit int    // page size, 1-100
	Page  string // cursor from a previous page's Next
}

// A SignIn is a user's console session, or a one-time sign-in link. Only
// the hash of its secret is kept.
type SignIn struct {
	SecretHash  string // HashSecret of the secret
	UserID      string
	WorkspaceID string
	Link        bool // a sign-in link, good for one sign-in, not a session
	CreatedAt   time.Time
	LastSeenAt  time.Time // the last request, to within signInTouchEvery
	ExpiresAt   time.Time // when it stops working, however active
}

// UserStorage keeps users and their sign-ins. Like the other storage
// interfaces it trusts its caller: only Users calls it.
type UserStorage interface {
	// Workspace returns a workspace by ID or name (ENotFound).
	Workspace(ctx context.Context, idOrName string) (*Workspace, error)
	// CreateUser stores u, giving it an ID (ENotFound for an unknown
	// workspace, EConflict when the name is taken there).
	CreateUser(ctx context.Context, workspaceID string, u User) (*User, error)
	// User returns a user of the workspace by ID or name (ENotFound).
	User(ctx context.Context, workspaceID, idOrName string) (*User, error)
	// Users lists a workspace's users by name, f.Limit (already sized) at
	// a time; Next is the cursor of the following page.
	Users(ctx context.Context, workspaceID string, f UserFilter) (Page[User], error)
	// HasUsers reports whether there is any user, in any workspace.
	HasUsers(ctx context.Context) (bool, error)
	// SetUserPassword sets a user's password hash and UpdatedAt, and
	// removes all the user's sign-ins, in one transaction (ENotFound).
	SetUserPassword(ctx context.Context, workspaceID, id, hash string, at time.Time) (*User, error)
	// SetUserRole sets a user's role and UpdatedAt (ENotFound).
	SetUserRole(ctx context.Context, workspaceID, id string, role Role, at time.Time) (*User, error)
	// DeleteUser removes a user with its sign-ins (ENotFound).
	DeleteUser(ctx context.Context, workspaceID, id string) error
	// CreateSignIn stores s.
	CreateSignIn(ctx context.Context, s SignIn) error
	// SignIn returns the sign-in with a secret's hash and its user
	// (ENotFound).
	SignIn(ctx context.Context, secretHash string) (*SignIn, *User, error)
	// TouchSignIn sets a sign-in's LastSeenAt.
	TouchSignIn(ctx context.Context, secretHash string, at time.Time) error
	// DeleteSignIn removes a sign-in, reporting whether there was one.
	DeleteSignIn(ctx context.Context, secretHash string) (bool, error)
	// DeleteExpiredSignIns removes every sign-in that expires at or
	// before now.
	DeleteExpiredSignIns(ctx context.Context, now time.Time) error
	// TakeSignInAttempt runs take on the count of sign-in attempts kept
	// under key (nil when none is kept) and keeps the count it returns,
	// in one transaction, so that concurrent attempts, on any server of
	// the database, are counted one after another (take may run more
	// than once; the last run counts). First it deletes the counts whose
	// FullAt is at or before now; and when key is new and max counts are
	// kept, it deletes those with the earliest FullAt to make room.
	TakeSignInAttempt(ctx context.Context, key string, now time.Time, max int, take func(*AttemptCount) AttemptCount) error
}

// The limits of users and their sign-ins.
const (
	MaxUserName = 64 // characters
	// DefaultSignInIdle is how long a console session lasts without a
	// request; DefaultSignInLifetime how long it lasts at most.
	DefaultSignInIdle     = 30 * time.Minute
	DefaultSignInLifetime = 12 * time.Hour
	// SignInLinkTTL is how long a sign-in link works, once.
	SignInLinkTTL = 15 * time.Minute
	// signInTouchEvery is how stale a session's LastSeenAt may get, so
	// that not every request of the console writes.
	signInTouchEvery = time.Minute
)

// The prefixes of the console's secrets, so that people and secret
// scanners recognise them, and neither stands for the other.
const (
	SignInSecretPrefix = "memstore-console-"
	SignInLinkPrefix   = "memstore-link-"
)

// ErrSignIn is the one answer to a failed sign-in, whatever failed, so
// that it tells nobody which user names exist.
func ErrSignIn() *Error {
	return Errorf(EUnauthenticated, "wrong workspace, user name or password")
}

// userField names a user's ID or name in messages.
const userField = "user"

// ValidateUserName checks a user name: 1-64 characters, letters, digits
// and . _ - @ only, not looking like a user ID (EInvalid).
func ValidateUserName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0 || n > MaxUserName:
		return Errorf(EInvalid, "user name must be 1-%d characters", MaxUserName)
	case strings.HasPrefix(name, UserIDPrefix):
		return Errorf(EInvalid, "user name %q must not look like a user ID", name)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(".-_@", r) {
			return Errorf(EInvalid, "user name %q may hold only letters, digits, '.', '-', '_' and '@'", name)
		}
	}
	return nil
}

// UserService manages the console users of the caller's workspace: Users
// implements it, the HTTP API serves it, and httpapi.Client calls it on a
// server. Only a caller that administers changes users (CanAdminister),
// one that reads the administration reads them (CanReadAdmin), and a
// session token does neither; a user of another workspace is not found.
type UserService interface {
	CreateUser(ctx context.Context, c *Caller, uc UserCreate) (*User, error)
	User(ctx context.Context, c *Caller, idOrName string) (*User, error)
	Users(ctx context.Context, c *Caller, f UserFilter) (Page[User], error)
	DeleteUser(ctx context.Context, c *Caller, idOrName string) error
	SetPassword(ctx context.Context, c *Caller, idOrName, password string) (*User, error)
	CreateSignInLink(ctx context.Context, c *Caller, idOrName string) (secret string, expires time.Time, err error)
}

var _ UserService = (*Users)(nil)

// Users is the core of console users: it manages users for callers,
// checking what each may do (Caller.CanAdminister, CanReadAdmin) before
// the storage is called, and signs users in, turning a user into the
// Caller (Actor{ActorUser, user_...}, with the user's Role) that the
// console calls every other service as. It is safe for concurrent use
// when its storage is.
type Users struct {
	s        UserStorage
	now      func() time.Time
	idle     time.Duration
	lifetime time.Duration
}

// A UsersOption configures Users.
type UsersOption func(*Users)

// SignInExpiry sets how long a console session lasts without a request
// (idle) and at most (lifetime); 0 keeps the default.
func SignInExpiry(idle, lifetime time.Duration) UsersOption {
	return func(us *Users) {
		if idle > 0 {
			us.idle = idle
		}
		if lifetime > 0 {
			us.lifetime = lifetime
		}
	}
}

// UsersClock sets the clock of Users, for tests.
func UsersClock(now func() time.Time) UsersOption {
	return func(us *Users) { us.now = now }
}

// NewUsers returns the users kept in s.
func NewUsers(s UserStorage, opts ...UsersOption) *Users {
	us := &Users{s: s, now: time.Now, idle: DefaultSignInIdle, lifetime: DefaultSignInLifetime}
	for _, o := range opts {
		o(us)
	}
	return us
}

// withoutHash is u as Users returns it: without its password's hash.
func withoutHash(u *User) *User {
	if u != nil {
		u.HasPassword, u.PasswordHash = u.PasswordHash != "", ""
	}
	return u
}

// CreateUser makes a user in the caller's workspace (EPermission unless
// the caller administers; EInvalid for a bad name, role or password;
// EConflict for a taken name).
func (us *Users) CreateUser(ctx context.Context, c *Caller, uc UserCreate) (*User, error) {
	if err := c.CanAdminister(ManageUsers); err != nil {
		return nil, err
	}
	if err := ValidateUserName(uc.Name); err != nil {
		return nil, err
	}
	if err := ValidateRole(uc.Role); err != nil {
		return nil, err
	}
	u := User{Name: uc.Name, Role: uc.Role}
	if uc.Password != "" {
		if err := ValidatePassword(uc.Password); err != nil {
			return nil, err
		}
		h, err := HashPassword(ctx, uc.Password)
		if err != nil {
			return nil, err
		}
		u.PasswordHash = h
	}
	now := us.now()
	u.CreatedAt, u.UpdatedAt = now, now
	nu, err := us.s.CreateUser(ctx, c.WorkspaceID, u)
	return withoutHash(nu), err
}

// User returns a user of the caller's workspace by ID or name (ENotFound;
// EPermission unless the caller may read users).
func (us *Users) User(ctx context.Context, c *Caller, idOrName string) (*User, error) {
	if err := c.CanReadAdmin(ListUsers); err != nil {
		return nil, err
	}
	if err := ValidateID(userField, idOrName); err != nil {
		return nil, err
	}
	u, err := us.s.User(ctx, c.WorkspaceID, idOrName)
	return withoutHash(u), err
}

// Users lists the users of the caller's workspace by name.
func (us *Users) Users(ctx context.Context, c *Caller, f UserFilter) (Page[User], error) {
	if err := c.CanReadAdmin(ListUsers); err != nil {
		return Page[User]{}, err
	}
	n, err := PageSize(f.Limit, false)
	if err != nil {
		return Page[User]{}, err
	}
	f.Limit = n
	p, err := us.s.Users(ctx, c.WorkspaceID, f)
	for i := range p.Items {
		withoutHash(&p.Items[i])
	}
	return p, err
}

// AnyUsers reports whether the database has a console user, in any
// workspace. It asks for no caller: it tells nothing but that, so that
// the console's sign-in page can tell a new installation how to make the
// first user.
func (us *Users) AnyUsers(ctx context.Context) (bool, error) {
	return us.s.HasUsers(ctx)
}

// DeleteUser removes a user by ID or name, ending its sign-ins; the
// versions it made still name it. A user cannot remove themselves.
func (us *Users) DeleteUser(ctx context.Context, c *Caller, idOrName string) error {
	u, err := us.otherUser(ctx, c, idOrName, "remove yourself")
	if err != nil {
		return err
	}
	return us.s.DeleteUser(ctx, c.WorkspaceID, u.ID)
}

// SetRole changes a user's role, in force from the user's next request
// (EInvalid for a role not of Roles). A user cannot change their own
// role: an administrator who could would be able to leave the workspace
// with none.
func (us *Users) SetRole(ctx context.Context, c *Caller, idOrName string, role Role) (*User, error) {
	if err := ValidateRole(role); err != nil {
		return nil, err
	}
	u, err := us.otherUser(ctx, c, idOrName, "change your own role")
	if err != nil {
		return nil, err
	}
	nu, err := us.s.SetUserRole(ctx, c.WorkspaceID, u.ID, role, us.now())
	return withoutHash(nu), err
}

// otherUser is the user an administrator manages, which must not be the
// caller (EPermission, saying that the caller cannot do what).
func (us *Users) otherUser(ctx context.Context, c *Caller, idOrName, what string) (*User, error) {
	if err := c.CanAdminister(ManageUsers); err != nil {
		return nil, err
	}
	if err := ValidateID(userField, idOrName); err != nil {
		return nil, err
	}
	u, err := us.s.User(ctx, c.WorkspaceID, idOrName)
	if err != nil {
		return nil, err
	}
	if c.Actor == (Actor{Type: ActorUser, ID: u.ID}) {
		return nil, Errorf(EPermission, "you cannot %s; another administrator can", what)
	}
	return u, nil
}

// SetPassword sets a user's password, ending all the user's sign-ins: a
// user may set their own, an administrator anyone's (EPermission
// otherwise; EInvalid for a bad password).
func (us *Users) SetPassword(ctx context.Context, c *Caller, idOrName, password string) (*User, error) {
	if c == nil {
		return nil, errNoCaller()
	}
	if err := ValidateID(userField, idOrName); err != nil {
		return nil, err
	}
	u, err := us.s.User(ctx, c.WorkspaceID, idOrName)
	if err != nil && ErrorCode(err) != ENotFound {
		return nil, err
	}
	self := u != nil && c.Session == nil && c.Actor == Actor{Type: ActorUser, ID: u.ID}
	if !self {
		if err := c.CanAdminister(ManageUsers); err != nil {
			return nil, err
		}
	}
	if u == nil {
		return nil, err
	}
	if err := ValidatePassword(password); err != nil {
		return nil, err
	}
	h, err := HashPassword(ctx, password)
	if err != nil {
		return nil, err
	}
	nu, err := us.s.SetUserPassword(ctx, c.WorkspaceID, u.ID, h, us.now())
	return withoutHash(nu), err
}

// ChangePassword sets the password of the signed-in user c is, and
// returns the secret of a new console session, which ends when c's
// would have: every other sign-in of the user ends, as with SetPassword.
// A user who has a password must give it as current: a wrong one is
// refused (EPermission) and counts against the name's allowance of
// sign-in attempts, past which it is a *SignInLimited; a user who signs
// in with links only has none to give, and sets a first one. EInvalid
// for a new password that breaks ValidatePassword; EPermission for a
// caller that is not a signed-in user.
func (us *Users) ChangePassword(ctx context.Context, c *Caller, current, password string) (string, *User, error) {
	switch {
	case c == nil:
		return "", nil, errNoCaller()
	case c.Actor.Type != ActorUser || c.Session != nil || c.ExpiresAt == nil:
		return "", nil, Errorf(EPermission, "only a user signed in to the console changes their own password this way; an administrator sets another's with 'memstore users passwd'")
	}
	if err := ValidatePassword(password); err != nil {
		return "", nil, err
	}
	u, err := us.s.User(ctx, c.WorkspaceID, c.Actor.ID)
	if err != nil {
		return "", nil, err
	}
	if u.PasswordHash != "" {
		if err := us.attempt(ctx, nameKey(u.WorkspaceID, u.ID), SignInNameBurst, SignInNameInterval, false); err != nil {
			return "", nil, err
		}
		ok, err := CheckPassword(ctx, u.PasswordHash, current)
		switch {
		case err != nil:
			return "", nil, err
		case !ok:
			return "", nil, Errorf(EPermission, "the current password is not right, so the password was not changed")
		}
	}
	h, err := HashPassword(ctx, password)
	if err != nil {
		return "", nil, err
	}
	nu, err := us.s.SetUserPassword(ctx, c.WorkspaceID, u.ID, h, us.now())
	if err != nil {
		return "", nil, err
	}
	secret, _, err := us.startUntil(ctx, nu, *c.ExpiresAt)
	return secret, withoutHash(nu), err
}

// CreateSignInLink returns the secret of a link that signs a user in
// once, within SignInLinkTTL, and when it stops working.
func (us *Users) CreateSignInLink(ctx context.Context, c *Caller, idOrName string) (string, time.Time, error) {
	if err := c.CanAdminister(ManageUsers); err != nil {
		return "", time.Time{}, err
	}
	if err := ValidateID(userField, idOrName); err != nil {
		return "", time.Time{}, err
	}
	u, err := us.s.User(ctx, c.WorkspaceID, idOrName)
	if err != nil {
		return "", time.Time{}, err
	}
	now := us.now()
	secret := NewSecret(SignInLinkPrefix)
	s := SignIn{SecretHash: HashSecret(secret), UserID: u.ID, WorkspaceID: u.WorkspaceID, Link: true,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SignInLinkTTL)}
	if err := us.s.CreateSignIn(ctx, s); err != nil {
		return "", time.Time{}, err
	}
	return secret, s.ExpiresAt, nil
}

// SignIn checks a user's password and starts a console session: it
// returns the session's secret and the user's caller. Past the name's
// allowance (SignInNameBurst, then one per SignInNameInterval, counted
// in the database) it refuses with a *SignInLimited before checking the
// password. Every other refusal is ErrSignIn, and takes as long whether
// or not the user exists, a workspace or user name that no workspace or
// user can have (not text: ValidateText) included; a request that ends
// while waiting to check the password fails with its context's error.
func (us *Users) SignIn(ctx context.Context, workspace, name, password string) (string, *Caller, error) {
	u, wsKey, err := us.signInUser(ctx, workspace, name)
	if err != nil {
		return "", nil, err
	}
	userKey := name
	if u != nil {
		userKey = u.ID
	}
	if err := us.attempt(ctx, nameKey(wsKey, userKey), SignInNameBurst, SignInNameInterval, false); err != nil {
		return "", nil, err
	}
	hash := dummyPasswordHash
	if u != nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	ok, err := CheckPassword(ctx, hash, password)
	if err != nil {
		return "", nil, err
	}
	if !ok || u == nil || u.PasswordHash == "" {
		return "", nil, ErrSignIn()
	}
	return us.start(ctx, u)
}

// signInUser is the user a sign-in names, nil when there is none: when
// the workspace or the user is not found, or either name is no text
// (ValidateText), which no workspace or user has and no backend could
// look up. wsKey is what the name's sign-in allowance is counted under:
// the workspace's ID when it exists, so that a workspace named by name
// or by ID shares one allowance, and the name as given otherwise.
func (us *Users) signInUser(ctx context.Context, workspace, name string) (u *User, wsKey string, err error) {
	if ValidateText("workspace", workspace) != nil || ValidateText("name", name) != nil {
		return nil, workspace, nil
	}
	w, err := us.s.Workspace(ctx, workspace)
	switch {
	case ErrorCode(err) == ENotFound:
		return nil, workspace, nil
	case err != nil:
		return nil, "", err
	}
	u, err = us.s.User(ctx, w.ID, name)
	switch {
	case ErrorCode(err) == ENotFound:
		return nil, w.ID, nil
	case err != nil:
		return nil, "", err
	}
	return u, w.ID, nil
}

// RedeemLink signs a user in with a sign-in link's secret, which then
// stops working: it returns a new session's secret and the caller.
func (us *Users) RedeemLink(ctx context.Context, secret string) (string, *Caller, error) {
	bad := Errorf(EUnauthenticated, "this sign-in link is not valid: it has been used, has expired or was never made; ask an administrator for a new one")
	if !strings.HasPrefix(secret, SignInLinkPrefix) {
		return "", nil, bad
	}
	h := HashSecret(secret)
	s, u, err := us.s.SignIn(ctx, h)
	switch {
	case ErrorCode(err) == ENotFound:
		return "", nil, bad
	case err != nil:
		return "", nil, err
	case !s.Link:
		return "", nil, bad
	}
	// Deleting first makes the link good for one sign-in, however many
	// try it at once.
	if taken, err := us.s.DeleteSignIn(ctx, h); err != nil || !taken {
		if err != nil {
			return "", nil, err
		}
		return "", nil, bad
	}
	if !us.now().Before(s.ExpiresAt) {
		return "", nil, bad
	}
	return us.start(ctx, u)
}

// start makes a console session for u, first clearing out expired ones.
func (us *Users) start(ctx context.Context, u *User) (string, *Caller, error) {
	return us.startUntil(ctx, u, us.now().Add(us.lifetime))
}

// startUntil is start of a session that ends at expires.
func (us *Users) startUntil(ctx context.Context, u *User, expires time.Time) (string, *Caller, error) {
	now := us.now()
	if err := us.s.DeleteExpiredSignIns(ctx, now); err != nil {
		return "", nil, err
	}
	secret := NewSecret(SignInSecretPrefix)
	s := SignIn{SecretHash: HashSecret(secret), UserID: u.ID, WorkspaceID: u.WorkspaceID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: expires}
	if err := us.s.CreateSignIn(ctx, s); err != nil {
		return "", nil, err
	}
	return secret, userCaller(u, s.ExpiresAt), nil
}

// userCaller is the caller a signed-in user acts as.
func userCaller(u *User, expires time.Time) *Caller {
	return &Caller{WorkspaceID: u.WorkspaceID, Actor: Actor{Type: ActorUser, ID: u.ID}, Role: u.Role, ExpiresAt: &expires}
}

// Authenticate returns the caller and user of a console session's
// secret: EUnauthenticated, saying why, for an unknown, idle or expired
// session (an expired one is removed).
func (us *Users) Authenticate(ctx context.Context, secret string) (*Caller, *User, error) {
	if !strings.HasPrefix(secret, SignInSecretPrefix) {
		return nil, nil, Errorf(EUnauthenticated, "you are not signed in")
	}
	h := HashSecret(secret)
	s, u, err := us.s.SignIn(ctx, h)
	switch {
	case ErrorCode(err) == ENotFound || err == nil && s.Link:
		return nil, nil, Errorf(EUnauthenticated, "your session has ended; sign in again")
	case err != nil:
		return nil, nil, err
	}
	now := us.now()
	var ended string
	switch {
	case !now.Before(s.ExpiresAt):
		ended = "your session has expired; sign in again"
	case now.Sub(s.LastSeenAt) >= us.idle:
		ended = "your session ended after " + us.idle.String() + " without activity; sign in again"
	}
	if ended != "" {
		if _, err := us.s.DeleteSignIn(ctx, h); err != nil {
			return nil, nil, err
		}
		return nil, nil, Errorf(EUnauthenticated, "%s", ended)
	}
	// Noted at most every signInTouchEvery, and often enough for a short
	// idle time to measure activity.
	if now.Sub(s.LastSeenAt) >= min(signInTouchEvery, us.idle/4) {
		if err := us.s.TouchSignIn(ctx, h, now); err != nil {
			return nil, nil, err
		}
	}
	return userCaller(u, s.ExpiresAt), withoutHash(u), nil
}

// SignOut ends the console session of a secret; ending one that has
// already ended changes nothing.
func (us *Users) SignOut(ctx context.Context, secret string) error {
	if !strings.HasPrefix(secret, SignInSecretPrefix) {
		return nil
	}
	_, err := us.s.DeleteSignIn(ctx, HashSecret(secret))
	return err
}

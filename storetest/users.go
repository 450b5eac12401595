package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// runUsers runs the tests of console users: their storage, sign-ins, and
// what each role may do, through memstore.Users and a memstore.Core over
// the database, as the console calls them. open returns a fresh, empty
// database for each subtest.
func runUsers(t *testing.T, open func(t *testing.T) memstore.Database) {
	t.Run("Users", func(t *testing.T) { testUsers(t, open(t)) })
	t.Run("SignIn", func(t *testing.T) { testSignIn(t, open(t)) })
	t.Run("SignInLinks", func(t *testing.T) { testSignInLinks(t, open(t)) })
	t.Run("Roles", func(t *testing.T) { testRoles(t, open(t)) })
	t.Run("ChangePassword", func(t *testing.T) { testChangePassword(t, open(t)) })
	t.Run("SetRole", func(t *testing.T) { testSetRole(t, open(t)) })
	t.Run("SignInLimits", func(t *testing.T) { testSignInLimits(t, open(t)) })
	t.Run("SignInAttemptCounts", func(t *testing.T) { testSignInAttemptCounts(t, open(t)) })
}

const goodPassword = "correct horse battery"

// operator is the caller of the operator's command line in ws: no role.
func operator(ws string) *memstore.Caller {
	return &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_operator"}}
}

func mustWorkspace(t *testing.T, b memstore.Database, name string) string {
	t.Helper()
	w, err := b.CreateWorkspace(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return w.ID
}

func mustUser(t *testing.T, us *memstore.Users, c *memstore.Caller, name string, role memstore.Role, pw string) *memstore.User {
	t.Helper()
	u, err := us.CreateUser(context.Background(), c, memstore.UserCreate{Name: name, Role: role, Password: pw})
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

func testUsers(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	us := memstore.NewUsers(b)
	ws, other := mustWorkspace(t, b, "one"), mustWorkspace(t, b, "two")
	op := operator(ws)
	if any, err := us.AnyUsers(ctx); err != nil || any {
		t.Fatalf("AnyUsers before any user = %v, %v; want false", any, err)
	}
	ann := mustUser(t, us, op, "ann", memstore.RoleAdmin, goodPassword)
	if any, err := us.AnyUsers(ctx); err != nil || !any {
		t.Errorf("AnyUsers with a user = %v, %v; want true", any, err)
	}
	wantPrefix(t, ann.ID, "user_", "user ID")
	if ann.WorkspaceID != ws || ann.Name != "ann" || ann.Role != memstore.RoleAdmin || ann.PasswordHash != "" || ann.CreatedAt.IsZero() {
		t.Errorf("created %+v", ann)
	}
	_, err := us.CreateUser(ctx, op, memstore.UserCreate{Name: "ann", Role: memstore.RoleMember})
	wantCode(t, err, memstore.EConflict, "a taken name")
	mustUser(t, us, operator(other), "ann", memstore.RoleMember, "") // another workspace's
	for _, bad := range []memstore.UserCreate{
		{Name: "", Role: memstore.RoleMember}, {Name: "has space", Role: memstore.RoleMember},
		{Name: strings.Repeat("a", memstore.MaxUserName+1), Role: memstore.RoleMember},
		{Name: "user_x", Role: memstore.RoleMember}, {Name: "bob", Role: "owner"},
		{Name: "bob", Role: memstore.RoleMember, Password: "short"},
	} {
		_, err := us.CreateUser(ctx, op, bad)
		wantCode(t, err, memstore.EInvalid, "create "+bad.Name+"/"+string(bad.Role))
	}
	_, err = us.CreateUser(ctx, operator("wrkspc_none"), memstore.UserCreate{Name: "zed", Role: memstore.RoleMember})
	wantError(t, err, memstore.ErrNoWorkspace("wrkspc_none"), "an unknown workspace")
	for _, key := range []string{ann.ID, "ann"} {
		got, err := us.User(ctx, op, key)
		if err != nil || got.ID != ann.ID || got.PasswordHash != "" || !got.CreatedAt.Equal(ann.CreatedAt) {
			t.Errorf("User(%q) = %+v, %v", key, got, err)
		}
	}
	_, err = us.User(ctx, op, "nobody")
	wantError(t, err, memstore.ErrNoUser("nobody"), "an unknown user")
	// Its password is kept hashed, never as given.
	raw, err := b.User(ctx, ws, "ann")
	if err != nil || !strings.HasPrefix(raw.PasswordHash, "$argon2id$") || strings.Contains(raw.PasswordHash, goodPassword) {
		t.Errorf("stored hash %q, %v", raw.PasswordHash, err)
	}
	for _, n := range []string{"cat", "bob", "dan", "eve"} {
		mustUser(t, us, op, n, memstore.RoleMember, "")
	}
	var names []string
	f := memstore.UserFilter{Limit: 2}
	for pages := 0; pages < 5; pages++ {
		p, err := us.Users(ctx, op, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range p.Items {
			names = append(names, u.Name)
			if u.PasswordHash != "" {
				t.Errorf("Users shows %s's password hash", u.Name)
			}
		}
		if f.Page = p.Next; f.Page == "" {
			break
		}
	}
	if got := strings.Join(names, " "); got != "ann bob cat dan eve" {
		t.Errorf("Users by pages of 2 = %s", got)
	}
	_, err = us.Users(ctx, op, memstore.UserFilter{Page: "page_bogus"})
	wantCode(t, err, memstore.EInvalid, "a bad cursor")
	if err := us.DeleteUser(ctx, op, "bob"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, us.DeleteUser(ctx, op, "bob"), memstore.ENotFound, "deleting again")
	_, err = us.User(ctx, op, "bob")
	wantCode(t, err, memstore.ENotFound, "a deleted user")
	if _, err := us.User(ctx, operator(other), "ann"); err != nil {
		t.Errorf("the other workspace's ann: %v", err)
	}
}

func testSignIn(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	clk := NewClock(time.Now())
	idle, life := 10*time.Minute, time.Hour
	us := memstore.NewUsers(b, memstore.UsersClock(clk.Now), memstore.SignInExpiry(idle, life))
	ws := mustWorkspace(t, b, "one")
	ann := mustUser(t, us, operator(ws), "ann", memstore.RoleMember, goodPassword)
	mustUser(t, us, operator(ws), "linkonly", memstore.RoleMember, "")

	for _, bad := range [][3]string{{"one", "ann", "wrong password!!"}, {"one", "nobody", goodPassword}, {"nope", "ann", goodPassword}, {"one", "linkonly", ""}} {
		_, _, err := us.SignIn(ctx, bad[0], bad[1], bad[2])
		if e, ok := err.(*memstore.Error); !ok || e.Code != memstore.EUnauthenticated || e.Message != memstore.ErrSignIn().Message {
			t.Errorf("SignIn(%q, %q) = %v; want the one sign-in error", bad[0], bad[1], err)
		}
	}
	secret, c, err := us.SignIn(ctx, "one", "ann", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	want := memstore.Actor{Type: memstore.ActorUser, ID: ann.ID}
	if !strings.HasPrefix(secret, memstore.SignInSecretPrefix) || c.Actor != want || c.Role != memstore.RoleMember || c.WorkspaceID != ws {
		t.Errorf("SignIn = %q, %+v", secret, c)
	}
	c2, u, err := us.Authenticate(ctx, secret)
	if err != nil || c2.Actor != want || c2.Role != memstore.RoleMember || u.Name != "ann" || u.PasswordHash != "" {
		t.Fatalf("Authenticate = %+v, %+v, %v", c2, u, err)
	}
	// Only the hash of the secret is kept.
	if _, _, err := b.SignIn(ctx, secret); err == nil {
		t.Error("the storage finds a sign-in by its secret itself")
	}
	// Active within the idle time, it lasts; idle past it, it ends.
	for range 3 {
		clk.Advance(idle - time.Minute)
		if _, _, err := us.Authenticate(ctx, secret); err != nil {
			t.Fatalf("an active session: %v", err)
		}
	}
	clk.Advance(idle)
	_, _, err = us.Authenticate(ctx, secret)
	wantMessage(t, err, memstore.EUnauthenticated, "without activity", "an idle session")
	_, _, err = us.Authenticate(ctx, secret)
	wantMessage(t, err, memstore.EUnauthenticated, "has ended", "an idle session, again")
	// However active, it ends at its lifetime.
	secret, _, _ = us.SignIn(ctx, "one", "ann", goodPassword)
	for range int(life/(idle/2)) - 1 {
		clk.Advance(idle / 2)
		if _, _, err := us.Authenticate(ctx, secret); err != nil {
			t.Fatalf("an active session within its lifetime: %v", err)
		}
	}
	clk.Advance(idle / 2)
	_, _, err = us.Authenticate(ctx, secret)
	wantMessage(t, err, memstore.EUnauthenticated, "expired", "a session past its lifetime")
	// Signing out ends it; so does a new password, for every session.
	secret, _, _ = us.SignIn(ctx, "one", "ann", goodPassword)
	if err := us.SignOut(ctx, secret); err != nil {
		t.Fatal(err)
	}
	_, _, err = us.Authenticate(ctx, secret)
	wantCode(t, err, memstore.EUnauthenticated, "a session signed out")
	s1, annC, _ := us.SignIn(ctx, "one", "ann", goodPassword)
	s2, _, _ := us.SignIn(ctx, "one", "ann", goodPassword)
	_, err = us.SetPassword(ctx, annC, "ann", "short")
	wantCode(t, err, memstore.EInvalid, "a short new password")
	if _, err := us.SetPassword(ctx, annC, "ann", "a new long password"); err != nil {
		t.Fatalf("setting one's own password: %v", err)
	}
	for _, s := range []string{s1, s2} {
		_, _, err = us.Authenticate(ctx, s)
		wantCode(t, err, memstore.EUnauthenticated, "a session after a new password")
	}
	if _, _, err := us.SignIn(ctx, "one", "ann", goodPassword); err == nil {
		t.Error("the old password still signs in")
	}
	if _, _, err := us.SignIn(ctx, "one", "ann", "a new long password"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	_, _, err = us.Authenticate(ctx, "sk-memstore-notaconsolesecret")
	wantCode(t, err, memstore.EUnauthenticated, "an API key as a session")
}

func testSignInLinks(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	clk := NewClock(time.Now())
	us := memstore.NewUsers(b, memstore.UsersClock(clk.Now))
	ws := mustWorkspace(t, b, "one")
	op := operator(ws)
	bo := mustUser(t, us, op, "bo", memstore.RoleAuditor, "")
	link, exp, err := us.CreateSignInLink(ctx, op, "bo")
	if err != nil || !strings.HasPrefix(link, memstore.SignInLinkPrefix) || !exp.Equal(clk.Now().Add(memstore.SignInLinkTTL)) {
		t.Fatalf("CreateSignInLink = %q, %v, %v", link, exp, err)
	}
	// A link is not a session.
	_, _, err = us.Authenticate(ctx, link)
	wantCode(t, err, memstore.EUnauthenticated, "a link as a session")
	secret, c, err := us.RedeemLink(ctx, link)
	if err != nil || c.Actor.ID != bo.ID || c.Role != memstore.RoleAuditor {
		t.Fatalf("RedeemLink = %+v, %v", c, err)
	}
	if _, _, err := us.Authenticate(ctx, secret); err != nil {
		t.Errorf("the link's session: %v", err)
	}
	_, _, err = us.RedeemLink(ctx, link)
	wantMessage(t, err, memstore.EUnauthenticated, "has been used", "a link used twice")
	link, _, _ = us.CreateSignInLink(ctx, op, "bo")
	clk.Advance(memstore.SignInLinkTTL)
	_, _, err = us.RedeemLink(ctx, link)
	wantCode(t, err, memstore.EUnauthenticated, "an expired link")
	_, _, err = us.RedeemLink(ctx, secret)
	wantCode(t, err, memstore.EUnauthenticated, "a session as a link")
	_, _, err = us.CreateSignInLink(ctx, op, "nobody")
	wantCode(t, err, memstore.ENotFound, "a link for nobody")
}

// testRoles holds the core to the one table of roles: each role's
// caller is allowed, or refused with EPermission, each kind of call.
func testRoles(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	co := memstore.NewCore(b)
	us := memstore.NewUsers(b)
	ws := mustWorkspace(t, b, "one")
	op := operator(ws)
	s, err := co.CreateStore(ctx, op, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := co.CreateMemory(ctx, op, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "a"})
	if err != nil {
		t.Fatal(err)
	}
	callers := map[memstore.Role]*memstore.Caller{}
	for _, r := range memstore.Roles {
		u := mustUser(t, us, op, string(r), r, goodPassword)
		_, callers[r], err = us.SignIn(ctx, "one", u.Name, goodPassword)
		if err != nil {
			t.Fatal(err)
		}
	}
	mustUser(t, us, op, "target", memstore.RoleMember, "")
	type call struct {
		what    string
		allowed []memstore.Role
		do      func(c *memstore.Caller) error
	}
	all := memstore.Roles
	n := 0
	calls := []call{
		{"list stores", all, func(c *memstore.Caller) error { _, err := co.Stores(ctx, c, memstore.StoreFilter{}); return err }},
		{"read a memory", all, func(c *memstore.Caller) error { _, err := co.Memory(ctx, c, s.ID, m.ID); return err }},
		{"list versions", all, func(c *memstore.Caller) error {
			_, err := co.Versions(ctx, c, s.ID, memstore.VersionFilter{})
			return err
		}},
		{"create a memory", []memstore.Role{memstore.RoleAdmin, memstore.RoleMember}, func(c *memstore.Caller) error {
			n++
			_, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/new" + strings.Repeat("x", n), Content: "x"})
			return err
		}},
		{"create a store", []memstore.Role{memstore.RoleAdmin, memstore.RoleMember}, func(c *memstore.Caller) error {
			_, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "more"})
			return err
		}},
		{"list sessions", []memstore.Role{memstore.RoleAdmin, memstore.RoleAuditor}, func(c *memstore.Caller) error {
			_, err := co.Sessions(ctx, c, memstore.SessionFilter{})
			return err
		}},
		{"create a session", []memstore.Role{memstore.RoleAdmin}, func(c *memstore.Caller) error {
			_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{})
			return err
		}},
		{"list users", []memstore.Role{memstore.RoleAdmin, memstore.RoleAuditor}, func(c *memstore.Caller) error {
			_, err := us.Users(ctx, c, memstore.UserFilter{})
			return err
		}},
		{"create a user", []memstore.Role{memstore.RoleAdmin}, func(c *memstore.Caller) error {
			n++
			_, err := us.CreateUser(ctx, c, memstore.UserCreate{Name: "u" + strings.Repeat("x", n), Role: memstore.RoleAdmin})
			return err
		}},
		{"set another's password", []memstore.Role{memstore.RoleAdmin}, func(c *memstore.Caller) error {
			_, err := us.SetPassword(ctx, c, "target", goodPassword)
			return err
		}},
	}
	for _, cl := range calls {
		for _, r := range memstore.Roles {
			err := cl.do(callers[r])
			allowed := false
			for _, a := range cl.allowed {
				allowed = allowed || a == r
			}
			if allowed && err != nil {
				t.Errorf("%s may %s: %v", r, cl.what, err)
			}
			if !allowed {
				wantCode(t, err, memstore.EPermission, string(r)+" may not "+cl.what)
			}
		}
	}
	// A member's change is recorded as the user who made it.
	mm, err := co.CreateMemory(ctx, callers[memstore.RoleMember], s.ID, memstore.MemoryCreate{Path: "/by-member.md", Content: "m"})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := co.Versions(ctx, op, s.ID, memstore.VersionFilter{MemoryID: mm.ID})
	if err != nil || len(vs.Items) != 1 || vs.Items[0].CreatedBy != callers[memstore.RoleMember].Actor {
		t.Errorf("the member's version: %+v, %v", vs.Items, err)
	}
}

// wantMessage is wantCode that also wants part in the message.
func wantMessage(t *testing.T, err error, code, part, what string) {
	t.Helper()
	if wantCode(t, err, code, what) && !strings.Contains(err.Error(), part) {
		t.Errorf("%s: %q does not say %q", what, err, part)
	}
}

// wantLimited checks that err is a *memstore.SignInLimited of the kind
// wanted, with a wait.
func wantLimited(t *testing.T, err error, byAddress bool, what string) {
	t.Helper()
	var l *memstore.SignInLimited
	if !errors.As(err, &l) || l.ByAddress != byAddress || l.Wait <= 0 {
		t.Errorf("%s: %v, want a sign-in limited (by address %v) with a wait", what, err, byAddress)
	}
}

// testSignInLimits: a name's allowance is SignInNameBurst attempts, then
// one per SignInNameInterval, however the workspace and the user are
// named; an address's is SignInAddrBurst, then one per
// SignInAddrInterval; each key's allowance is its own.
func testSignInLimits(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	clk := NewClock(time.Now())
	us := memstore.NewUsers(b, memstore.UsersClock(clk.Now))
	ws := mustWorkspace(t, b, "one")
	ann := mustUser(t, us, operator(ws), "ann", memstore.RoleMember, goodPassword)
	mustUser(t, us, operator(ws), "bo", memstore.RoleMember, goodPassword)
	// Wrong passwords, naming the workspace and the user both ways: one
	// allowance.
	for i, who := range [][2]string{{"one", "ann"}, {ws, "ann"}, {"one", ann.ID}, {ws, ann.ID}, {"one", "ann"}} {
		_, _, err := us.SignIn(ctx, who[0], who[1], "wrong password!!")
		wantCode(t, err, memstore.EUnauthenticated, fmt.Sprint("wrong password ", i+1))
	}
	_, _, err := us.SignIn(ctx, "one", "ann", goodPassword)
	wantLimited(t, err, false, "the right password past the burst")
	_, _, err = us.SignIn(ctx, ws, ann.ID, goodPassword)
	wantLimited(t, err, false, "by IDs past the burst")
	if _, _, err := us.SignIn(ctx, "one", "bo", goodPassword); err != nil {
		t.Errorf("another user: %v", err)
	}
	// A name that is no user's, and a long one, have allowances too.
	long := strings.Repeat("n", 64<<10)
	for _, name := range []string{"nobody", long} {
		for i := range memstore.SignInNameBurst {
			_, _, err := us.SignIn(ctx, "one", name, "wrong password!!")
			wantCode(t, err, memstore.EUnauthenticated, fmt.Sprintf("%.10s: attempt %d", name, i+1))
		}
		_, _, err := us.SignIn(ctx, "one", name, "wrong password!!")
		wantLimited(t, err, false, fmt.Sprintf("%.10s past the burst", name))
	}
	clk.Advance(memstore.SignInNameInterval)
	if _, _, err := us.SignIn(ctx, "one", "ann", goodPassword); err != nil {
		t.Errorf("one interval later: %v", err)
	}
	_, _, err = us.SignIn(ctx, "one", "ann", goodPassword)
	wantLimited(t, err, false, "twice in one interval")

	for i := range memstore.SignInAddrBurst {
		if err := us.AttemptFrom(ctx, "198.51.100.7"); err != nil {
			t.Fatalf("attempt %d from an address: %v", i+1, err)
		}
	}
	wantLimited(t, us.AttemptFrom(ctx, "198.51.100.7"), true, "an address past its burst")
	if err := us.AttemptFrom(ctx, "198.51.100.8"); err != nil {
		t.Errorf("another address: %v", err)
	}
	clk.Advance(memstore.SignInAddrInterval)
	if err := us.AttemptFrom(ctx, "198.51.100.7"); err != nil {
		t.Errorf("an address one interval later: %v", err)
	}
	// Attempts at once, as from several servers: the burst and no more,
	// for each of several addresses.
	for i := range 8 {
		addr := fmt.Sprint("203.0.113.", i)
		var allowed atomic.Int32
		var wg sync.WaitGroup
		for range 3 * memstore.SignInAddrBurst {
			wg.Go(func() {
				err := us.AttemptFrom(ctx, addr)
				if err == nil {
					allowed.Add(1)
				} else {
					wantLimited(t, err, true, "concurrent attempts")
				}
			})
		}
		wg.Wait()
		if n := allowed.Load(); n != memstore.SignInAddrBurst {
			t.Errorf("%d concurrent attempts from %s allowed, want %d", n, addr, memstore.SignInAddrBurst)
		}
	}
}

// testSignInAttemptCounts holds the storage of the counts to its
// contract: take sees what it kept, refilled counts are deleted, and
// past max the counts that are full soonest make room for a new key.
func testSignInAttemptCounts(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	t0 := time.Now().Truncate(time.Millisecond)
	// take keeps a count under key full at full, and returns what it saw.
	take := func(key string, now, full time.Time) *memstore.AttemptCount {
		t.Helper()
		var saw *memstore.AttemptCount
		err := b.TakeSignInAttempt(ctx, key, now, 3, func(c *memstore.AttemptCount) memstore.AttemptCount {
			saw = c
			return memstore.AttemptCount{Tokens: 1.5, At: now, FullAt: full}
		})
		if err != nil {
			t.Fatal(err)
		}
		return saw
	}
	for i, key := range []string{"k1", "k2", "k3"} {
		if saw := take(key, t0, t0.Add(time.Duration(i+1)*time.Minute)); saw != nil {
			t.Errorf("%s: a new key has a count: %+v", key, saw)
		}
	}
	if saw := take("k3", t0, t0.Add(3*time.Minute)); saw == nil || saw.Tokens != 1.5 || !saw.At.Equal(t0) || !saw.FullAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("k3: saw %+v, want what was kept", saw)
	}
	// A fourth key, with three kept: k1, full soonest, makes room.
	take("k4", t0, t0.Add(4*time.Minute))
	if take("k2", t0, t0.Add(2*time.Minute)) == nil {
		t.Error("k2 was forgotten to make room, before k1 which is fuller")
	}
	if take("k1", t0, t0.Add(time.Minute)) != nil {
		t.Error("k1, the fullest, was kept past the limit")
	}
	// Once full, a count is as none.
	if saw := take("k4", t0.Add(4*time.Minute), t0.Add(5*time.Minute)); saw != nil {
		t.Errorf("k4, refilled: saw %+v, want none", saw)
	}
}

// testChangePassword: a signed-in user changes their own password with
// the current one (a first one without), which ends their other
// sign-ins and gives a new session that ends when the old one would
// have; nobody else changes a password this way.
func testChangePassword(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	clk := NewClock(time.Now())
	life := time.Hour
	us := memstore.NewUsers(b, memstore.UsersClock(clk.Now), memstore.SignInExpiry(life, life))
	ws := mustWorkspace(t, b, "one")
	op := operator(ws)
	mustUser(t, us, op, "ann", memstore.RoleMember, goodPassword)
	first, c, err := us.SignIn(ctx, "one", "ann", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := us.SignIn(ctx, "one", "ann", goodPassword)
	clk.Advance(life / 2)
	const pw = "a brand new passphrase"
	_, _, err = us.ChangePassword(ctx, c, "", pw)
	wantMessage(t, err, memstore.EPermission, "current password is not right", "no current password")
	_, _, err = us.ChangePassword(ctx, c, goodPassword, "short")
	wantCode(t, err, memstore.EInvalid, "a short new password")
	_, _, err = us.ChangePassword(ctx, op, goodPassword, pw)
	wantCode(t, err, memstore.EPermission, "an operator's caller")
	_, _, err = us.ChangePassword(ctx, nil, goodPassword, pw)
	wantCode(t, err, memstore.EUnauthenticated, "no caller")
	secret, u, err := us.ChangePassword(ctx, c, goodPassword, pw)
	if err != nil || u.Name != "ann" || !u.HasPassword || u.PasswordHash != "" {
		t.Fatalf("ChangePassword = %+v, %v", u, err)
	}
	for _, s := range []string{first, other} {
		_, _, err := us.Authenticate(ctx, s)
		wantCode(t, err, memstore.EUnauthenticated, "a sign-in from before the change")
	}
	if _, _, err := us.Authenticate(ctx, secret); err != nil {
		t.Errorf("the new session: %v", err)
	}
	if _, _, err := us.SignIn(ctx, "one", "ann", pw); err != nil {
		t.Errorf("the new password: %v", err)
	}
	clk.Advance(life / 2)
	_, _, err = us.Authenticate(ctx, secret)
	wantMessage(t, err, memstore.EUnauthenticated, "expired", "the new session when the old one would have ended")

	// A user with no password sets a first one, given none.
	mustUser(t, us, op, "linda", memstore.RoleAuditor, "")
	link, _, err := us.CreateSignInLink(ctx, op, "linda")
	if err != nil {
		t.Fatal(err)
	}
	_, lc, err := us.RedeemLink(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	if lu, err := us.User(ctx, op, "linda"); err != nil || lu.HasPassword {
		t.Errorf("linda before: %+v, %v", lu, err)
	}
	if _, _, err := us.ChangePassword(ctx, lc, "", pw); err != nil {
		t.Fatalf("a first password: %v", err)
	}
	if lu, err := us.User(ctx, op, "linda"); err != nil || !lu.HasPassword {
		t.Errorf("linda after: %+v, %v", lu, err)
	}
	if _, _, err := us.SignIn(ctx, "one", "linda", pw); err != nil {
		t.Errorf("sign in with the first password: %v", err)
	}
}

// testSetRole changes users' roles and removes users as the console's
// users page does: administrators only, never their own role or
// themselves (so that a workspace keeps the administrator acting), the
// new role in force from the user's next request.
func testSetRole(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	us := memstore.NewUsers(b)
	ws, other := mustWorkspace(t, b, "one"), mustWorkspace(t, b, "two")
	op := operator(ws)
	ann := mustUser(t, us, op, "ann", memstore.RoleAdmin, goodPassword)
	mustUser(t, us, op, "meg", memstore.RoleMember, goodPassword)
	mustUser(t, us, operator(other), "olga", memstore.RoleMember, goodPassword)
	_, admin, err := us.SignIn(ctx, "one", "ann", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	megSecret, member, err := us.SignIn(ctx, "one", "meg", goodPassword)
	if err != nil {
		t.Fatal(err)
	}

	_, err = us.SetRole(ctx, member, "ann", memstore.RoleAuditor)
	wantCode(t, err, memstore.EPermission, "a member sets a role")
	wantCode(t, us.DeleteUser(ctx, member, "ann"), memstore.EPermission, "a member removes a user")
	_, err = us.SetRole(ctx, admin, "meg", "owner")
	wantCode(t, err, memstore.EInvalid, "an unknown role")
	_, err = us.SetRole(ctx, admin, "olga", memstore.RoleAdmin)
	wantCode(t, err, memstore.ENotFound, "a user of another workspace")
	_, err = us.SetRole(ctx, admin, "ann", memstore.RoleMember)
	wantMessage(t, err, memstore.EPermission, "your own role", "an administrator's own role")
	wantMessage(t, us.DeleteUser(ctx, admin, ann.ID), memstore.EPermission, "yourself", "an administrator removes themselves")

	u, err := us.SetRole(ctx, admin, "meg", memstore.RoleAuditor)
	if err != nil || u.Role != memstore.RoleAuditor || u.PasswordHash != "" || !u.HasPassword {
		t.Fatalf("set meg's role: %+v, %v", u, err)
	}
	// Meg's session goes on, with her new role.
	c, _, err := us.Authenticate(ctx, megSecret)
	if err != nil || c.Role != memstore.RoleAuditor {
		t.Errorf("meg's session after the change: %+v, %v", c, err)
	}
	if u, err := us.User(ctx, op, "ann"); err != nil || u.Role != memstore.RoleAdmin {
		t.Errorf("ann after the refusals: %+v, %v", u, err)
	}
	if u, err := us.User(ctx, operator(other), "olga"); err != nil || u.Role != memstore.RoleMember {
		t.Errorf("olga: %+v, %v", u, err)
	}
}

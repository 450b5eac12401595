package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// The console's sign-in limits: a burst of attempts, then one per
// interval, per user name (against guessing one user's password) and
// per client address (against trying many users from one place). The
// counts are kept in the database (UserStorage.TakeSignInAttempt), so
// that every server on one database counts the same attempts: two
// replicas allow five guesses at a name, not ten.
//
// A count is kept under the SHA-256 of its key, never the name or the
// address itself, and only while it matters: a count that has refilled
// is deleted, and the database keeps at most MaxSignInCounts of them; to
// make room it forgets the fullest (the key least held back), so that a
// flood of made-up names can neither grow the table nor shut anyone
// out. (A flood of guesses at one name does slow that user's own
// sign-in: the price of limiting guesses per name.)
const (
	SignInNameBurst    = 5
	SignInNameInterval = 12 * time.Second
	SignInAddrBurst    = 20
	SignInAddrInterval = 3 * time.Second
	MaxSignInCounts    = 20_000
)

// An AttemptCount is the sign-in attempts left under one key, as a token
// bucket: Tokens at At, refilling by one per interval up to the burst,
// full again at FullAt, when it is as good as none and may be deleted.
type AttemptCount struct {
	Tokens float64
	At     time.Time
	FullAt time.Time
}

// A SignInLimited is a sign-in refused before its password was checked:
// too many attempts for the user name, or from the client's address. It
// unwraps to an ERateLimited *Error whose RetryAfter is the wait, as a
// search over its rate is, so that a surface answers both alike.
type SignInLimited struct {
	Wait      time.Duration // until the next attempt is allowed
	ByAddress bool          // the address's limit, not the name's
}

func (e *SignInLimited) Error() string {
	what := "for this user"
	if e.ByAddress {
		what = "from your address"
	}
	return "too many sign-in attempts " + what + "; " + WaitAndRetry(e.Wait)
}

func (e *SignInLimited) Unwrap() error {
	return &Error{Code: ERateLimited, Message: e.Error(), RetryAfter: e.Wait, Retry: true}
}

// attemptKey is the key of a count: the SHA-256 of its parts, so that
// neither a name nor an address is stored, and a key of any length
// takes the same room.
func attemptKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// nameKey is the count of a user name in a workspace: by their IDs when
// they exist, so that naming the workspace or the user by ID or by name
// counts against one allowance.
func nameKey(workspace, user string) string { return attemptKey("name", workspace, user) }

// AttemptFrom takes one sign-in attempt, of a password or a sign-in
// link, from a client address's allowance (addr is the address as the
// console counts it, an IPv6 client by its /64; see clientaddr): a
// *SignInLimited when none is left. Call it before SignIn or
// RedeemLink, so that an attempt refused for its address takes nothing
// from a name's allowance.
func (us *Users) AttemptFrom(ctx context.Context, addr string) error {
	return us.attempt(ctx, attemptKey("address", addr), SignInAddrBurst, SignInAddrInterval, true)
}

// attempt takes one attempt from key's count, in the database.
func (us *Users) attempt(ctx context.Context, key string, burst int, interval time.Duration, byAddress bool) error {
	now := us.now()
	var wait time.Duration
	err := us.s.TakeSignInAttempt(ctx, key, now, MaxSignInCounts, func(c *AttemptCount) AttemptCount {
		wait = 0
		at, tokens := now, float64(burst)
		if c != nil {
			// Servers' clocks differ a little: never count backwards.
			if c.At.After(at) {
				at = c.At
			}
			tokens = refill(c.Tokens, at.Sub(c.At), interval, burst)
		}
		if tokens >= 1 {
			tokens--
		} else {
			wait = untilWhole(tokens, interval)
		}
		return AttemptCount{Tokens: tokens, At: at, FullAt: at.Add(untilFull(tokens, interval, burst))}
	})
	switch {
	case err != nil:
		return err
	case wait > 0:
		return &SignInLimited{Wait: wait, ByAddress: byAddress}
	}
	return nil
}

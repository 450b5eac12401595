package memstore

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// The limits of a user's password. The upper bound keeps one hash's work
// bounded whatever a client sends.
const (
	MinPasswordLength = 12  // characters
	MaxPasswordBytes  = 512 // bytes
)

// The argon2id parameters of new password hashes (RFC 9106's second
// recommended option, scaled to a small server: 19 MiB, 2 passes, one
// lane). Each hash stores its own parameters, so these may be raised
// later without locking anyone out.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltBytes = 16
	argonKeyBytes  = 32
	// argonMaxMemoryKiB bounds what a stored hash may ask for, so that a
	// damaged or hostile hash cannot exhaust the server's memory.
	argonMaxMemoryKiB = 256 * 1024
	argonMaxTime      = 16
)

// maxHashing is how many password hashes may be computed at once: each
// holds argonMemoryKiB, and a burst of sign-ins must not hold more.
const maxHashing = 2

// hashing is the semaphore of maxHashing.
var hashing = make(chan struct{}, maxHashing)

// The bounds of the wait for a hashing slot: a flood of sign-ins is
// refused (EOverloaded) rather than queued without end, each holding a
// connection meanwhile.
const (
	// HashWaitTimeout bounds a request's wait for a hashing slot.
	HashWaitTimeout = 5 * time.Second
	// MaxHashWaiters bounds the requests that wait for a slot at once:
	// one more is refused at once. Hashes take tens of milliseconds, so
	// as many are hashed well within HashWaitTimeout.
	MaxHashWaiters = 32
)

// ValidatePassword checks a new password: MinPasswordLength characters at
// least, MaxPasswordBytes at most, valid UTF-8 (EInvalid). It never
// repeats the password.
func ValidatePassword(pw string) error {
	switch n := utf8.RuneCountInString(pw); {
	case !utf8.ValidString(pw):
		return Errorf(EInvalid, "the password is not valid UTF-8")
	case n < MinPasswordLength:
		return Errorf(EInvalid, "the password is %d characters; it must have at least %d", n, MinPasswordLength)
	case len(pw) > MaxPasswordBytes:
		return Errorf(EInvalid, "the password is %d bytes; the limit is %d", len(pw), MaxPasswordBytes)
	}
	return nil
}

// HashPassword returns pw's argon2id hash with a fresh random salt, in
// the PHC string format ("$argon2id$v=19$m=...,t=...,p=...$salt$key"),
// which keeps the parameters with the hash. It fails only when ctx ends
// while it waits for a hashing slot (see argonKey).
func HashPassword(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, argonSaltBytes)
	rand.Read(salt) // never fails (crypto/rand)
	key, err := argonKey(ctx, pw, salt, argonTime, argonMemoryKiB, argonThreads, argonKeyBytes)
	if err != nil {
		return "", err
	}
	return phcHash(salt, key), nil
}

// phcHash is the PHC string of an argon2id key made with the current
// parameters.
func phcHash(salt, key []byte) string {
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads, enc.EncodeToString(salt), enc.EncodeToString(key))
}

// CheckPassword reports whether pw matches hash, a HashPassword result,
// comparing in constant time. A malformed hash, or one whose parameters
// exceed the bounds, matches nothing. It fails only when ctx ends while
// it waits for a hashing slot (see argonKey).
func CheckPassword(ctx context.Context, hash, pw string) (bool, error) {
	h, ok := parsePasswordHash(hash)
	if !ok || len(pw) > MaxPasswordBytes {
		return false, nil
	}
	got, err := argonKey(ctx, pw, h.salt, h.t, h.m, h.p, len(h.key))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}

// ValidatePasswordHash checks a stored password hash, as a copied
// database hands it over: "" (no password) or a hash CheckPassword can
// check, within the bounds of its parameters (EInvalid). It never
// repeats the hash.
func ValidatePasswordHash(hash string) error {
	if _, ok := parsePasswordHash(hash); hash != "" && !ok {
		return Errorf(EInvalid, "the password hash is not an argon2id hash memstore can check (the PHC string $argon2id$v=19$m=...,t=...,p=...$salt$key, within its bounds)")
	}
	return nil
}

// passwordHash is a parsed argon2id hash.
type passwordHash struct {
	m, t      uint32
	p         uint8
	salt, key []byte
}

// parsePasswordHash parses a PHC string of argon2id, false when it is
// malformed or its parameters exceed the bounds.
func parsePasswordHash(hash string) (passwordHash, bool) {
	var h passwordHash
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return h, false
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return h, false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.m, &h.t, &h.p); err != nil ||
		h.m == 0 || h.m > argonMaxMemoryKiB || h.t == 0 || h.t > argonMaxTime || h.p == 0 {
		return h, false
	}
	enc := base64.RawStdEncoding
	var err1, err2 error
	h.salt, err1 = enc.DecodeString(parts[4])
	h.key, err2 = enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(h.key) == 0 || len(h.key) > 64 {
		return h, false
	}
	return h, true
}

// dummyPasswordHash is checked against when there is no user, so that a
// sign-in takes as long whether or not the name exists: it has the
// current parameters, and its all-zero key is no password's (finding
// one would be a preimage of argon2id).
var dummyPasswordHash = phcHash(make([]byte, argonSaltBytes), make([]byte, argonKeyBytes))

// waitNoticeKey is the context key of WithWaitNotice's function.
type waitNoticeKey struct{}

// WithWaitNotice returns ctx with notice, called when work done for ctx
// waits its turn for something the whole server shares (a slot to hash
// a password); the function it returns is called when the wait ends. The
// HTTP server counts such a request as one waiting on its client, which
// it may cut off to serve others, so that a flood of them cannot hold
// every connection.
func WithWaitNotice(ctx context.Context, notice func(context.Context) (end func())) context.Context {
	return context.WithValue(ctx, waitNoticeKey{}, notice)
}

// argonKey computes one argon2id key of n bytes, at most maxHashing at
// once. A request waits for a slot at most HashWaitTimeout, with at most
// MaxHashWaiters others, else it is refused as the server being busy
// (EOverloaded), so that a flood of sign-ins neither queues without end
// nor holds a connection each meanwhile; the wait also ends with ctx, so
// that requests whose clients have gone do not queue up. A hash once
// started runs to its end (argon2 cannot be interrupted, and it is
// bounded).
func argonKey(ctx context.Context, pw string, salt []byte, t, m uint32, p uint8, n int) ([]byte, error) {
	select {
	case hashing <- struct{}{}:
	default:
		if err := waitToHash(ctx); err != nil {
			return nil, err
		}
	}
	defer func() { <-hashing }()
	return argon2.IDKey([]byte(pw), salt, t, m, p, uint32(n)), nil
}

// hashWaiters is the semaphore of MaxHashWaiters.
var hashWaiters = make(chan struct{}, MaxHashWaiters)

// waitToHash waits for a hashing slot and takes it, within the bounds of
// argonKey, telling ctx's wait notice (WithWaitNotice) while it waits.
func waitToHash(ctx context.Context) error {
	select {
	case hashWaiters <- struct{}{}:
	default:
		return errHashBusy()
	}
	defer func() { <-hashWaiters }()
	if notice, _ := ctx.Value(waitNoticeKey{}).(func(context.Context) func()); notice != nil {
		defer notice(ctx)()
	}
	timeout := time.NewTimer(HashWaitTimeout)
	defer timeout.Stop()
	select {
	case hashing <- struct{}{}:
		return nil
	case <-timeout.C:
		return errHashBusy()
	case <-ctx.Done():
		return fmt.Errorf("gave up waiting to hash a password (at most %d are hashed at once; the server is busy with others): %w", maxHashing, context.Cause(ctx))
	}
}

// errHashBusy is the error of a request refused a hashing slot.
func errHashBusy() *Error {
	return &Error{
		Code: EOverloaded,
		Message: fmt.Sprintf("the server is busy checking other passwords (it checks %d at once, and %d more wait at most %s each), so this one was not checked; %s",
			maxHashing, MaxHashWaiters, HashWaitTimeout, WaitAndRetry(HashWaitTimeout)),
		Retry:      true,
		RetryAfter: HashWaitTimeout,
	}
}

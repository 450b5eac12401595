package memstore

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hash is HashPassword without a deadline.
func hash(t *testing.T, pw string) string {
	t.Helper()
	h, err := HashPassword(context.Background(), pw)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// check is CheckPassword without a deadline.
func check(t *testing.T, h, pw string) bool {
	t.Helper()
	ok, err := CheckPassword(context.Background(), h, pw)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestPasswordHash(t *testing.T) {
	pw := "correct horse battery"
	h1, h2 := hash(t, pw), hash(t, pw)
	if h1 == h2 {
		t.Error("two hashes of one password are equal: the salt is not per hash")
	}
	if !strings.HasPrefix(h1, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h1, pw) {
		t.Errorf("hash %q does not keep its parameters, or shows the password", h1)
	}
	if !check(t, h1, pw) || !check(t, h2, pw) {
		t.Error("the password does not match its hashes")
	}
	if check(t, h1, pw+"!") || check(t, h1, "") {
		t.Error("another password matches")
	}
	parts := strings.Split(h1, "$")
	for _, bad := range []string{
		"", "plain", "$argon2i$" + strings.Join(parts[2:], "$"),
		strings.Replace(h1, "m=19456", "m=99999999", 1), // beyond the memory bound
		strings.Replace(h1, "t=2", "t=0", 1),
		strings.Replace(h1, "v=19", "v=16", 1),
		h1[:len(h1)-4] + "!!!!",
	} {
		if check(t, bad, pw) {
			t.Errorf("malformed hash %q matches", bad)
		}
	}
	if err := ValidatePassword("short"); ErrorCode(err) != EInvalid || strings.Contains(err.Error(), "short") {
		t.Errorf("ValidatePassword(short) = %v", err)
	}
	if err := ValidatePassword(strings.Repeat("x", MaxPasswordBytes+1)); ErrorCode(err) != EInvalid {
		t.Errorf("an overlong password: %v", err)
	}
	if err := ValidatePassword(pw); err != nil {
		t.Error(err)
	}
}

// TestPasswordParametersFromHash: a hash made with other parameters (as
// an older or newer memstore may have) still checks.
func TestPasswordParametersFromHash(t *testing.T) {
	pw := "correct horse battery"
	salt := []byte("0123456789abcdef")
	key, err := argonKey(context.Background(), pw, salt, 1, 8*1024, 2, 16)
	if err != nil {
		t.Fatal(err)
	}
	h := "$argon2id$v=19$m=8192,t=1,p=2$" + base64.RawStdEncoding.EncodeToString(salt) + "$" + base64.RawStdEncoding.EncodeToString(key)
	if !check(t, h, pw) {
		t.Errorf("hash %s with its own parameters does not match", h)
	}
}

// TestPasswordWaitEndsWithContext: with every hashing slot taken, a hash
// or check whose request has ended (its client gone, its deadline past)
// stops waiting at once and says why, rather than queue behind the others.
func TestPasswordWaitEndsWithContext(t *testing.T) {
	pw := "correct horse battery"
	h := hash(t, pw)
	for range maxHashing {
		hashing <- struct{}{}
	}
	defer func() {
		for range maxHashing {
			<-hashing
		}
	}()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expiring, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"check, cancelled", func() error { _, err := CheckPassword(cancelled, h, pw); return err }, context.Canceled},
		{"hash, deadline", func() error { _, err := HashPassword(expiring, pw); return err }, context.DeadlineExceeded},
	} {
		done := make(chan error, 1)
		go func() { done <- c.call() }()
		select {
		case err := <-done:
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "gave up waiting to hash a password") {
				t.Errorf("%s: %v, want %v with a message that says why", c.name, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still waiting for a hashing slot after 5s", c.name)
		}
	}
}

// TestPasswordWaitBounded: with every hashing slot taken, a check waits
// at most HashWaitTimeout, then is refused as the server being busy
// (EOverloaded, with a time to retry after); with MaxHashWaiters
// waiting, one more is refused at once; and each waiter tells its
// request's wait notice for as long as it waits.
func TestPasswordWaitBounded(t *testing.T) {
	pw := "correct horse battery"
	h := hash(t, pw)
	for range maxHashing {
		hashing <- struct{}{}
	}
	released := false
	release := func() {
		if !released {
			released = true
			for range maxHashing {
				<-hashing
			}
		}
	}
	defer release()
	var waiting, ended atomic.Int32
	ctx := WithWaitNotice(context.Background(), func(context.Context) func() {
		waiting.Add(1)
		return func() { ended.Add(1) }
	})
	busy := func(what string, err error) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Code != EOverloaded || e.RetryAfter <= 0 || !strings.Contains(e.Message, "busy") {
			t.Errorf("%s: %#v; want EOverloaded saying the server is busy, with a time to retry after", what, err)
		}
	}
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, MaxHashWaiters)
	begun := time.Now()
	for range MaxHashWaiters {
		go func() {
			_, err := CheckPassword(ctx, h, pw)
			results <- result{err, time.Since(begun)}
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); waiting.Load() < MaxHashWaiters; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d checks told their wait notice", waiting.Load(), MaxHashWaiters)
		}
	}
	// One more is refused at once, while they wait.
	start := time.Now()
	_, err := CheckPassword(ctx, h, pw)
	if took := time.Since(start); took > HashWaitTimeout/2 {
		t.Errorf("a check beyond the %d waiting waited %v", MaxHashWaiters, took)
	}
	busy("a check beyond the queue", err)
	for range MaxHashWaiters {
		select {
		case r := <-results:
			busy("a check that waited", r.err)
			if r.took < HashWaitTimeout-100*time.Millisecond {
				t.Errorf("a check gave up waiting after %v, before HashWaitTimeout (%v)", r.took, HashWaitTimeout)
			}
		case <-time.After(HashWaitTimeout + 10*time.Second):
			t.Fatalf("a check still waits %v after it began", time.Since(begun))
		}
	}
	if n := ended.Load(); n != MaxHashWaiters {
		t.Errorf("%d waits ended, want %d", n, MaxHashWaiters)
	}
	release()
	if ok, err := CheckPassword(ctx, h, pw); !ok || err != nil {
		t.Errorf("a check with the slots free: %v, %v", ok, err)
	}
}

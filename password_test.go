package memstore

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	pw := "correct horse battery"
	h1, h2 := HashPassword(pw), HashPassword(pw)
	if h1 == h2 {
		t.Error("two hashes of one password are equal: the salt is not per hash")
	}
	if !strings.HasPrefix(h1, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h1, pw) {
		t.Errorf("hash %q does not keep its parameters, or shows the password", h1)
	}
	if !CheckPassword(h1, pw) || !CheckPassword(h2, pw) {
		t.Error("the password does not match its hashes")
	}
	if CheckPassword(h1, pw+"!") || CheckPassword(h1, "") {
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
		if CheckPassword(bad, pw) {
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
	key := argonKey(pw, salt, 1, 8*1024, 2, 16)
	h := "$argon2id$v=19$m=8192,t=1,p=2$" + base64.RawStdEncoding.EncodeToString(salt) + "$" + base64.RawStdEncoding.EncodeToString(key)
	if !CheckPassword(h, pw) {
		t.Errorf("hash %s with its own parameters does not match", h)
	}
}

package memstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func TestValidatePasswordHash(t *testing.T) {
	h, err := memstore.HashPassword(context.Background(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"", h} {
		if err := memstore.ValidatePasswordHash(ok); err != nil {
			t.Errorf("ValidatePasswordHash(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{
		"hunter2",
		"x" + h,
		strings.Replace(h, "argon2id", "argon2i", 1),
		"$argon2id$v=19$m=999999999,t=1,p=1$AAAA$AAAA", // over the memory bound
		"$argon2id$v=19$m=1024,t=99,p=1$AAAA$AAAA",     // over the time bound
		"$argon2id$v=19$m=1024,t=1,p=1$AAAA$",          // no key
		"$argon2id$v=16$m=1024,t=1,p=1$AAAA$AAAA",
	} {
		if err := memstore.ValidatePasswordHash(bad); memstore.ErrorCode(err) != memstore.EInvalid || strings.Contains(err.Error(), bad) {
			t.Errorf("ValidatePasswordHash(%q) = %v; want EInvalid, without the hash", bad, err)
		}
	}
}

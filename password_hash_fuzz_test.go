package memstore

import (
	"strings"
	"testing"
)

// FuzzPasswordHash: any stored hash, as a copied database may hand one
// over, is parsed without a panic, and one accepted is an argon2id hash
// within the bounds that keep a sign-in's work bounded.
func FuzzPasswordHash(f *testing.F) {
	for _, s := range []string{"", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U",
		"$argon2id$v=19$m=999999999,t=1,p=1$AAAA$AAAA", "$argon2i$v=19$m=1,t=1,p=1$$", "$$$$$", "$argon2id$v=19$m=-1,t=1,p=1$AAAA$AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := parsePasswordHash(s)
		if (ValidatePasswordHash(s) == nil) != (ok || s == "") {
			t.Fatalf("ValidatePasswordHash(%q) disagrees with the parser (%v)", s, ok)
		}
		if !ok {
			return
		}
		if !strings.HasPrefix(s, "$argon2id$") || h.m == 0 || h.m > argonMaxMemoryKiB || h.t == 0 || h.t > argonMaxTime || h.p == 0 ||
			len(h.key) == 0 || len(h.key) > 64 {
			t.Fatalf("parsePasswordHash(%q) accepted %+v", s, h)
		}
	})
}

package keyset_test

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

func TestParse(t *testing.T) {
	c := keyset.Cursor{Kind: keyset.Memories, Key: "/a/b.md", Prefix: true}
	got, err := keyset.Parse(c.String(), keyset.Memories)
	if err != nil || *got != c {
		t.Fatalf("Parse(%s) = %+v, %v; want %+v", c, got, err, c)
	}
	if got, err := keyset.Parse("", keyset.Memories); got != nil || err != nil {
		t.Errorf(`Parse("") = %v, %v; want the first page`, got, err)
	}
	forged := func(json string) string { return "page_" + base64.RawURLEncoding.EncodeToString([]byte(json)) }
	for name, page := range map[string]string{
		"other list": keyset.Cursor{Kind: keyset.Stores, Key: "memstore_1"}.String(),
		"no prefix":  "abc",
		"not base64": "page_!!!",
		"not JSON":   forged("{"),
		"no key":     forged(`{"k":"m"}`),
		// A key that no database could take as text (JSON decoding
		// already replaces invalid UTF-8).
		"NUL": forged(`{"k":"m","a":"/a\u0000"}`),
	} {
		if _, err := keyset.Parse(page, keyset.Memories); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("%s: Parse(%q): %v, want %s", name, page, err, memstore.EInvalid)
		}
	}
}

func TestNanos(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	if got := keyset.Time(keyset.Nanos(now)); !got.Equal(now) || got.Location() != time.UTC {
		t.Errorf("round trip of %v: %v", now, got)
	}
	year1, year9999 := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if keyset.Nanos(year1) >= keyset.Nanos(now) || keyset.Nanos(year9999) <= keyset.Nanos(now) {
		t.Error("times beyond int64 nanoseconds do not keep their order")
	}
}

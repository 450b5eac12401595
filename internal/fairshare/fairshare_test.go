package fairshare_test

import (
	"testing"

	"github.com/memstore/memstore/internal/fairshare"
)

func TestReclaim(t *testing.T) {
	for _, tc := range []struct {
		held map[string]int
		mine string
		want string
	}{
		{map[string]int{"a": 4}, "b", "a"},
		{map[string]int{"a": 4}, "a", ""},                  // no one else to give
		{map[string]int{"a": 1}, "b", ""},                  // would hold fewer than the taker after
		{map[string]int{"a": 3, "b": 2}, "b", ""},          // 3 against 2: giving would turn it round
		{map[string]int{"a": 3, "b": 1}, "b", "a"},         // 2 against 2 after
		{map[string]int{"a": 3, "b": 5, "c": 1}, "c", "b"}, // the one holding the most
		{map[string]int{"b": 5, "a": 5, "c": 0}, "c", "a"}, // ties: the first by name
		{map[string]int{"a": 5, "b": 5, "c": 4}, "c", ""},  // all about even
		{map[string]int{"a": 2, "b": 2, "c": 0}, "", "a"},  // a newcomer counts as 0
		{map[string]int{}, "a", ""},
	} {
		if got := fairshare.Reclaim(tc.held, tc.mine); got != tc.want {
			t.Errorf("Reclaim(%v, %q) = %q, want %q", tc.held, tc.mine, got, tc.want)
		}
	}
}

package console

import (
	"testing"
	"time"
)

// TestAgo: how long ago a time was, in words, and how long until one.
func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"}, {3 * time.Minute, "3 min ago"}, {5 * time.Hour, "5 h ago"}, {47 * time.Hour, "47 h ago"},
		{3 * 24 * time.Hour, "3 days ago"}, {90 * 24 * time.Hour, "3 months ago"}, {800 * 24 * time.Hour, "2 years ago"},
		{-2 * 24 * time.Hour, "in 2 days"}, {-30 * time.Second, "in under a minute"},
	} {
		if got := ago(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("ago(now - %s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

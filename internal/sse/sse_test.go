package sse

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHeartbeatOnlyOnStreams: heartbeats join a 200 of
// text/event-stream, between whole writes, and never another answer.
func TestHeartbeatOnlyOnStreams(t *testing.T) {
	for _, tc := range []struct {
		status      int
		contentType string
		want        bool
	}{
		{http.StatusOK, "text/event-stream", true},
		{http.StatusOK, "text/event-stream; charset=utf-8", true},
		{http.StatusOK, "application/json", false},
		{http.StatusNotFound, "text/event-stream", false},
	} {
		rec := httptest.NewRecorder()
		sw := NewWriter(rec)
		sw.Header().Set("Content-Type", tc.contentType)
		sw.WriteHeader(tc.status)
		sw.Write([]byte("data: 1\n\n"))
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		sw.Heartbeat(ctx, 10*time.Millisecond, func() { t.Error("a heartbeat failed") })
		cancel()
		body := rec.Body.String()
		if got := strings.Contains(body, ": heartbeat\n\n"); got != tc.want || !strings.HasPrefix(body, "data: 1\n\n") {
			t.Errorf("%d %s: %q", tc.status, tc.contentType, body)
		}
	}
}

// Package tick runs a function at a steady interval until its context
// ends: the loop of a heartbeat or a poll, written once.
package tick

import (
	"context"
	"time"
)

// Every calls fn every interval, the first time one interval from now,
// until ctx ends or fn returns false.
func Every(ctx context.Context, interval time.Duration, fn func() (more bool)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}

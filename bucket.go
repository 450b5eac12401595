package memstore

import "time"

// The arithmetic of a token bucket, which both the shares of searches
// (rateLimiter, in memory) and the sign-in limits (in the database) keep:
// a bucket holds up to burst tokens and gains one per interval; an
// attempt takes one whole token.

// refill is the tokens of a bucket that held tokens elapsed ago: one
// more per interval, up to burst. Time that runs backwards (another
// server's clock a little ahead) adds nothing.
func refill(tokens float64, elapsed, interval time.Duration, burst int) float64 {
	if elapsed > 0 {
		tokens += float64(elapsed) / float64(interval)
	}
	return min(tokens, float64(burst))
}

// untilWhole is how long until a bucket holding tokens holds one whole
// token: 0 when it does.
func untilWhole(tokens float64, interval time.Duration) time.Duration {
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(interval))
}

// untilFull is how long until a bucket holding tokens is full again,
// when it is as good as none.
func untilFull(tokens float64, interval time.Duration, burst int) time.Duration {
	return time.Duration((float64(burst) - tokens) * float64(interval))
}

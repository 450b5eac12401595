// Package fairshare decides which workspace gives up a place in a pool
// the whole server shares (MCP sessions, change-feed streams) when the
// pool is full and another workspace asks for one.
//
// Each workspace's share caps what it may hold, but the shares of all
// workspaces add up to more than the pool: so at a full pool, the
// workspace holding the most gives up a place to one holding at least two
// fewer. After it, the one that gave still holds at least as many as the
// one that took, so places never go back and forth; and a workspace
// holding fewer than the most can always get a place.
package fairshare

// Reclaim is the holder, of those counted in held, that gives up a place
// so that mine may take one: the one holding the most, if it holds at
// least two more than mine; "" when none should. Of holders holding as
// many, the first by name gives, so that the choice does not change from
// one call to the next.
func Reclaim(held map[string]int, mine string) string {
	var from string
	for h, n := range held {
		if h == mine || n < held[mine]+2 {
			continue
		}
		if from == "" || n > held[from] || n == held[from] && h < from {
			from = h
		}
	}
	return from
}

package dirsync

import "strings"

// MergeLines merges two versions of an index such as MEMORY.md by line
// union: every line of local, in its order, then each line of remote that
// local lacks, in remote's order. Lines are split on LF and compared
// byte for byte; the result ends with a newline when either side did.
// Nothing from either side is lost, so a line removed on one side comes
// back from the other: the index is a list of pointers, where a stale
// line costs little and a lost one hides a memory.
func MergeLines(local, remote string) string {
	l, lnl := splitLines(local)
	r, rnl := splitLines(remote)
	seen := make(map[string]bool, len(l)+len(r))
	for _, line := range l {
		seen[line] = true
	}
	out := l
	for _, line := range r {
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	s := strings.Join(out, "\n")
	if (lnl || rnl) && len(out) > 0 {
		s += "\n"
	}
	return s
}

// splitLines splits s into lines without their LF, and says whether s
// ended with one.
func splitLines(s string) ([]string, bool) {
	if s == "" {
		return nil, false
	}
	nl := strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), nl
}

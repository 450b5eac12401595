//go:build !linux

package private

// LearnUmask does nothing where WriteAt is not used: every write sets
// the mode on the open file.
func LearnUmask() {}

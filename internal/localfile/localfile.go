// Package localfile holds the rules memstore applies to the files of a
// local directory it reads memories from or writes them to (import, the
// memory directory, directory sync), so that every command draws the same
// line.
package localfile

import "strings"

// Hidden reports whether a file or directory name, one path segment, is
// hidden: it begins with ".". Hidden entries (.git/, .env, .ssh/,
// .envrc and the like) hold configuration, credentials and hooks that
// other tools read or run, never memories: memstore neither reads them
// into a store nor writes them from one.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }

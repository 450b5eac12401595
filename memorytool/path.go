package memorytool

import (
	"path"
	"strings"

	"github.com/memstore/memstore/internal/localfile"
	"github.com/memstore/memstore/internal/tooltext"
)

// Root is the directory the model addresses; every tool path lies below it.
const Root = "/memories"

// cleanPath checks a path the model sent and returns it relative to
// /memories, lexically cleaned: "." for /memories itself. The checks and
// their order follow the reference (prefix, then lexical escape), with
// memstore's stricter rules: the prefix is exact, percent-encoded
// traversal is refused and so is a NUL byte (docs/memory-tool.md, Paths).
func cleanPath(p string) (string, error) {
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return "", errBadPrefix(p)
	}
	if tooltext.PercentTrap(p) != "" {
		return "", errPercent(p)
	}
	// Clean the path in the model's namespace: /memories/a/../b is
	// /memories/b, and /memories/../memories/x is /memories/x, as in the
	// reference, whose root is a directory named "memories". The part after
	// /memories is cleaned as a relative path, so that ".." above the root
	// is kept (path.Clean("/..") would give "/"): /memories/../../memories/x
	// leaves the reference's root and is refused, as there.
	rel := path.Clean(strings.TrimLeft(p[len(Root):], "/"))
	if rel == "../memories" {
		rel = "."
	} else if after, ok := strings.CutPrefix(rel, "../memories/"); ok {
		rel = after
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errEscape(p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errNUL(p)
	}
	// Stricter than the reference: a hidden name (.git/, .env, .ssh/)
	// holds what other tools read and run, never a memory, and a model
	// must not be able to plant a git hook or read a credential through
	// its memory. Listings already leave such names out.
	for seg := range strings.SplitSeq(rel, "/") {
		if rel != "." && localfile.ExecName(seg) != "" {
			return "", errHidden(p)
		}
	}
	return rel, nil
}

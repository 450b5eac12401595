package dirsync

import (
	"runtime"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
)

// pathProblem says why memory path p cannot be a file of the directory,
// "" when it can. It is asked of every remote path before anything is
// written for it, and of every local file before it is uploaded.
func (s *syncer) pathProblem(p string) string {
	if err := memstore.ValidatePath(p); err != nil {
		return memstore.ErrorMessage(err)
	}
	rel := p[1:]
	if why := localfile.PathProblem(s.o.Dir, rel, runtime.GOOS); why != "" {
		return why
	}
	switch {
	case ownName(rel):
		return "the name is reserved for the sync's own files and conflict copies"
	case s.o.Scope == ScopePrivate && strings.HasPrefix(rel, teamDir+"/"):
		return "team/ belongs to the team scope, synced with its own store"
	}
	return ""
}

// Package schema reads a SQL backend's migrations: the numbered .sql
// files embedded in it, which each backend applies in its own dialect
// and records in its own way.
package schema

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// A Migration is one file of a backend's migrations, numbered by the
// start of its name (0001_schema.sql is 1).
type Migration struct {
	N          int
	Name, Text string
}

// Read returns the migrations of dir in fsys, in order of their names,
// or an error when a name does not begin with a number or dir holds none.
func Read(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ms []Migration
	for _, name := range names {
		n, err := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: bad number", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{N: n, Name: name, Text: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	return ms, nil
}

// Development decides whether a database made by a development build
// before the first release, its schema at development version have, can
// be taken over as it is: only at the last development version (last),
// whose schema is the first release's. The migrations that brought the
// earlier versions up to it are gone from this build, so an older
// database is sent to the last development build, which still has them.
func Development(have, last int) error {
	switch {
	case have > last:
		return fmt.Errorf("the database was made by a development build of memstore newer than this one (its schema is at development version %d; this memstore knows up to %d): open it with the build that made it", have, last)
	case have < last:
		return fmt.Errorf("the database was made by an early development build of memstore (its schema is at development version %d; this memstore takes over version %d only): open it once with memstore built from commit %s, which upgrades it, then with this one", have, last, LastDevelopmentBuild)
	}
	return nil
}

// FirstRelease is the version of the first release's schema, which is
// the schema of the last development build: a database that build made
// is taken over at this version.
const FirstRelease = 1

// LastDevelopmentBuild is the last commit whose memstore upgrades a
// database of any development build to the last development version.
const LastDevelopmentBuild = "de0f595"

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

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/sqlite"
)

// dbOptions is what a command asks of the database it opens.
type dbOptions struct {
	// create lets a missing database be made; without it a mistyped name
	// is an error rather than an empty database.
	create bool
	// limits are the core's quotas (memstore.Limits); none when zero.
	limits memstore.Limits
	// rules are the content rules the core applies; both when zero.
	rules memstore.ContentRules
	// logger hears of the database's long or failing background work;
	// nil discards it.
	logger *slog.Logger
	// dreams tells the core that the server runs dreams (it has a model).
	dreams bool
	// embedder embeds semantic search's queries; nil when it is off.
	embedder memstore.Embedder
	// semanticWeight is the semantic ranking's weight in hybrid search.
	semanticWeight float64
}

// postgresSchemes are the URL schemes that name a PostgreSQL database.
var postgresSchemes = []string{"postgres", "postgresql"}

// openDatabase opens the database that name (--db, MEMSTORE_DB or the
// default path) names: the one place that decides which backend keeps the
// data. A database URL with a scheme this build has no backend for is a
// usage error that never repeats the URL, which may hold a password.
func openDatabase(ctx context.Context, name string, o dbOptions) (memstore.Database, error) {
	scheme, ok := databaseURL(name)
	switch {
	case !ok:
		return openSQLite(ctx, name, o)
	case slices.ContainsFunc(postgresSchemes, func(p string) bool { return strings.EqualFold(scheme, p) }):
		return openPostgres(ctx, name, o)
	}
	return nil, usageErr(fmt.Sprintf("--db: %q databases are not supported; give a postgres:// URL or the path of a database file", scheme))
}

// databaseURL reports whether name is a database URL rather than a file's
// path, and its scheme.
func databaseURL(name string) (scheme string, ok bool) {
	scheme, _, ok = strings.Cut(name, "://")
	return scheme, ok && isScheme(scheme)
}

// databaseName is name as messages show it: a URL without its password.
func databaseName(name string) string {
	if _, ok := databaseURL(name); !ok {
		return name
	}
	u, err := url.Parse(name)
	if err != nil {
		return "(a database URL that does not parse)" // it may hold a password anywhere
	}
	return u.Redacted()
}

// openPostgres opens the PostgreSQL database at a postgres:// URL (the
// PG* environment variables fill in what it leaves out, as in libpq),
// bringing its schema up to date.
func openPostgres(ctx context.Context, dsn string, o dbOptions) (memstore.Database, error) {
	db, err := postgres.Open(ctx, dsn, postgres.Options{Logger: o.logger})
	if err != nil {
		return nil, fmt.Errorf("cannot use the PostgreSQL database %s (is the server up, and may this user create tables in the database?): %w", databaseName(dsn), err)
	}
	return db, nil
}

// newCore is the core over db, with the options o asks for.
func newCore(db memstore.Database, o dbOptions) *memstore.Core {
	opts := []memstore.CoreOption{memstore.WithLimits(o.limits), memstore.WithContentRules(o.rules), memstore.WithDreams(o.dreams)}
	if o.embedder != nil {
		opts = append(opts, memstore.WithEmbedder(o.embedder), memstore.WithSemanticWeight(o.semanticWeight))
	}
	return memstore.NewCore(db, opts...)
}

// openSQLite opens the SQLite database file at path. With o.create, a
// missing file is made with mode 0600, and its missing parent directories
// with mode 0700 (memories are private).
func openSQLite(ctx context.Context, path string, o dbOptions) (memstore.Database, error) {
	switch fi, err := os.Stat(path); {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("database %s is a directory; give the path of a database file with --db", path)
	case errors.Is(err, os.ErrNotExist) && !o.create:
		return nil, fmt.Errorf("no database at %s; give the right one with --db or MEMSTORE_DB", path)
	case errors.Is(err, os.ErrNotExist):
		// sqlite.Open makes the file itself, with mode 0600.
		if err := os.MkdirAll(filepath.Dir(path), private.DirMode); err != nil {
			return nil, fmt.Errorf("cannot make the directory of database %s: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("cannot use database %s: %w", path, err)
	}
	db, err := sqlite.Open(ctx, path, sqlite.Options{Logger: o.logger})
	if errors.Is(err, sqlite.ErrReadOnly) {
		return nil, err // says what to do
	}
	if err != nil {
		return nil, fmt.Errorf("cannot use database %s (is it a memstore database, and may this user write to it and its directory?): %w", path, err)
	}
	return db, nil
}

// isScheme reports whether s is a URL scheme (RFC 3986) of more than one
// letter, so that a Windows drive (C://) is still a path.
func isScheme(s string) bool {
	if len(s) < 2 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789+-.") == ""
}

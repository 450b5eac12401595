package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/mcpserver"
)

// Configuration shared by serve and keys: where the database lives, and
// flags that MEMSTORE_* variables may also set. The order is defaults,
// then the environment, then flags; every value is checked at start, and a
// bad one is reported under the name of the flag or variable it came from.

// defaultAddr is where serve listens unless told otherwise: loopback only,
// so that a first run exposes nothing to the network.
const defaultAddr = "127.0.0.1:6366"

// dbPath is the database file a command works on: --db, else MEMSTORE_DB,
// else memstore/memstore.db under $XDG_DATA_HOME, else under
// ~/.local/share.
func dbPath(e env, flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := e.getenv("MEMSTORE_DB"); p != "" {
		return p, nil
	}
	if dir := dataDir(e); dir != "" {
		return filepath.Join(dir, "memstore.db"), nil
	}
	return "", errors.New("no database given and no home directory to keep one in: give --db FILE or set MEMSTORE_DB")
}

// dataDir is memstore's data directory: memstore under $XDG_DATA_HOME,
// else under ~/.local/share; "" without a home directory.
func dataDir(e env) string {
	if dir := e.getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "memstore")
	}
	if home := e.getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "memstore")
	}
	return ""
}

// ensureWorkspace returns the workspace with an ID or name, creating one
// by that name when there is none.
func ensureWorkspace(ctx context.Context, ks memstore.KeyService, name string) (ws *memstore.Workspace, created bool, err error) {
	ws, err = ks.Workspace(ctx, name)
	if memstore.ErrorCode(err) != memstore.ENotFound {
		return ws, false, err
	}
	ws, err = ks.CreateWorkspace(ctx, name)
	if memstore.ErrorCode(err) == memstore.EConflict { // made meanwhile by another process
		ws, err = ks.Workspace(ctx, name)
		return ws, false, err
	}
	return ws, err == nil, err
}

// applyEnv sets each flag of fs that the command line left alone from its
// environment variable in vars (flag name → variable), so that flags
// override the environment and the environment overrides defaults. Call it
// after parsing. A bad value is a usage error naming the variable.
func applyEnv(e env, cmd string, fs *flag.FlagSet, vars map[string]string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names) // report the same variable first every time
	for _, name := range names {
		v := vars[name]
		val := e.getenv(v)
		if given[name] || val == "" {
			continue
		}
		if err := fs.Set(name, val); err != nil {
			return usageError(e, "memstore %s: %s=%q: %v", cmd, v, val, err)
		}
	}
	return nil
}

// choice is a flag value that must be one of a few words.
type choice struct {
	value   string
	allowed []string
}

func newChoice(value string, allowed ...string) *choice {
	return &choice{value: value, allowed: allowed}
}

func (c *choice) String() string {
	if c == nil {
		return ""
	}
	return c.value
}

func (c *choice) Set(s string) error {
	if !slices.Contains(c.allowed, s) {
		if len(c.allowed) == 2 {
			return fmt.Errorf("must be %s or %s", c.allowed[0], c.allowed[1])
		}
		return fmt.Errorf("must be one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = s
	return nil
}

// count is a flag value that is a whole number, 0 or more.
type count int64

func (n *count) String() string {
	if n == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*n), 10)
}

func (n *count) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return errors.New("must be a whole number, 0 or more")
	}
	*n = count(v)
	return nil
}

// boolValue is a boolean flag whose error, unlike the flag package's
// "parse error", says what is expected (it matters for variables).
type boolValue bool

func (b *boolValue) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(bool(*b))
}

func (b *boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true or false")
	}
	*b = boolValue(v)
	return nil
}

// IsBoolFlag lets the flag be given without a value.
func (b *boolValue) IsBoolFlag() bool { return true }

// hostPort is a listen address: HOST:PORT, where HOST may be empty (all
// interfaces) and PORT 0 (any free port).
type hostPort string

func (h *hostPort) String() string {
	if h == nil {
		return ""
	}
	return string(*h)
}

func (h *hostPort) Set(s string) error {
	bad := errors.New("must be HOST:PORT, such as 127.0.0.1:6366, :8080 or 127.0.0.1:0 (any free port)")
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return bad
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port != strconv.FormatUint(n, 10) {
		return bad
	}
	*h = hostPort(s)
	return nil
}

// duration is a flag value that is a duration above 0, such as 30m.
type duration time.Duration

func (d *duration) String() string {
	if d == nil {
		return "0s"
	}
	return time.Duration(*d).String()
}

func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return errors.New("must be a duration above 0, such as 30m or 2h")
	}
	*d = duration(v)
	return nil
}

// originList is a flag value of comma-separated web origins, each
// SCHEME://HOST[:PORT].
type originList []string

func (o *originList) String() string {
	if o == nil {
		return ""
	}
	return strings.Join(*o, ",")
}

func (o *originList) Set(s string) error {
	var list originList
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := mcpserver.NormalizeOrigin(v)
		if err != nil {
			return err
		}
		list = append(list, n)
	}
	*o = list
	return nil
}

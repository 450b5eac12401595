package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore"
)

// The environment variables that decide where memory is and whether it is
// on (docs/memory-directory.md, Enablement and Where the directory is).
// An empty variable counts as unset.
const (
	EnvDisable        = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
	EnvSimple         = "CLAUDE_CODE_SIMPLE"
	EnvRemote         = "CLAUDE_CODE_REMOTE"
	EnvRemoteDir      = "CLAUDE_CODE_REMOTE_MEMORY_DIR"
	EnvConfigDir      = "CLAUDE_CONFIG_DIR"
	EnvProjectDirName = "CLAUDE_CODE_PROJECT_DIR_NAME"
	EnvPathOverride   = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
)

// The settings keys that turn memory on or off and move it.
const (
	SettingEnabled   = "autoMemoryEnabled"
	SettingDirectory = "autoMemoryDirectory"
)

// Options say where to look; libraries never read the environment, the
// command passes it in.
type Options struct {
	// Cwd is the working directory; "" means os.Getwd. It is made
	// absolute and its symbolic links are resolved.
	Cwd string
	// Getenv reads the environment; nil means an empty one.
	Getenv func(string) string
	// Home is the user's home directory; "" means os.UserHomeDir. It is
	// needed only for ~/.claude and for "~/" in settings.
	Home string
	// TrustProject lets the settings files of the working tree
	// (.claude/settings.json and .claude/settings.local.json) choose the
	// memory directory. Off, their autoMemoryDirectory is ignored (and
	// reported in Location.Rejected), because a repository can commit
	// either and could otherwise point memory at ~/.ssh; only the user's
	// own settings, the --settings file, managed settings and the
	// environment choose it. Their autoMemoryEnabled counts either way,
	// since it can only turn memory on or off, as in Claude Code.
	TrustProject bool
	// SettingsFile is the file given to Claude Code's --settings, or a
	// JSON object as that flag also takes; "" for none. Unlike the other
	// settings files, it must exist and parse.
	SettingsFile string
	// PolicyFile is the managed (policy) settings file; "" for none, and
	// a missing file counts as none. Claude Code keeps it at
	// ManagedSettingsFile(), which the memstore command passes by default.
	PolicyFile string
	// Warn receives warnings: an override ignored, a settings file that
	// does not parse, a .git file not followed. nil discards them.
	Warn func(string)
}

// Location is where the memory directory of a project is, whether memory
// is on, and how that was decided.
type Location struct {
	// Enabled reports whether memory is on. EnabledBy names the rule that
	// turned it on, DisabledBy the rule that turned it off (the other is
	// ""): an environment variable, "settings:<file>", or "default".
	Enabled    bool   `json:"enabled"`
	EnabledBy  string `json:"enabled_by"`
	DisabledBy string `json:"disabled_by"`
	// Dir is the memory directory, absolute, ending with exactly one
	// separator. It is computed even when memory is off.
	Dir string `json:"dir"`
	// Source says what chose Dir: "env" (CLAUDE_COWORK_MEMORY_PATH_OVERRIDE),
	// "settings:<file>" (autoMemoryDirectory), or "default".
	Source string `json:"source"`
	// Slug is the name of the directory under projects/: the sanitized
	// root, or CLAUDE_CODE_PROJECT_DIR_NAME; "" with an override.
	Slug string `json:"slug"`
	// Base is where Claude Code keeps per-user state: projects/ and
	// agent-memory/ are in it. Like Dir, it is computed with an override
	// too.
	Base string `json:"base"`
	// WorkDir is the working directory, symbolic links resolved and
	// NFC-normalised.
	WorkDir string `json:"work_dir"`
	// GitRoot and CanonicalRoot are those of CanonicalGitRoot for the
	// working directory; "" outside git.
	GitRoot       string `json:"git_root"`
	CanonicalRoot string `json:"canonical_root"`
	// Rejected lists the overrides that were ignored, with why.
	Rejected []Rejected `json:"rejected"`
}

// Rejected is an override that was ignored.
type Rejected struct {
	// Source is where it came from: "env" or "settings:<file>".
	Source string `json:"source"`
	// Key is the variable or settings key.
	Key    string `json:"key"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// String describes the rejection for a person.
func (r Rejected) String() string {
	if r.Source == "env" {
		return fmt.Sprintf("%s=%q ignored: %s", r.Key, r.Value, r.Reason)
	}
	return fmt.Sprintf("%s %q in %s ignored: %s", r.Key, r.Value, strings.TrimPrefix(r.Source, "settings:"), r.Reason)
}

// Entrypoint is the path of the index, MEMORY.md.
func (l *Location) Entrypoint() string { return l.Dir + indexName }

// TeamDir is the directory of team memory, ending with a separator.
func (l *Location) TeamDir() string { return l.Dir + "team" + string(filepath.Separator) }

// LogPath is the daily log for t's day in t's location:
// logs/YYYY/MM/YYYY-MM-DD.md in the directory.
func (l *Location) LogPath(t time.Time) string {
	return l.Dir + filepath.Join("logs", t.Format("2006"), t.Format("01"), t.Format("2006-01-02")+".md")
}

// Resolve finds the memory directory and whether memory is on, following
// Claude Code's rules (docs/memory-directory.md, Where the directory is).
//
// Memory is on or off by the first rule that decides:
// CLAUDE_CODE_DISABLE_AUTO_MEMORY true (1, true, yes or on, in any case)
// turns it off, and false (0, false, no or off) turns it on whatever
// follows; CLAUDE_CODE_SIMPLE true turns it off; so does
// CLAUDE_CODE_REMOTE true without CLAUDE_CODE_REMOTE_MEMORY_DIR; then
// autoMemoryEnabled in the settings files; else it is on.
//
// The directory is the first that applies of:
//  1. CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, if ValidateOverride accepts it
//     ("~" is not expanded);
//  2. autoMemoryDirectory from the first settings file that sets it, if
//     valid ("~/" is expanded), passing over the working tree's files
//     unless TrustProject is set. An invalid value is ignored and the
//     default applies: lower files are not consulted, as in Claude Code;
//  3. <base>/projects/<slug>/memory/, where base is
//     CLAUDE_CODE_REMOTE_MEMORY_DIR, else CLAUDE_CONFIG_DIR, else
//     ~/.claude, and slug is Sanitize of the canonical git root of the
//     working directory (the directory itself outside git), or
//     CLAUDE_CODE_PROJECT_DIR_NAME when it and CLAUDE_CONFIG_DIR are both
//     set and the name is 1 to 64 of [A-Za-z0-9_-].
//
// Settings files, highest precedence first (each key is taken from the
// first file that sets it): PolicyFile, SettingsFile,
// <cwd>/.claude/settings.local.json and <cwd>/.claude/settings.json (their
// directory only with TrustProject), and $CLAUDE_CONFIG_DIR/settings.json
// or ~/.claude/settings.json. No file above the working directory is
// read. A relative CLAUDE_CONFIG_DIR or
// CLAUDE_CODE_REMOTE_MEMORY_DIR is taken from the working directory.
//
// Ignored overrides are listed in Rejected and passed to Warn. Resolve
// fails when the working directory does not exist, when the home
// directory is needed and unknown, and when SettingsFile cannot be read or
// parsed.
func Resolve(o Options) (*Location, error) {
	r, err := newResolver(o)
	if err != nil {
		return nil, err
	}
	l := &Location{WorkDir: norm.NFC.String(r.workDir), Rejected: []Rejected{}}
	reject := func(source, key, value string, why error) {
		rj := Rejected{Source: source, Key: key, Value: value, Reason: why.Error()}
		l.Rejected = append(l.Rejected, rj)
		r.warn(rj.String())
	}

	root, canon, why, err := gitRoots(r.workDir)
	if err != nil {
		return nil, err
	}
	if why != "" {
		r.warn(why + "; not followed")
	}
	l.GitRoot, l.CanonicalRoot = root, canon

	configDir, err := r.configDir()
	if err != nil {
		return nil, err
	}
	l.Base, err = r.base()
	if err != nil {
		return nil, err
	}
	files, err := loadSettings(o, r.workDir, configDir, r.warn)
	if err != nil {
		return nil, err
	}

	// Enablement.
	for _, f := range files {
		if f.enabledErr != nil {
			reject(f.source, SettingEnabled, f.enabledRaw, f.enabledErr)
		}
	}
	on, rule := r.enablement(files)
	l.Enabled = on
	if on {
		l.EnabledBy = rule
	} else {
		l.DisabledBy = rule
	}

	// The directory: the environment override, then settings, then the
	// default.
	if v := r.getenv(EnvPathOverride); v != "" {
		if dir, err := ValidateOverride(v, false, ""); err != nil {
			reject("env", EnvPathOverride, v, err)
		} else {
			l.Dir, l.Source = dir, "env"
		}
	}
	for _, f := range files {
		if l.Dir != "" {
			break
		}
		if !f.dirSet {
			continue
		}
		if f.project && !o.TrustProject {
			reject(f.source, SettingDirectory, f.dir, errors.New("the project is not trusted (memstore: --trust-project)"))
			continue
		}
		if f.dirErr != nil {
			reject(f.source, SettingDirectory, f.dir, f.dirErr)
			break
		}
		home, _ := r.home() // unknown home: ValidateOverride says so for "~/"
		dir, err := ValidateOverride(f.dir, true, home)
		if err != nil {
			reject(f.source, SettingDirectory, f.dir, err)
			break
		}
		l.Dir, l.Source = dir, f.source
	}
	if l.Dir == "" {
		l.Source = "default"
		l.Slug = Sanitize(norm.NFC.String(r.workDir))
		if canon != "" {
			l.Slug = Sanitize(canon)
		}
		if name := r.getenv(EnvProjectDirName); name != "" {
			switch {
			case r.getenv(EnvConfigDir) == "":
				reject("env", EnvProjectDirName, name, errors.New("only used when "+EnvConfigDir+" is set"))
			case !projectDirName.MatchString(name):
				reject("env", EnvProjectDirName, name, errors.New("not 1 to 64 letters, digits, '_' or '-'"))
			default:
				l.Slug = name
			}
		}
		l.Dir = filepath.Join(l.Base, "projects", l.Slug, "memory") + string(filepath.Separator)
	}
	return l, nil
}

var projectDirName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Scope is where an agent's own memory lives.
type Scope string

// The scopes of agent memory.
const (
	ScopeUser    Scope = "user"    // <base>/agent-memory/<agent>/, for every project
	ScopeProject Scope = "project" // <cwd>/.claude/agent-memory/<agent>/, shared with the project
	ScopeLocal   Scope = "local"   // <cwd>/.claude/agent-memory-local/<agent>/, this checkout only
)

// AgentDir is the memory directory of the agent named agent in scope,
// ending with a separator. In the name, every character other than an
// ASCII letter, digit, '_' or '-' becomes '-' (one per UTF-16 unit, as in
// Sanitize). The project and local scopes are under the working directory
// (symbolic links resolved, names as stored, so the path exists as given);
// the user scope under the base of Location.
func AgentDir(o Options, agent string, scope Scope) (string, error) {
	if agent == "" {
		return "", errors.New("agent memory: no agent name")
	}
	if scope != ScopeUser && scope != ScopeProject && scope != ScopeLocal {
		return "", fmt.Errorf("agent memory: unknown scope %q (want user, project or local)", scope)
	}
	r, err := newResolver(o)
	if err != nil {
		return "", err
	}
	var dir string
	switch scope {
	case ScopeUser:
		base, err := r.base()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "agent-memory", agentDirName(agent))
	case ScopeLocal:
		dir, err = checkoutDir(r.workDir, ".claude", "agent-memory-local", agentDirName(agent))
	default:
		dir, err = checkoutDir(r.workDir, ".claude", "agent-memory", agentDirName(agent))
	}
	if err != nil {
		return "", err
	}
	return dir + string(filepath.Separator), nil
}

// checkoutDir is the directory elems below the checkout workDir, refused
// when any of elems that exists is a symbolic link: the checkout's files
// are the repository's, which could point its .claude, or a directory in
// it, at any directory of the user's, and an apply or a sync would then
// write there, and remove memories there.
func checkoutDir(workDir string, elems ...string) (string, error) {
	p := workDir
	for _, e := range elems {
		p = filepath.Join(p, e)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symbolic link: memstore follows no link in a checkout's .claude, as a repository could point it anywhere; replace it with a directory", p)
		}
	}
	return filepath.Join(append([]string{workDir}, elems...)...), nil
}

// agentDirName is agent with every UTF-16 unit outside [A-Za-z0-9_-]
// replaced by '-'.
func agentDirName(agent string) string {
	var b strings.Builder
	for _, r := range agent {
		switch {
		case r < 0x80 && (asciiAlnum(byte(r)) || r == '_' || r == '-'):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// resolver holds what Resolve and AgentDir work from.
type resolver struct {
	o       Options
	getenv  func(string) string
	warn    func(string)
	workDir string // real, names as stored
}

func newResolver(o Options) (*resolver, error) {
	r := &resolver{o: o, getenv: o.Getenv, warn: o.Warn}
	if r.getenv == nil {
		r.getenv = func(string) string { return "" }
	}
	if r.warn == nil {
		r.warn = func(string) {}
	}
	wd, err := realDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	r.workDir = wd
	return r, nil
}

// realDir is dir ("" for the process's) made absolute with its symbolic
// links resolved; it must be a directory.
func realDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s: not a directory", dir)
	}
	return real, nil
}

func (r *resolver) home() (string, error) {
	if r.o.Home != "" {
		return r.o.Home, nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("the home directory is unknown: set HOME, or " + EnvConfigDir)
	}
	return h, nil
}

// configDir is Claude Code's configuration directory: CLAUDE_CONFIG_DIR
// or ~/.claude, NFC-normalised as Claude Code does.
func (r *resolver) configDir() (string, error) {
	if v := r.getenv(EnvConfigDir); v != "" {
		return norm.NFC.String(r.abs(v)), nil
	}
	h, err := r.home()
	if err != nil {
		return "", err
	}
	return norm.NFC.String(filepath.Join(h, ".claude")), nil
}

// base is where projects/ and agent-memory/ are:
// CLAUDE_CODE_REMOTE_MEMORY_DIR, else the configuration directory.
func (r *resolver) base() (string, error) {
	if v := r.getenv(EnvRemoteDir); v != "" {
		return r.abs(v), nil
	}
	return r.configDir()
}

// abs is p made absolute against the working directory, cleaned.
func (r *resolver) abs(p string) string { return resolvePath(r.workDir, p) }

// enablement applies the enablement rules in order and returns the
// outcome and the rule that decided it.
func (r *resolver) enablement(files []settingsFile) (bool, string) {
	switch v := r.getenv(EnvDisable); {
	case envTruthy(v):
		return false, EnvDisable
	case envFalsy(v):
		return true, EnvDisable
	}
	if envTruthy(r.getenv(EnvSimple)) {
		return false, EnvSimple
	}
	if envTruthy(r.getenv(EnvRemote)) && r.getenv(EnvRemoteDir) == "" {
		return false, EnvRemote
	}
	for _, f := range files {
		if f.enabled != nil {
			return *f.enabled, f.source
		}
	}
	return true, "default"
}

// envTruthy and envFalsy read a boolean variable as Claude Code does:
// trimmed, in any case.
func envTruthy(v string) bool {
	switch strings.ToLower(memstore.TrimJS(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func envFalsy(v string) bool {
	switch strings.ToLower(memstore.TrimJS(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

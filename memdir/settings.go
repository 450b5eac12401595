package memdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ManagedSettingsFile is where Claude Code reads managed (policy) settings
// from a file on this system: /Library/Application Support/ClaudeCode/ on
// macOS, C:\Program Files\ClaudeCode\ on Windows and /etc/claude-code/
// elsewhere, each with managed-settings.json. The memstore command passes
// it as Options.PolicyFile. Policy that Claude Code receives by other
// means (MDM profiles, the Windows registry, drop-in files, the claude.ai
// console) is not read.
func ManagedSettingsFile() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// settingsFile is what memdir reads of one settings file.
type settingsFile struct {
	source string // "settings:<file>", as in Location.Source
	// project marks a file of the working tree (.claude/settings.json and
	// .claude/settings.local.json): the repository's, not the user's.
	project bool
	// enabled is autoMemoryEnabled, nil when absent (or null).
	enabled *bool
	// dir is autoMemoryDirectory; dirSet tells a present value from an
	// absent one (or null), dirErr says why a present one is unusable (dir
	// then holds its JSON).
	dir    string
	dirSet bool
	dirErr error
	// enabledErr says why a present autoMemoryEnabled is unusable, and
	// enabledRaw holds its JSON.
	enabledErr error
	enabledRaw string
}

// loadSettings reads the settings files that can choose the memory
// directory or turn memory off, highest precedence first: policy,
// --settings, local, project, user. This is Claude Code's order, so the
// same key in two files resolves the same way in both.
//
// The local and project files are in the working tree, so a repository
// can commit them, settings.local.json as well as settings.json (it is
// only by convention that git ignores it): both are marked project, and
// may choose the directory only when the project is trusted. In the home
// directory, where the project's .claude is the user's own settings
// directory, its settings.json is the user's file, and counts as that,
// and its settings.local.json is the user's too: neither needs trust.
//
// A missing file counts as empty, except the --settings file, which the
// user asked for. A file that cannot be read or parsed is skipped with a
// warning, except the --settings file, which is an error.
func loadSettings(o Options, workDir, configDir string, warn func(string)) ([]settingsFile, error) {
	type src struct {
		path     string
		required bool
		project  bool
	}
	user := filepath.Join(configDir, "settings.json")
	project := filepath.Join(workDir, ".claude", "settings.json")
	usersOwn := sameFile(filepath.Join(workDir, ".claude"), configDir)
	srcs := []src{
		{path: o.PolicyFile},
		{path: o.SettingsFile, required: true},
		{path: filepath.Join(workDir, ".claude", "settings.local.json"), project: !usersOwn},
		{path: project, project: true},
		{path: user},
	}
	if usersOwn || sameFile(project, user) {
		srcs[3].path = "" // read once, as the user's
	}
	var out []settingsFile
	for _, s := range srcs {
		if s.path == "" {
			continue
		}
		var data []byte
		source := "settings:" + s.path
		if s.required && strings.HasPrefix(strings.TrimSpace(s.path), "{") {
			// Like Claude Code's --settings, a JSON object in place of a file.
			data, source = []byte(s.path), "settings:--settings"
		} else {
			var err error
			data, err = os.ReadFile(s.path)
			switch {
			case err == nil:
			case errors.Is(err, fs.ErrNotExist) && !s.required:
				continue
			case s.required:
				return nil, fmt.Errorf("settings file: %w", err)
			default:
				warn(fmt.Sprintf("settings file %s ignored: %v", s.path, err))
				continue
			}
		}
		f, err := parseSettings(data)
		if err != nil {
			if s.required {
				return nil, fmt.Errorf("settings %s: %w", strings.TrimPrefix(source, "settings:"), err)
			}
			warn(fmt.Sprintf("settings file %s ignored: %v", s.path, err))
			continue
		}
		f.source, f.project = source, s.project
		out = append(out, f)
	}
	return out, nil
}

// parseSettings reads the two keys memdir needs from a settings file.
func parseSettings(data []byte) (settingsFile, error) {
	var f settingsFile
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return f, fmt.Errorf("not a JSON object: %w", err)
	}
	if raw, ok := m["autoMemoryEnabled"]; ok && !isNull(raw) {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			f.enabledErr, f.enabledRaw = errors.New("not true or false"), string(raw)
		} else {
			f.enabled = &b
		}
	}
	if raw, ok := m["autoMemoryDirectory"]; ok && !isNull(raw) {
		f.dirSet = true
		if err := json.Unmarshal(raw, &f.dir); err != nil {
			f.dirErr, f.dir = errors.New("not a string"), string(raw)
		}
	}
	return f, nil
}

// sameFile reports whether a and b name one existing file or directory.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

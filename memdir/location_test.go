package memdir_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore/memdir"
)

// realTempDir is a temporary directory with its symbolic links resolved,
// the form Resolve reports.
func realTempDir(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// writeTestFile writes content to path, making its directories.
func writeTestFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mkdirs(tb testing.TB, dirs ...string) {
	tb.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
}

// envMap is an environment for Options.Getenv.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// settingsLayout is a project with a home and the settings files of every
// source, which a test fills in by source name.
type settingsLayout struct {
	root, home, proj, policy, flag string
}

func newSettingsLayout(tb testing.TB) settingsLayout {
	tb.Helper()
	root := realTempDir(tb)
	l := settingsLayout{
		root:   root,
		home:   filepath.Join(root, "home"),
		proj:   filepath.Join(root, "proj"),
		policy: filepath.Join(root, "etc", "managed-settings.json"),
		flag:   filepath.Join(root, "flag.json"),
	}
	mkdirs(tb, l.home, l.proj)
	return l
}

// write writes the settings file of each source named in files: policy,
// flag, local, project, user, or config (user settings under
// $CLAUDE_CONFIG_DIR = <root>/cfg).
func (l settingsLayout) write(tb testing.TB, files map[string]string) {
	tb.Helper()
	for src, content := range files {
		writeTestFile(tb, l.file(src), content)
	}
}

// withFlagFile is files with an empty --settings file unless files has
// one, so that a case sets only the sources it is about.
func withFlagFile(files map[string]string) map[string]string {
	all := map[string]string{"flag": "{}"}
	maps.Copy(all, files)
	return all
}

func (l settingsLayout) file(src string) string {
	switch src {
	case "policy":
		return l.policy
	case "flag":
		return l.flag
	case "local":
		return filepath.Join(l.proj, ".claude", "settings.local.json")
	case "project":
		return filepath.Join(l.proj, ".claude", "settings.json")
	case "user":
		return filepath.Join(l.home, ".claude", "settings.json")
	case "config":
		return filepath.Join(l.root, "cfg", "settings.json")
	}
	panic("unknown settings source " + src)
}

func (l settingsLayout) options(env map[string]string) memdir.Options {
	return memdir.Options{Cwd: l.proj, Home: l.home, Getenv: envMap(env), PolicyFile: l.policy, SettingsFile: l.flag}
}

// defaultDir is the default memory directory of the layout's project.
func (l settingsLayout) defaultDir() string {
	return filepath.Join(l.home, ".claude", "projects", memdir.Sanitize(l.proj), "memory") + string(filepath.Separator)
}

func TestEnablement(t *testing.T) {
	off := `{"autoMemoryEnabled": false}`
	on := `{"autoMemoryEnabled": true}`
	tests := []struct {
		name     string
		env      map[string]string
		files    map[string]string
		trust    bool
		want     bool
		rule     string // the source name of a settings file, or the rule
		rejected int
	}{
		{name: "default", want: true, rule: "default"},
		{name: "disable 1", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "disable TRUE, spaced", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " TRUE "}, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "disable yes", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "yes"}, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "disable On", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "On"}, files: map[string]string{"policy": on}, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{
			name:  "disable 0 wins over every later rule",
			env:   map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0", "CLAUDE_CODE_SIMPLE": "1", "CLAUDE_CODE_REMOTE": "1"},
			files: map[string]string{"policy": off}, want: true, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
		},
		{name: "disable off", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "OFF"}, files: map[string]string{"user": off}, want: true, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "disable no", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " no"}, files: map[string]string{"user": off}, want: true, rule: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "disable neither true nor false", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "maybe", "CLAUDE_CODE_SIMPLE": "1"}, rule: "CLAUDE_CODE_SIMPLE"},
		{name: "disable empty is unset", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": ""}, want: true, rule: "default"},
		{name: "simple", env: map[string]string{"CLAUDE_CODE_SIMPLE": "true"}, rule: "CLAUDE_CODE_SIMPLE"},
		{name: "simple 0 decides nothing", env: map[string]string{"CLAUDE_CODE_SIMPLE": "0"}, files: map[string]string{"user": off}, rule: "user"},
		{name: "remote without a memory dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "1"}, files: map[string]string{"user": on}, rule: "CLAUDE_CODE_REMOTE"},
		{name: "remote with a memory dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}, want: true, rule: "default"},
		{name: "remote with a memory dir, settings off", env: map[string]string{"CLAUDE_CODE_REMOTE": "yes", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}, files: map[string]string{"user": off}, rule: "user"},
		{name: "user settings off", files: map[string]string{"user": off}, rule: "user"},
		{name: "user settings on", files: map[string]string{"user": on}, want: true, rule: "user"},
		{name: "project over user", files: map[string]string{"user": on, "project": off}, rule: "project"},
		{name: "untrusted project still turns memory off", files: map[string]string{"project": off}, rule: "project"},
		{name: "local over project", files: map[string]string{"project": off, "local": on}, want: true, rule: "local"},
		{name: "flag over local", files: map[string]string{"local": on, "flag": off}, rule: "flag"},
		{name: "policy over all", files: map[string]string{"user": on, "project": on, "local": on, "flag": on, "policy": off}, rule: "policy"},
		{name: "a file without the key passes", files: map[string]string{"policy": `{"model":"x"}`, "user": off}, rule: "user"},
		{name: "null is absent", files: map[string]string{"local": `{"autoMemoryEnabled": null}`, "user": off}, rule: "user"},
		{name: "not a boolean is rejected", files: map[string]string{"local": `{"autoMemoryEnabled": "false"}`}, want: true, rule: "default", rejected: 1},
		{name: "unparsable file is skipped", files: map[string]string{"local": `{"autoMemoryEnabled": false`, "user": on}, want: true, rule: "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newSettingsLayout(t)
			files := withFlagFile(tt.files)
			l.write(t, files)
			o := l.options(tt.env)
			o.TrustProject = tt.trust
			loc, err := memdir.Resolve(o)
			if err != nil {
				t.Fatal(err)
			}
			rule := tt.rule
			if _, ok := files[rule]; ok {
				rule = "settings:" + l.file(rule)
			}
			if loc.Enabled != tt.want {
				t.Errorf("Enabled = %v; want %v", loc.Enabled, tt.want)
			}
			gotRule := loc.DisabledBy
			if tt.want {
				gotRule = loc.EnabledBy
				if loc.DisabledBy != "" {
					t.Errorf("DisabledBy = %q while enabled", loc.DisabledBy)
				}
			} else if loc.EnabledBy != "" {
				t.Errorf("EnabledBy = %q while disabled", loc.EnabledBy)
			}
			if gotRule != rule {
				t.Errorf("decided by %q; want %q", gotRule, rule)
			}
			if len(loc.Rejected) != tt.rejected {
				t.Errorf("Rejected = %v; want %d", loc.Rejected, tt.rejected)
			}
			// Enablement never moves the directory.
			if loc.Source != "default" || loc.Slug != memdir.Sanitize(l.proj) {
				t.Errorf("Source, Slug = %q, %q; want the default", loc.Source, loc.Slug)
			}
		})
	}
}

func TestResolveDirectory(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		files map[string]string
		trust bool
		// want is the directory; "default" for the layout's default, and
		// {root}, {home}, {proj} are replaced.
		want, source, slug string
		rejected           []string // Key/source pairs: "KEY@source"
	}{
		{name: "default", want: "default", source: "default"},
		{
			name: "environment override", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "/srv/mem//"},
			files: map[string]string{"policy": `{"autoMemoryDirectory": "/p/mem"}`},
			want:  "/srv/mem/", source: "env",
		},
		{
			name: "environment override does not expand ~", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "~/mem"},
			want: "default", source: "default", rejected: []string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE@env"},
		},
		{
			name: "invalid environment override falls to settings", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "/a"},
			files: map[string]string{"user": `{"autoMemoryDirectory": "~/notes"}`},
			want:  "{home}/notes/", source: "user", rejected: []string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE@env"},
		},
		{name: "user settings", files: map[string]string{"user": `{"autoMemoryDirectory": "/u/mem"}`}, want: "/u/mem/", source: "user"},
		{
			name: "untrusted local settings are passed over", files: map[string]string{"local": `{"autoMemoryDirectory": "~/.ssh"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "/u/mem/", source: "user", rejected: []string{"autoMemoryDirectory@local"},
		},
		{
			name: "untrusted local and project settings alone give the default", files: map[string]string{"local": `{"autoMemoryDirectory": "/l/mem"}`, "project": `{"autoMemoryDirectory": "/p/mem"}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@local", "autoMemoryDirectory@project"},
		},
		{name: "trusted local settings", trust: true, files: map[string]string{"local": `{"autoMemoryDirectory": "/l/mem"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`}, want: "/l/mem/", source: "local"},
		{name: "flag settings", files: map[string]string{"flag": `{"autoMemoryDirectory": "/f/mem"}`, "local": `{"autoMemoryDirectory": "/l/mem"}`}, want: "/f/mem/", source: "flag"},
		{name: "policy settings", files: map[string]string{"policy": `{"autoMemoryDirectory": "/p/mem"}`, "flag": `{"autoMemoryDirectory": "/f/mem"}`}, want: "/p/mem/", source: "policy"},
		{
			name: "untrusted project is passed over", files: map[string]string{"project": `{"autoMemoryDirectory": "~/.ssh"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "/u/mem/", source: "user", rejected: []string{"autoMemoryDirectory@project"},
		},
		{
			name: "untrusted project alone gives the default", files: map[string]string{"project": `{"autoMemoryDirectory": "/evil"}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@project"},
		},
		{
			name: "trusted project", trust: true, files: map[string]string{"project": `{"autoMemoryDirectory": "/pr/mem"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "/pr/mem/", source: "project",
		},
		{
			name: "trusted project under local", trust: true, files: map[string]string{"project": `{"autoMemoryDirectory": "/pr/mem"}`, "local": `{"autoMemoryDirectory": "/l/mem"}`},
			want: "/l/mem/", source: "local",
		},
		{
			name: "an invalid value decides: the default, not a lower file", files: map[string]string{"flag": `{"autoMemoryDirectory": "~/"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@flag"},
		},
		{
			name: "an invalid trusted value decides too", trust: true, files: map[string]string{"local": `{"autoMemoryDirectory": "~/"}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@local"},
		},
		{
			name: "not a string", files: map[string]string{"policy": `{"autoMemoryDirectory": 7}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@policy"},
		},
		{name: "null is absent", files: map[string]string{"policy": `{"autoMemoryDirectory": null}`, "user": `{"autoMemoryDirectory": "/u/mem"}`}, want: "/u/mem/", source: "user"},
		{
			name: "empty string is rejected", files: map[string]string{"flag": `{"autoMemoryDirectory": ""}`, "user": `{"autoMemoryDirectory": "/u/mem"}`},
			want: "default", source: "default", rejected: []string{"autoMemoryDirectory@flag"},
		},
		{
			name: "settings are read even when memory is off", env: map[string]string{"CLAUDE_CODE_SIMPLE": "1"},
			files: map[string]string{"user": `{"autoMemoryDirectory": "/u/mem"}`}, want: "/u/mem/", source: "user",
		},
		{
			name: "config dir is the base and holds user settings", env: map[string]string{"CLAUDE_CONFIG_DIR": "{root}/cfg"},
			files: map[string]string{"user": `{"autoMemoryDirectory": "/home-settings"}`},
			want:  "{root}/cfg/projects/{slug}/memory/", source: "default",
		},
		{
			name: "user settings under the config dir", env: map[string]string{"CLAUDE_CONFIG_DIR": "{root}/cfg"},
			files: map[string]string{"config": `{"autoMemoryDirectory": "/cfg-settings"}`},
			want:  "/cfg-settings/", source: "config",
		},
		{
			name: "relative config dir is under the working directory", env: map[string]string{"CLAUDE_CONFIG_DIR": "rel/cfg/"},
			want: "{proj}/rel/cfg/projects/{slug}/memory/", source: "default",
		},
		{
			name: "remote memory dir over config dir", env: map[string]string{"CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote", "CLAUDE_CONFIG_DIR": "/cfg"},
			want: "/remote/projects/{slug}/memory/", source: "default",
		},
		{
			name: "project dir name with config dir", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": "my_proj-1"},
			want: "/cfg/projects/my_proj-1/memory/", source: "default", slug: "my_proj-1",
		},
		{
			name: "project dir name of 64", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": strings.Repeat("x", 64)},
			want: "/cfg/projects/" + strings.Repeat("x", 64) + "/memory/", source: "default", slug: strings.Repeat("x", 64),
		},
		{
			name: "project dir name with the remote base", env: map[string]string{"CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote", "CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": "p"},
			want: "/remote/projects/p/memory/", source: "default", slug: "p",
		},
		{
			name: "project dir name of 65", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": strings.Repeat("x", 65)},
			want: "/cfg/projects/{slug}/memory/", source: "default", rejected: []string{"CLAUDE_CODE_PROJECT_DIR_NAME@env"},
		},
		{
			name: "project dir name with a slash", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": "../x"},
			want: "/cfg/projects/{slug}/memory/", source: "default", rejected: []string{"CLAUDE_CODE_PROJECT_DIR_NAME@env"},
		},
		{
			name: "project dir name without config dir", env: map[string]string{"CLAUDE_CODE_PROJECT_DIR_NAME": "p"},
			want: "default", source: "default", rejected: []string{"CLAUDE_CODE_PROJECT_DIR_NAME@env"},
		},
		{
			name: "config dir is NFC-normalised", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/cafe\u0301"},
			want: "/cfg/caf\u00e9/projects/{slug}/memory/", source: "default",
		},
		{
			name: "inline --settings JSON", files: map[string]string{"flag": "INLINE"},
			want: "/inline/mem/", source: "--settings",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newSettingsLayout(t)
			files := withFlagFile(tt.files)
			inline := files["flag"] == "INLINE"
			if inline {
				delete(files, "flag")
			}
			l.write(t, files)
			repl := strings.NewReplacer("{root}", l.root, "{home}", l.home, "{proj}", l.proj, "{slug}", memdir.Sanitize(l.proj))
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = repl.Replace(v)
			}
			o := l.options(env)
			o.TrustProject = tt.trust
			if inline {
				o.SettingsFile = ` {"autoMemoryDirectory": "/inline/mem"}`
			}
			var warnings []string
			o.Warn = func(s string) { warnings = append(warnings, s) }
			loc, err := memdir.Resolve(o)
			if err != nil {
				t.Fatal(err)
			}

			want := repl.Replace(tt.want)
			if tt.want == "default" {
				want = l.defaultDir()
			}
			source := tt.source
			if _, ok := files[source]; ok {
				source = "settings:" + l.file(source)
			} else if source == "--settings" {
				source = "settings:--settings"
			}
			slug := tt.slug
			if slug == "" && source == "default" {
				slug = memdir.Sanitize(l.proj)
			}
			if loc.Dir != want || loc.Source != source || loc.Slug != slug {
				t.Errorf("Dir, Source, Slug = %q, %q, %q; want %q, %q, %q", loc.Dir, loc.Source, loc.Slug, want, source, slug)
			}
			var rejected []string
			for _, r := range loc.Rejected {
				src := r.Source
				for name := range files {
					if src == "settings:"+l.file(name) {
						src = name
					}
				}
				rejected = append(rejected, r.Key+"@"+src)
				if r.Reason == "" {
					t.Errorf("rejected %v without a reason", r)
				}
			}
			if diff := cmp.Diff(tt.rejected, rejected); diff != "" {
				t.Errorf("Rejected (-want +got):\n%s", diff)
			}
			if len(warnings) != len(tt.rejected) {
				t.Errorf("warnings %q; want one per rejected override", warnings)
			}
			if !strings.HasSuffix(loc.Dir, string(filepath.Separator)) || strings.HasSuffix(loc.Dir, string(filepath.Separator)+string(filepath.Separator)) || !filepath.IsAbs(loc.Dir) {
				t.Errorf("Dir %q is not absolute with exactly one trailing separator", loc.Dir)
			}
		})
	}
}

func TestResolveRejectedReasons(t *testing.T) {
	l := newSettingsLayout(t)
	l.write(t, map[string]string{"project": `{"autoMemoryDirectory": "~/.ssh"}`})
	var warnings []string
	o := memdir.Options{Cwd: l.proj, Home: l.home, Getenv: envMap(map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "rel"}), Warn: func(s string) { warnings = append(warnings, s) }}
	loc, err := memdir.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []memdir.Rejected{
		{Source: "env", Key: "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", Value: "rel", Reason: "not an absolute path (~ is not expanded here)"},
		{Source: "settings:" + l.file("project"), Key: "autoMemoryDirectory", Value: "~/.ssh", Reason: "the project is not trusted (memstore: --trust-project)"},
	}
	if diff := cmp.Diff(want, loc.Rejected); diff != "" {
		t.Errorf("Rejected (-want +got):\n%s", diff)
	}
	wantWarnings := []string{
		`CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="rel" ignored: not an absolute path (~ is not expanded here)`,
		`autoMemoryDirectory "~/.ssh" in ` + l.file("project") + ` ignored: the project is not trusted (memstore: --trust-project)`,
	}
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	// Trusted, "~/.ssh" is a valid directory: trust is the only guard.
	o.TrustProject = true
	loc, err = memdir.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(l.home, ".ssh") + "/"; loc.Dir != want {
		t.Errorf("trusted: Dir = %q; want %q", loc.Dir, want)
	}
}

func TestResolveErrors(t *testing.T) {
	l := newSettingsLayout(t)
	writeTestFile(t, filepath.Join(l.root, "bad.json"), `{"autoMemoryDirectory":`)
	writeTestFile(t, filepath.Join(l.root, "file"), "")
	tests := []struct {
		name string
		o    memdir.Options
		want string
	}{
		{"missing --settings file", memdir.Options{Cwd: l.proj, Home: l.home, SettingsFile: filepath.Join(l.root, "nope.json")}, "settings file"},
		{"invalid --settings file", memdir.Options{Cwd: l.proj, Home: l.home, SettingsFile: filepath.Join(l.root, "bad.json")}, "not a JSON object"},
		{"invalid inline --settings", memdir.Options{Cwd: l.proj, Home: l.home, SettingsFile: "{nope"}, "not a JSON object"},
		{"missing working directory", memdir.Options{Cwd: filepath.Join(l.root, "nope"), Home: l.home}, "working directory"},
		{"working directory is a file", memdir.Options{Cwd: filepath.Join(l.root, "file"), Home: l.home}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := memdir.Resolve(tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve = %+v, %v; want an error with %q", loc, err, tt.want)
			}
		})
	}
}

// A settings file that cannot be used is a warning, not an error, and a
// missing policy file is no policy.
func TestResolveBadSettingsWarn(t *testing.T) {
	l := newSettingsLayout(t)
	l.write(t, map[string]string{"user": `[1, 2]`, "local": `{"autoMemoryEnabled": false`})
	var warnings []string
	loc, err := memdir.Resolve(memdir.Options{Cwd: l.proj, Home: l.home, PolicyFile: l.policy, Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !loc.Enabled || loc.Dir != l.defaultDir() {
		t.Errorf("got %+v; want the default, enabled", loc)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], l.file("local")) || !strings.Contains(warnings[1], l.file("user")) {
		t.Errorf("warnings %q; want one for the local and one for the user file", warnings)
	}
}

func TestResolveHome(t *testing.T) {
	l := newSettingsLayout(t)
	// Home is not needed with a configuration directory.
	loc, err := memdir.Resolve(memdir.Options{Cwd: l.proj, Home: "", Getenv: envMap(map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"})})
	if err != nil || loc.Base != "/cfg" {
		t.Errorf("Resolve with CLAUDE_CONFIG_DIR = %+v, %v; want base /cfg", loc, err)
	}
	loc, err = memdir.Resolve(memdir.Options{Cwd: l.proj, Home: l.home})
	if err != nil || loc.Base != filepath.Join(l.home, ".claude") {
		t.Errorf("Resolve = %+v, %v; want base ~/.claude", loc, err)
	}
}

// The working directory is taken with its links resolved and its name
// NFC-normalised, so that a symlink, and a directory named in NFD (as a
// copy from macOS can be), share the memory of the real, NFC-named one.
func TestResolveWorkingDirectory(t *testing.T) {
	l := newSettingsLayout(t)
	nfc := filepath.Join(l.root, "u", "caf\u00e9")
	nfd := filepath.Join(l.root, "u", "cafe\u0301")
	real := filepath.Join(l.root, "real", "proj")
	link := filepath.Join(l.root, "link")
	mkdirs(t, nfc, nfd, real)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, workDir string
	}{
		{"NFC name", nfc, nfc},
		{"NFD name", nfd, nfc},
		{"symbolic link", link, real},
		{"relative path through the link", filepath.Join(link, "..", "link", "."), real},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := memdir.Resolve(memdir.Options{Cwd: tt.cwd, Home: l.home})
			if err != nil {
				t.Fatal(err)
			}
			slug := memdir.Sanitize(tt.workDir)
			want := filepath.Join(l.home, ".claude", "projects", slug, "memory") + "/"
			if loc.WorkDir != tt.workDir || loc.Slug != slug || loc.Dir != want {
				t.Errorf("WorkDir, Slug, Dir = %q, %q, %q; want %q, %q, %q", loc.WorkDir, loc.Slug, loc.Dir, tt.workDir, slug, want)
			}
			if loc.GitRoot != "" || loc.CanonicalRoot != "" {
				t.Errorf("outside git: roots %q, %q", loc.GitRoot, loc.CanonicalRoot)
			}
		})
	}
	if !strings.Contains(memdir.Sanitize(nfc), "-caf-") {
		t.Errorf("the NFC slug %q does not end in caf-", memdir.Sanitize(nfc))
	}
	if !norm.NFC.IsNormalString(nfc) || norm.NFC.IsNormalString(nfd) {
		t.Fatal("the test's directory names are not in the forms intended")
	}
}

func TestLocationPaths(t *testing.T) {
	loc := &memdir.Location{Dir: "/m/projects/x/memory/"}
	if got := loc.Entrypoint(); got != "/m/projects/x/memory/MEMORY.md" {
		t.Errorf("Entrypoint = %q", got)
	}
	if got := loc.TeamDir(); got != "/m/projects/x/memory/team/" {
		t.Errorf("TeamDir = %q", got)
	}
	tests := []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC), "/m/projects/x/memory/logs/2026/01/2026-01-05.md"},
		// 23:30 in New York is the next day in UTC: the log is the local day's.
		{time.Date(2026, 12, 31, 23, 30, 0, 0, time.FixedZone("EST", -5*3600)), "/m/projects/x/memory/logs/2026/12/2026-12-31.md"},
		{time.Date(2027, 1, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), "/m/projects/x/memory/logs/2027/01/2027-01-01.md"},
	}
	for _, tt := range tests {
		if got := loc.LogPath(tt.at); got != tt.want {
			t.Errorf("LogPath(%v) = %q; want %q", tt.at, got, tt.want)
		}
	}
}

func TestAgentDir(t *testing.T) {
	l := newSettingsLayout(t)
	sub := filepath.Join(l.proj, "sub")
	mkdirs(t, sub)
	tests := []struct {
		name  string
		env   map[string]string
		cwd   string
		agent string
		scope memdir.Scope
		want  string
	}{
		{"user", nil, l.proj, "code-reviewer", memdir.ScopeUser, l.home + "/.claude/agent-memory/code-reviewer/"},
		{"user under config dir", map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}, l.proj, "a_b", memdir.ScopeUser, "/cfg/agent-memory/a_b/"},
		{"user under remote dir", map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}, l.proj, "a", memdir.ScopeUser, "/r/agent-memory/a/"},
		{"project", nil, l.proj, "plugin:agent", memdir.ScopeProject, l.proj + "/.claude/agent-memory/plugin-agent/"},
		{"project in a subdirectory", nil, sub, "x", memdir.ScopeProject, sub + "/.claude/agent-memory/x/"},
		{"local", nil, l.proj, "a b/c.d", memdir.ScopeLocal, l.proj + "/.claude/agent-memory-local/a-b-c-d/"},
		{"non-BMP and accents", nil, l.proj, "😀é", memdir.ScopeLocal, l.proj + "/.claude/agent-memory-local/---/"},
		{"dot dot", nil, l.proj, "..", memdir.ScopeUser, l.home + "/.claude/agent-memory/--/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := memdir.AgentDir(memdir.Options{Cwd: tt.cwd, Home: l.home, Getenv: envMap(tt.env)}, tt.agent, tt.scope)
			if err != nil || got != tt.want {
				t.Errorf("AgentDir(%q, %s) = %q, %v; want %q", tt.agent, tt.scope, got, err, tt.want)
			}
		})
	}
	for _, bad := range []struct {
		agent string
		scope memdir.Scope
		want  string
	}{
		{"", memdir.ScopeUser, "no agent name"},
		{"a", "team", "unknown scope"},
		{"a", "", "unknown scope"},
	} {
		if got, err := memdir.AgentDir(memdir.Options{Cwd: l.proj, Home: l.home}, bad.agent, bad.scope); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AgentDir(%q, %q) = %q, %v; want an error with %q", bad.agent, bad.scope, got, err, bad.want)
		}
	}
}

// TestResolveRepositoryCannotMoveMemory: a checkout is the repository's,
// and so is every settings file inside it. A repository that commits
// .claude/settings.local.json or .claude/settings.json pointing memory at
// ~/.ssh moves nothing without TrustProject: the directory is the
// default (or the user's own choice), and each ignored file is reported
// with its reason. Settings files in directories above the working one,
// inside the repository, are not read at all.
func TestResolveRepositoryCannotMoveMemory(t *testing.T) {
	root := realTempDir(t)
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "pkg", "deep")
	mkdirs(t, filepath.Join(home, ".ssh"), sub)
	git(t, gitEnv(t), repo, "init", "-q")
	hostile := map[string]string{
		filepath.Join(repo, ".claude", "settings.local.json"):        `{"autoMemoryDirectory": "~/.ssh"}`,
		filepath.Join(repo, ".claude", "settings.json"):              `{"autoMemoryDirectory": "~/.ssh/"}`,
		filepath.Join(repo, "pkg", ".claude", "settings.local.json"): `{"autoMemoryDirectory": "~/.ssh"}`,
		filepath.Join(repo, "pkg", ".claude", "settings.json"):       `{"autoMemoryDirectory": "~/.ssh"}`,
		filepath.Join(sub, ".claude", "settings.local.json"):         `{"autoMemoryDirectory": "~/.ssh"}`,
		filepath.Join(sub, ".claude", "settings.json"):               `{"autoMemoryDirectory": "~/.ssh"}`,
	}
	for path, content := range hostile {
		writeTestFile(t, path, content)
	}
	def := filepath.Join(home, ".claude", "projects", memdir.Sanitize(repo), "memory") + "/"
	untrusted := "the project is not trusted (memstore: --trust-project)"
	for _, tt := range []struct {
		name   string
		cwd    string
		user   string // the user's own settings file, "" for none
		trust  bool
		want   string
		source string
	}{
		{name: "at the root", cwd: repo, want: def, source: "default"},
		{name: "in a subdirectory", cwd: sub, want: def, source: "default"},
		{name: "the user's own choice stands", cwd: repo, user: `{"autoMemoryDirectory": "~/notes"}`, want: filepath.Join(home, "notes") + "/", source: "settings:" + filepath.Join(home, ".claude", "settings.json")},
		{name: "trusted", cwd: repo, trust: true, want: filepath.Join(home, ".ssh") + "/", source: "settings:" + filepath.Join(repo, ".claude", "settings.local.json")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			userFile := filepath.Join(home, ".claude", "settings.json")
			os.Remove(userFile)
			if tt.user != "" {
				writeTestFile(t, userFile, tt.user)
			}
			var warnings []string
			loc, err := memdir.Resolve(memdir.Options{Cwd: tt.cwd, Home: home, TrustProject: tt.trust, Warn: func(s string) { warnings = append(warnings, s) }})
			if err != nil {
				t.Fatal(err)
			}
			if loc.Dir != tt.want || loc.Source != tt.source {
				t.Errorf("Dir, Source = %q, %q; want %q, %q", loc.Dir, loc.Source, tt.want, tt.source)
			}
			if tt.trust {
				return
			}
			// Every file of the working directory that tried is reported,
			// with the reason; none elsewhere is read.
			var want []memdir.Rejected
			for _, name := range []string{"settings.local.json", "settings.json"} {
				file := filepath.Join(tt.cwd, ".claude", name)
				want = append(want, memdir.Rejected{Source: "settings:" + file, Key: "autoMemoryDirectory", Value: jsonString(t, hostile[file]), Reason: untrusted})
			}
			if diff := cmp.Diff(want, loc.Rejected); diff != "" {
				t.Errorf("Rejected (-want +got):\n%s", diff)
			}
			if len(warnings) != len(want) {
				t.Errorf("warnings %q; want one per ignored file", warnings)
			}
		})
	}
}

// jsonString is the autoMemoryDirectory of a settings file's text.
func jsonString(tb testing.TB, settings string) string {
	tb.Helper()
	var v struct {
		Dir string `json:"autoMemoryDirectory"`
	}
	if err := json.Unmarshal([]byte(settings), &v); err != nil {
		tb.Fatal(err)
	}
	return v.Dir
}

// TestResolveHomeAsWorkingDirectory: in the home directory, the project's
// .claude/settings.json is the user's own settings file, and counts as
// such, trusted or not.
func TestResolveHomeAsWorkingDirectory(t *testing.T) {
	home := realTempDir(t)
	writeTestFile(t, filepath.Join(home, ".claude", "settings.json"), `{"autoMemoryDirectory": "~/notes"}`)
	loc, err := memdir.Resolve(memdir.Options{Cwd: home, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "notes") + "/"; loc.Dir != want || len(loc.Rejected) != 0 {
		t.Errorf("Dir = %q, Rejected = %v; want %q, none", loc.Dir, loc.Rejected, want)
	}
}

// TestResolveHomeLocalSettingsAreTheUsers: in the home directory, the
// project's .claude/settings.local.json is in the user's own settings
// directory, not a repository's: it chooses the directory without
// TrustProject, as ~/.claude/settings.json does there.
func TestResolveHomeLocalSettingsAreTheUsers(t *testing.T) {
	home := realTempDir(t)
	local := filepath.Join(home, ".claude", "settings.local.json")
	writeTestFile(t, local, `{"autoMemoryDirectory": "~/notes"}`)
	loc, err := memdir.Resolve(memdir.Options{Cwd: home, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "notes") + "/"; loc.Dir != want || loc.Source != "settings:"+local || len(loc.Rejected) != 0 {
		t.Errorf("Dir, Source = %q, %q, Rejected = %v; want %q, %q, none", loc.Dir, loc.Source, loc.Rejected, want, "settings:"+local)
	}
}

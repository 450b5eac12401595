package memdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore/memdir"
)

// FuzzParseFrontmatter: any text parses or fails with an error, never a
// panic, and the body returned is always the end of the text.
func FuzzParseFrontmatter(f *testing.F) {
	f.Add("---\nname: Deploy\ndescription: how we deploy\nmetadata:\n  type: project\n  modified: 2026-01-02T03:04:05Z\n---\nbody\n")
	f.Add("---\nname: \"quoted \\u00e9\"\ndescription: |\n  block\n  text\ntags:\n  - a\n---\n")
	f.Add("no frontmatter\n")
	f.Fuzz(func(t *testing.T, text string) {
		fm, body, err := memdir.ParseFrontmatter(text)
		if !strings.HasSuffix(text, body) {
			t.Fatalf("body %q is not the end of %q", body, text)
		}
		if err == nil && (fm.Fields == nil || fm.Name != fm.Fields["name"]) {
			t.Fatalf("parsed %q without its fields: %+v", text, fm)
		}
	})
}

// FuzzValidateOverride: an override is refused with a reason or accepted
// as an absolute, clean, NFC directory ending with one separator, never
// a root.
func FuzzValidateOverride(f *testing.F) {
	f.Add("/srv/memory", false, "/home/u")
	f.Add("~/notes", true, "/home/u")
	f.Add("~/../..", true, "/home/u")
	f.Add("//server/share", false, "")
	f.Fuzz(func(t *testing.T, value string, fromSettings bool, home string) {
		dir, err := memdir.ValidateOverride(value, fromSettings, home)
		if err != nil {
			if err.Error() == "" || dir != "" {
				t.Fatalf("ValidateOverride(%q) = %q, %q", value, dir, err)
			}
			return
		}
		checkDir(t, value, dir)
	})
}

// FuzzResolveSettings: whatever the settings files and the environment
// override hold, Resolve never panics; it either fails or finds a valid
// directory, with every ignored override listed with a reason; and
// without trust, no settings file of the working tree chooses it.
func FuzzResolveSettings(f *testing.F) {
	f.Add(`{"autoMemoryDirectory": "~/notes", "autoMemoryEnabled": true}`, `{"autoMemoryDirectory": "/srv/mem"}`, "", true)
	f.Add(`{"autoMemoryDirectory": 7, "autoMemoryEnabled": "yes"}`, `not json`, "~/mem", false)
	f.Add(`{"autoMemoryDirectory": null}`, `[]`, "/", true)
	f.Add(`{}`, `{"autoMemoryDirectory": "~/.ssh"}`, "", false)
	f.Add(`{"autoMemoryDirectory": "~/.ssh/"}`, `{"autoMemoryDirectory": "~/.ssh"}`, "", false)
	f.Add(`{"autoMemoryDirectory": "~/.ssh"}`, `{"autoMemoryEnabled": false}`, "rel", false)
	f.Fuzz(func(t *testing.T, project, local, envOverride string, trust bool) {
		if strings.ContainsRune(envOverride, 0) {
			t.Skip("an environment variable cannot hold NUL")
		}
		work := t.TempDir()
		home := filepath.Join(work, "home")
		claude := filepath.Join(work, "proj", ".claude")
		if err := os.MkdirAll(claude, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"settings.json": project, "settings.local.json": local} {
			if err := os.WriteFile(filepath.Join(claude, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env := map[string]string{memdir.EnvPathOverride: envOverride, "CLAUDE_CONFIG_DIR": filepath.Join(work, "cfg")}
		loc, err := memdir.Resolve(memdir.Options{
			Cwd: filepath.Join(work, "proj"), Home: home, TrustProject: trust,
			Getenv: func(k string) string { return env[k] },
		})
		if err != nil {
			return
		}
		checkDir(t, project+" | "+local+" | "+envOverride, loc.Dir)
		if !trust && strings.HasPrefix(loc.Source, "settings:"+claude+string(filepath.Separator)) {
			t.Fatalf("untrusted, %s chose the directory %q", loc.Source, loc.Dir)
		}
		if loc.Enabled == (loc.DisabledBy != "") || loc.Enabled != (loc.EnabledBy != "") {
			t.Fatalf("enabled %v, by %q, disabled by %q", loc.Enabled, loc.EnabledBy, loc.DisabledBy)
		}
		for _, r := range loc.Rejected {
			if r.Reason == "" || r.Key == "" {
				t.Fatalf("an override rejected without a reason: %+v", r)
			}
		}
	})
}

// checkDir fails t unless dir, from input, is a memory directory as
// Location.Dir promises: absolute, clean, NFC, without NUL, ending with
// exactly one separator, and not a root.
func checkDir(t *testing.T, input, dir string) {
	t.Helper()
	sep := string(filepath.Separator)
	trimmed := strings.TrimSuffix(dir, sep)
	switch {
	case !strings.HasSuffix(dir, sep) || strings.HasSuffix(trimmed, sep):
		t.Fatalf("%q gave %q: not ending with one separator", input, dir)
	case !filepath.IsAbs(trimmed) || filepath.Clean(trimmed) != trimmed:
		t.Fatalf("%q gave %q: not absolute and clean", input, dir)
	case !norm.NFC.IsNormalString(dir) || strings.ContainsRune(dir, 0):
		t.Fatalf("%q gave %q: not NFC, or with NUL", input, dir)
	case filepath.Dir(trimmed) == trimmed:
		// Not "near the root" as well: that rule counts the value before
		// NFC, as Claude Code does, so "/A" and a combining macron give
		// "/Ā/".
		t.Fatalf("%q gave %q: a root", input, dir)
	}
}

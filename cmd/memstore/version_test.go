package main

import (
	"encoding/json"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	mod := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/memstore/memstore", Version: v}, Settings: settings}
	}
	clean := vcs("vcs.revision", "9b9ad7846d68aa11bb22cc33dd44ee55ff667788", "vcs.time", "2026-11-24T13:14:10Z", "vcs.modified", "false")
	dirty := vcs("vcs.revision", "9b9ad7846d68aa11bb22cc33dd44ee55ff667788", "vcs.time", "2026-11-24T13:14:10Z", "vcs.modified", "true")
	for _, tc := range []struct {
		name  string
		stamp stamp
		bi    *debug.BuildInfo
		want  string
	}{
		{"no build info", stamp{}, nil, "memstore 0.3.0 (commit unknown)"},
		{"built with -buildvcs=false", stamp{}, mod("(devel)"), "memstore 0.3.0 (commit unknown)"},
		{"go build in a clone", stamp{}, mod("(devel)", clean...), "memstore 0.3.0 (commit 9b9ad78, built 2026-11-24T13:14:10Z)"},
		// Go 1.24 and later name a clone's build with a pseudo-version.
		{"go build in a clone, pseudo-version", stamp{}, mod("v0.0.0-20261124131410-9b9ad7846d68", clean...),
			"memstore 0.3.0 (commit 9b9ad78, built 2026-11-24T13:14:10Z)"},
		{"go build in a changed clone", stamp{}, mod("v0.0.0-20261124131410-9b9ad7846d68+dirty", dirty...),
			"memstore 0.3.0 (commit 9b9ad78+dirty, built 2026-11-24T13:14:10Z)"},
		{"go build at a tag", stamp{}, mod("v0.3.0", clean...), "memstore 0.3.0 (commit 9b9ad78, built 2026-11-24T13:14:10Z)"},
		{"go build at a tag, changed", stamp{}, mod("v0.3.0+dirty", dirty...), "memstore 0.3.0 (commit 9b9ad78+dirty, built 2026-11-24T13:14:10Z)"},
		{"go install of a tag", stamp{}, mod("v0.3.0"), "memstore 0.3.0 (go install)"},
		{"go install of a pre-release tag", stamp{}, mod("v0.4.0-rc.1"), "memstore 0.4.0-rc.1 (go install)"},
		{"go install of a branch", stamp{}, mod("v0.3.1-0.20261125032127-ab7e2f2cd1aa"),
			"memstore 0.3.0 (commit ab7e2f2, built 2026-11-25T03:21:27Z)"},
		{"go install of a commit before any tag", stamp{}, mod("v0.0.0-20261125032127-ab7e2f2cd1aa"),
			"memstore 0.3.0 (commit ab7e2f2, built 2026-11-25T03:21:27Z)"},
		{"go install of a commit after a pre-release", stamp{}, mod("v0.3.0-rc.1.0.20261125032127-ab7e2f2cd1aa"),
			"memstore 0.3.0 (commit ab7e2f2, built 2026-11-25T03:21:27Z)"},
		{"release build", stamp{"v0.3.0", "ab7e2f2cd1aa00", "2026-11-25T03:21:27Z", false}, mod("(devel)"),
			"memstore 0.3.0 (commit ab7e2f2, built 2026-11-25T03:21:27Z)"},
		{"release build of a pre-release", stamp{"v0.3.0-rc.1", "ab7e2f2cd1aa00", "2026-11-25T03:21:27Z", false}, mod("(devel)"),
			"memstore 0.3.0-rc.1 (commit ab7e2f2, built 2026-11-25T03:21:27Z)"},
		{"build between releases, stamped", stamp{"", "ab7e2f2cd1aa00", "2026-11-25T03:21:27Z", true}, mod("(devel)", clean...),
			"memstore 0.3.0 (commit ab7e2f2+dirty, built 2026-11-25T03:21:27Z)"},
	} {
		d := describeBuild(tc.stamp, "0.3.0\n", tc.bi)
		if got := d.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if tc.bi != nil && strings.Contains(d.String(), tc.bi.Main.Version) && pseudoVersion.MatchString(tc.bi.Main.Version) {
			t.Errorf("%s: %q shows the pseudo-version", tc.name, d)
		}
	}
}

// TestVersionCommand checks what memstore version prints, in text and
// JSON, and that the VERSION file holds a plain version.
func TestVersionCommand(t *testing.T) {
	if !regexpVersion.MatchString(strings.TrimSpace(release)) {
		t.Fatalf("VERSION holds %q; want a semantic version without a v, such as 0.3.0", release)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		code, stdout, stderr := run(t, "", args...)
		if code != 0 || stdout != build.String()+"\n" || stderr != "" || !strings.HasPrefix(stdout, "memstore "+strings.TrimSpace(release)+" (") {
			t.Errorf("memstore %s: exit %d, %q, %q", args[0], code, stdout, stderr)
		}
	}
	code, stdout, _ := run(t, "", "version", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || got["version"] != build.Version || got["go"] == nil || got["os"] == nil || got["arch"] == nil {
		t.Errorf("memstore version --json: exit %d, %s", code, stdout)
	}
}

var regexpVersion = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

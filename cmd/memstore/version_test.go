package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, nextRelease + "-devel"},
		{"installed as a module", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124131410-9b9ad7846d68+dirty"}},
			"v0.0.0-20261124131410-9b9ad7846d68+dirty"},
		{"built without VCS stamping", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, nextRelease + "-devel"},
		{"a commit", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "9b9ad7846d68aa11bb22", "vcs.time", "2026-11-24T13:14:10Z", "vcs.modified", "false")},
			nextRelease + "-devel+9b9ad7846d68 (2026-11-24T13:14:10Z)"},
		{"a changed work tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "9b9ad78", "vcs.modified", "true")},
			nextRelease + "-devel+9b9ad78+dirty"},
	} {
		if got := buildVersion(tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

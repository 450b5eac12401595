package main

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// release is the version of the code in this tree, kept in the file
// VERSION beside this one: the one place a release's number is written.
// It is raised when a release is tagged (see docs/releasing.md).
//
//go:embed VERSION
var release string

// What scripts/dist.sh stamps with -ldflags "-X main.tag=v0.3.0 ...": the
// git tag at the commit built (if any), the commit, its time, and
// "true" when the work tree had changes. The Go toolchain records the
// last three itself in a clone's go build and go install, but not for
// go run, in a git worktree nor with -buildvcs=false; empty when not
// stamped.
var tag, commit, commitTime, modified string

// build describes this binary; Version is its version alone, as the MCP
// server and the agent tools report it.
var (
	build   = describeBuild(stamp{tag, commit, commitTime, modified == "true"}, release, readBuildInfo())
	Version = build.Version
)

// stamp is what a release build stamps.
type stamp struct {
	tag, commit, built string
	modified           bool
}

func readBuildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return bi
}

// buildDescription is what `memstore version` prints.
type buildDescription struct {
	Version  string `json:"version"`            // 0.3.0, without a "v"
	Commit   string `json:"commit,omitempty"`   // the git commit, in full where known
	Built    string `json:"built,omitempty"`    // the commit's time, RFC 3339 in UTC
	Modified bool   `json:"modified,omitempty"` // the work tree had changes
	// Module is set for a `go install` of a tagged module: the toolchain
	// records neither commit nor time then, the tag names both.
	Module bool `json:"module,omitempty"`
}

// pseudoVersion matches the end of a Go pseudo-version
// (v0.0.0-20261125032127-ab7e2f2cd1aa, v0.3.1-0.20261125032127-ab7e2f2cd1aa):
// the commit's time and its first twelve hex digits.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+[0-9A-Za-z.+-]*)?$`)

// describeBuild says which version a binary is, the same way however it
// was built. The version is the release build's tag if one was stamped,
// else the module's version if the toolchain recorded a tag (go install
// ...@v0.3.0, or go build at a tagged commit), else the VERSION file's;
// never a Go pseudo-version. The commit and its time come from the
// stamp, else the build info (go build in a clone), else a
// pseudo-version (go install ...@main); "built" is the commit's time, so
// that a build is reproducible.
func describeBuild(st stamp, release string, bi *debug.BuildInfo) buildDescription {
	d := buildDescription{Version: strings.TrimSpace(release)}
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				d.Commit = s.Value
			case "vcs.time":
				d.Built = s.Value
			case "vcs.modified":
				d.Modified = s.Value == "true"
			}
		}
		v := bi.Main.Version
		if m := pseudoVersion.FindStringSubmatch(v); m != nil {
			if d.Commit == "" {
				d.Commit = m[2]
				if t, err := time.Parse("20060102150405", m[1]); err == nil {
					d.Built = t.UTC().Format(time.RFC3339)
				}
			}
		} else if strings.HasPrefix(v, "v") {
			// A tag, with "+dirty" when go build ran in a changed work tree.
			d.Version, _, _ = strings.Cut(v[1:], "+")
			d.Module = d.Commit == ""
		}
	}
	if st.commit != "" {
		d.Commit, d.Built, d.Modified, d.Module = st.commit, st.built, st.modified, false
	}
	if st.tag != "" {
		d.Version = strings.TrimPrefix(st.tag, "v")
	}
	return d
}

// String is the line `memstore --version` prints:
// "memstore 0.3.0 (commit abc1234, built 2026-11-24T13:14:10Z)".
func (d buildDescription) String() string {
	switch {
	case d.Commit != "":
		c := d.Commit
		if len(c) > 7 {
			c = c[:7]
		}
		if d.Modified {
			c += "+dirty"
		}
		if d.Built == "" {
			return fmt.Sprintf("memstore %s (commit %s)", d.Version, c)
		}
		return fmt.Sprintf("memstore %s (commit %s, built %s)", d.Version, c, d.Built)
	case d.Module:
		return fmt.Sprintf("memstore %s (go install)", d.Version)
	}
	return fmt.Sprintf("memstore %s (commit unknown)", d.Version)
}

const versionHelp = `Usage: memstore version [--json]
       memstore --version | -v

Prints memstore's version, the commit it was built from ("+dirty" when
its work tree had changes) and that commit's time:

  memstore 0.3.0 (commit abc1234, built 2026-11-24T13:14:10Z)

A go install of a tagged release prints "(go install)" instead: the Go
toolchain records no commit for it, the tag names it. --json adds the
Go version, operating system and architecture.
`

func runVersion(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "version", versionHelp)
	asJSON := fs.Bool("json", false, "print JSON: version, commit, built, modified, module, go, os and arch")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore version: unexpected argument %q", fs.Arg(0))
	}
	if *asJSON {
		return printJSON(e.stdout, struct {
			buildDescription
			Go   string `json:"go"`
			OS   string `json:"os"`
			Arch string `json:"arch"`
		}{build, runtime.Version(), runtime.GOOS, runtime.GOARCH})
	}
	fmt.Fprintln(e.stdout, build)
	return nil
}

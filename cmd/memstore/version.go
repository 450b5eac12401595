package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is memstore's version. A release sets it at build time with
// -ldflags "-X main.Version=v1.2.3"; otherwise it is made from
// nextRelease and what the Go toolchain recorded in the binary (see
// buildVersion).
var Version = ""

// nextRelease is the release the code on this branch is heading for;
// builds between releases are named after it, as semantic versioning's
// pre-releases are ("v0.2.0-devel").
const nextRelease = "v0.2.0"

func init() {
	if Version == "" {
		bi, _ := debug.ReadBuildInfo()
		Version = buildVersion(bi)
	}
}

// buildVersion names a build by what the toolchain recorded: the module's
// version when it was installed as a module (go install ...@v1.2.3),
// else nextRelease-devel with the commit it was built from, its time and
// "+dirty" when the work tree had changes (go build in a clone, unless
// -buildvcs=false), else nextRelease-devel alone.
func buildVersion(bi *debug.BuildInfo) string {
	const devel = nextRelease + "-devel"
	if bi == nil {
		return devel
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return devel
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if at != "" {
		return fmt.Sprintf("%s+%s%s (%s)", devel, rev, dirty, at)
	}
	return devel + "+" + rev + dirty
}

const versionHelp = `Usage: memstore version [--json]
       memstore --version | -v

Prints memstore's version: a release's tag, or the commit a build was
made from (with "+dirty" when its work tree had changes).
`

func runVersion(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "version", versionHelp)
	asJSON := fs.Bool("json", false, "print JSON: version, go, os and arch")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore version: unexpected argument %q", fs.Arg(0))
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]string{
			"version": Version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH,
		})
	}
	fmt.Fprintf(e.stdout, "memstore %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPack packs a Linux and a Windows staging directory twice: each
// archive holds the directory as its top level, in name order, with
// fixed owners, modes and times, the two runs give the same bytes, and
// SHA256SUMS names each archive with its digest.
func TestPack(t *testing.T) {
	stage := t.TempDir()
	mtime := time.Date(2026, 11, 24, 13, 14, 10, 0, time.UTC)
	for _, f := range []struct {
		name string
		mode fs.FileMode
	}{
		{"memstore_1.2.3_linux_arm64/memstore", 0o700}, {"memstore_1.2.3_linux_arm64/README.md", 0o600},
		{"memstore_1.2.3_windows_amd64/memstore.exe", 0o600}, {"memstore_1.2.3_windows_amd64/LICENSE", 0o664},
	} {
		p := filepath.Join(stage, filepath.FromSlash(f.name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("content of "+f.name), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{filepath.Join(stage, "memstore_1.2.3_linux_arm64"), filepath.Join(stage, "memstore_1.2.3_windows_amd64")}
	var runs [2]string
	for i := range runs {
		runs[i] = t.TempDir()
		written, err := pack(runs[i], mtime, dirs)
		if want := []string{"memstore_1.2.3_linux_arm64.tar.gz", "memstore_1.2.3_windows_amd64.zip", "SHA256SUMS"}; err != nil || !slices.Equal(written, want) {
			t.Fatalf("pack wrote %v, %v; want %v", written, err, want)
		}
	}
	for _, name := range []string{"memstore_1.2.3_linux_arm64.tar.gz", "memstore_1.2.3_windows_amd64.zip", "SHA256SUMS"} {
		a, errA := os.ReadFile(filepath.Join(runs[0], name))
		b, errB := os.ReadFile(filepath.Join(runs[1], name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%v, %v)", name, errA, errB)
		}
	}
	verifySums(t, runs[0], []string{"memstore_1.2.3_linux_arm64.tar.gz", "memstore_1.2.3_windows_amd64.zip"})
	want := []string{
		"memstore_1.2.3_linux_arm64/ drwxr-xr-x",
		"memstore_1.2.3_linux_arm64/README.md -rw-r--r--",
		"memstore_1.2.3_linux_arm64/memstore -rwxr-xr-x",
	}
	if got := tarEntries(t, filepath.Join(runs[0], "memstore_1.2.3_linux_arm64.tar.gz"), mtime, ""); !slices.Equal(got, want) {
		t.Errorf("the tar.gz holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	want = []string{
		"memstore_1.2.3_windows_amd64/ drwxr-xr-x",
		"memstore_1.2.3_windows_amd64/LICENSE -rw-r--r--",
		"memstore_1.2.3_windows_amd64/memstore.exe -rwxr-xr-x",
	}
	if got := zipEntries(t, filepath.Join(runs[0], "memstore_1.2.3_windows_amd64.zip"), mtime); !slices.Equal(got, want) {
		t.Errorf("the zip holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDistScript makes a release as a maintainer would, from a tagged git
// checkout of this tree (made in a temporary directory), for this
// machine only: a go build in the checkout and the release binary print
// the same version line, from the VERSION file or the tag, never a Go
// pseudo-version; a tag that VERSION does not match is refused; the
// archive holds the binary, README and LICENSE, and SHA256SUMS verifies.
func TestDistScript(t *testing.T) {
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("scripts/dist.sh needs %s: %v", tool, err)
		}
	}
	src := checkout(t)
	version := strings.TrimSpace(readFile(t, filepath.Join(src, "cmd/memstore/VERSION")))
	head := strings.TrimSpace(git(t, src, "rev-parse", "HEAD"))
	const built = "2026-11-24T13:14:10Z" // the commit's time, see checkout
	line := func(v string) string { return fmt.Sprintf("memstore %s (commit %s, built %s)\n", v, head[:7], built) }

	// go build in a clone: the VERSION file's version and the commit, not
	// the pseudo-version Go names the module with.
	bin := filepath.Join(t.TempDir(), "memstore")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", bin, "./cmd/memstore")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if got := runVersion(t, bin); got != line(version) {
		t.Errorf("go build in a clone: memstore --version printed %q; want %q", got, line(version))
	}

	// A tag VERSION does not match: refused before anything is built.
	out := filepath.Join(t.TempDir(), "dist")
	git(t, src, "tag", "v99.0.0")
	stdout, stderr, err := dist(src, out)
	if err == nil || !strings.Contains(stderr, "HEAD is tagged v99.0.0 but cmd/memstore/VERSION says "+version) {
		t.Errorf("dist.sh at a tag VERSION does not match: %v\n%s\n%s", err, stdout, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("dist.sh refused the tag but left %v in --out", ents)
	}
	git(t, src, "tag", "-d", "v99.0.0")

	// A pre-release tag of VERSION: stamped into the binary and the names.
	tag := "v" + version + "-rc.1"
	git(t, src, "tag", tag)
	if stdout, stderr, err := dist(src, out); err != nil {
		t.Fatalf("dist.sh: %v\n%s\n%s", err, stdout, stderr)
	}
	base := fmt.Sprintf("memstore_%s_%s_%s", tag[1:], runtime.GOOS, runtime.GOARCH)
	exe, archive := "memstore", base+".tar.gz"
	if runtime.GOOS == "windows" {
		exe, archive = "memstore.exe", base+".zip"
	}
	var names []string
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"SHA256SUMS", archive}; !slices.Equal(names, want) {
		t.Fatalf("dist.sh wrote %v; want %v", names, want)
	}
	verifySums(t, out, []string{archive})
	mtime, _ := time.Parse(time.RFC3339, built)
	extracted := t.TempDir()
	var got []string
	if runtime.GOOS == "windows" {
		got = zipEntries(t, filepath.Join(out, archive), mtime)
	} else {
		got = tarEntries(t, filepath.Join(out, archive), mtime, extracted)
	}
	want := []string{base + "/ drwxr-xr-x", base + "/LICENSE -rw-r--r--", base + "/README.md -rw-r--r--", base + "/" + exe + " -rwxr-xr-x"}
	if !slices.Equal(got, want) {
		t.Errorf("%s holds\n%s\nwant\n%s", archive, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if runtime.GOOS != "windows" {
		if got := runVersion(t, filepath.Join(extracted, base, exe)); got != line(tag[1:]) {
			t.Errorf("the release binary's --version printed %q; want %q", got, line(tag[1:]))
		}
		info, err := exec.Command("go", "version", "-m", filepath.Join(extracted, base, exe)).Output()
		if err != nil || !strings.Contains(string(info), "CGO_ENABLED=0") || !strings.Contains(string(info), "-trimpath=true") {
			t.Errorf("the release binary was not built CGO-free with -trimpath: %v\n%s", err, info)
		}
	}
}

// TestGoInstallTag installs memstore as a Go user would, with go install
// of a tagged module version, from a module proxy in a directory serving
// a copy of this tree at that tag (the dependencies come from the local
// module cache, into a temporary one): Go records no commit for a
// downloaded module, and memstore --version names the tag's version,
// never a pseudo-version.
func TestGoInstallTag(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("the test copies the tree with git: %v", err)
	}
	src := checkout(t)
	version := "v" + strings.TrimSpace(readFile(t, filepath.Join(src, "cmd/memstore/VERSION"))) + "-rc.1"
	proxy := t.TempDir()
	at := filepath.Join(proxy, "github.com/memstore/memstore/@v")
	os.MkdirAll(at, 0o755)
	for name, content := range map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-11-24T13:14:10Z"}`,
		version + ".mod":  readFile(t, filepath.Join(src, "go.mod")),
	} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	moduleZip(t, src, "github.com/memstore/memstore@"+version, filepath.Join(at, version+".zip"))

	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("go", "install", "-trimpath", "github.com/memstore/memstore/cmd/memstore@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(tmp, "bin"), "GOMODCACHE="+filepath.Join(tmp, "mod"),
		"GOFLAGS=-modcacherw", "GOSUMDB=off", "CGO_ENABLED=0",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(modcache)), "cache/download")))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	want := "memstore " + version[1:] + " (go install)\n"
	if got := runVersion(t, filepath.Join(tmp, "bin", "memstore")); got != want {
		t.Errorf("go install ...@%s: memstore --version printed %q; want %q", version, got, want)
	}
}

// moduleZip writes the module zip of the files in dir (but .git) to
// path, each under prefix, as a module proxy serves it.
func moduleZip(t *testing.T, dir, prefix, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if err == nil && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(prefix + "/" + filepath.ToSlash(rel))
		if err == nil {
			return copyFile(p, func(int64) (io.Writer, error) { return w, nil })
		}
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkout copies this tree's files (tracked and new, as git sees them,
// with their changes) to a new git repository with one commit dated
// 2026-11-24T13:14:10Z, and returns its directory.
func checkout(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	files := strings.Split(git(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00")
	for _, f := range files {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		fi, serr := os.Lstat(filepath.Join(root, f))
		if err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		p := filepath.Join(src, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git(t, src, "init", "-q")
	git(t, src, "add", "-A")
	git(t, src, "-c", "user.name=Release", "-c", "user.email=release@example.com", "commit", "-q", "-m", "release")
	return src
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-24T13:14:10Z", "GIT_COMMITTER_DATE=2026-11-24T13:14:10Z",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// dist runs scripts/dist.sh in src for this machine into out.
func dist(src, out string) (stdout, stderr string, err error) {
	cmd := exec.Command("bash", "scripts/dist.sh", "--out", out, "host")
	cmd.Dir = src
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func runVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	return string(out)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// verifySums checks that dir/SHA256SUMS lists exactly names, each with
// its file's digest, as sha256sum -c would.
func verifySums(t *testing.T, dir string, names []string) {
	t.Helper()
	var want strings.Builder
	for _, name := range names {
		sum := sha256.Sum256([]byte(readFile(t, filepath.Join(dir, name))))
		fmt.Fprintf(&want, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	if got := readFile(t, filepath.Join(dir, "SHA256SUMS")); got != want.String() {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", got, want.String())
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum --check: %v\n%s", err, out)
		}
	}
}

// tarEntries lists a tar.gz's entries as "name mode", checking each is
// owned by root and dated mtime, and extracts its files under dir unless
// dir is "".
func tarEntries(t *testing.T, path string, mtime time.Time, dir string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("%s: gzip header holds a time or name: %v %q", path, gz.ModTime, gz.Name)
	}
	var got []string
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: %s is owned by %d/%d (%q/%q), dated %v; want root, %v", path, h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, mtime)
		}
		got = append(got, h.Name+" "+h.FileInfo().Mode().String())
		if dir != "" && h.Typeflag == tar.TypeReg {
			p := filepath.Join(dir, filepath.FromSlash(h.Name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			b, err := io.ReadAll(tr)
			if err == nil {
				err = os.WriteFile(p, b, h.FileInfo().Mode().Perm())
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return got
}

// zipEntries lists a zip's entries as "name mode", checking each is
// dated mtime.
func zipEntries(t *testing.T, path string, mtime time.Time) []string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	for _, f := range zr.File {
		if !f.Modified.Equal(mtime) {
			t.Errorf("%s: %s dated %v; want %v", path, f.Name, f.Modified, mtime)
		}
		got = append(got, f.Name+" "+f.Mode().String())
	}
	return got
}

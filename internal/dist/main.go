// Command dist packs the release builds that scripts/dist.sh staged: one
// archive per target directory (tar.gz, or zip for Windows, with the
// directory itself as the archive's top level) and SHA256SUMS, in the
// format sha256sum -c and shasum -a 256 -c read. Archives are
// reproducible: entries in name order, owned by root, dated -mtime, with
// fixed modes, and no timestamp in the gzip header. It is in Go, not tar
// and zip, so that a release builds the same on Linux, macOS and Windows.
//
//	go run ./internal/dist -out DIR -mtime UNIX STAGED_DIR...
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "dist", "directory to write the archives and SHA256SUMS to")
	mtime := flag.Int64("mtime", 0, "time of every archive entry, in seconds since 1970 (the commit's time)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/dist -out DIR -mtime UNIX STAGED_DIR...")
		os.Exit(2)
	}
	written, err := pack(*out, time.Unix(*mtime, 0).UTC(), flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	for _, name := range written {
		fmt.Println(filepath.Join(*out, name))
	}
}

// pack archives each staged directory into out and writes out/SHA256SUMS
// for the archives it made; it returns the names of the files written.
func pack(out string, mtime time.Time, staged []string) ([]string, error) {
	var sums strings.Builder
	var written []string
	for _, dir := range staged {
		name, err := archive(out, dir, mtime)
		if err != nil {
			return nil, err
		}
		sum, err := fileSHA256(filepath.Join(out, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		written = append(written, name)
	}
	written = append(written, "SHA256SUMS")
	return written, os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644)
}

// entry is one file of a staged directory.
type entry struct {
	name string // slash-separated, under the archive's top directory
	path string
	mode fs.FileMode
}

// archive writes dir's files to out/BASE.tar.gz, or out/BASE.zip for a
// Windows build (BASE, dir's name, holds "_windows_"), and returns the
// archive's name.
func archive(out, dir string, mtime time.Time) (string, error) {
	base := filepath.Base(dir)
	files, err := staged(dir, base)
	if err != nil {
		return "", err
	}
	name := base + ".tar.gz"
	write := writeTarGz
	if strings.Contains(base, "_windows_") {
		name, write = base+".zip", writeZip
	}
	f, err := os.Create(filepath.Join(out, name))
	if err != nil {
		return "", err
	}
	err = write(f, base, files, mtime)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return name, err
}

// staged lists dir's regular files in name order: executables (any x bit,
// or .exe) get mode 0755, the others 0644, whatever the umask made.
func staged(dir, base string) ([]entry, error) {
	var files []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		mode := fs.FileMode(0o644)
		if fi.Mode()&0o111 != 0 || strings.HasSuffix(p, ".exe") {
			mode = 0o755
		}
		files = append(files, entry{base + "/" + filepath.ToSlash(rel), p, mode})
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: nothing to pack", dir)
	}
	slices.SortFunc(files, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return files, err
}

func writeTarGz(w io.Writer, base string, files []entry, mtime time.Time) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode fs.FileMode, size int64, typ byte) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: int64(mode), Size: size, ModTime: mtime, Format: tar.FormatPAX}
	}
	err := tw.WriteHeader(hdr(base+"/", 0o755, 0, tar.TypeDir))
	for _, e := range files {
		if err != nil {
			break
		}
		err = copyFile(e.path, func(size int64) (io.Writer, error) {
			return tw, tw.WriteHeader(hdr(e.name, e.mode, size, tar.TypeReg))
		})
	}
	return errors.Join(err, tw.Close(), gz.Close())
}

func writeZip(w io.Writer, base string, files []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	dh := &zip.FileHeader{Name: base + "/", Modified: mtime}
	dh.SetMode(fs.ModeDir | 0o755)
	_, err := zw.CreateHeader(dh)
	for _, e := range files {
		if err != nil {
			break
		}
		err = copyFile(e.path, func(int64) (io.Writer, error) {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
			h.SetMode(e.mode)
			return zw.CreateHeader(h)
		})
	}
	return errors.Join(err, zw.Close())
}

// copyFile copies the file at path to the writer that create returns
// once told the file's size.
func copyFile(path string, create func(size int64) (io.Writer, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	w, err := create(fi.Size())
	if err != nil {
		return err
	}
	n, err := io.Copy(w, f)
	if err == nil && n != fi.Size() {
		err = fmt.Errorf("%s changed while it was packed", path)
	}
	return err
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

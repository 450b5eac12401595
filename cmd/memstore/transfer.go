package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/internal/transfer"
)

const exportHelp = `Usage: memstore export [--store ID] DIR|FILE.jsonl|-

Writes every memory of a store out, as of one moment (the server's
export stream: one request for the whole store; a server without it is
listed page by page, which is not one moment):

  DIR          one file per memory at its path below DIR (created mode
               0700, files 0600); existing files at those paths are
               replaced, others are left alone; a memory whose path
               cannot be a file here (a hidden name such as .git/ or
               .env, the name of a key, credential or shell start-up
               file such as authorized_keys, or one too long) is
               skipped with a warning
  FILE.jsonl   one JSON object per line: {"path","content","content_sha256"};
               an existing FILE.jsonl is replaced once the export is complete
  -            the same JSON lines on standard output

Progress goes to stderr, then a summary (to stdout unless the memories go
there).
` + backendHelp

const importHelp = `Usage: memstore import [--store ID] DIR|FILE.jsonl|-

Loads memories into a store from a directory (each file becomes the
memory at its path below DIR) or from JSON lines as export writes them
(- reads standard input). A memory that is missing is created, one with
other content is updated, one with the same content is left alone.
Hidden files and folders, files named as keys, credentials or shell
start-up files are (authorized_keys, id_*, credentials...) and files
that are not text (not UTF-8, or with a NUL byte) are skipped with a
warning. Progress goes to stderr,
then a summary of the counts.
` + backendHelp

// isJSONLines says whether an export or import target is JSON lines
// rather than a directory.
func isJSONLines(target string) bool {
	return target == "-" || strings.HasSuffix(target, ".jsonl")
}

func runExport(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "export", exportHelp)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one DIR or FILE.jsonl")
	if err != nil {
		return err
	}
	defer c.Close()
	target := pos[0]

	// A first, cheap export of the basic view counts the memories, for
	// the progress lines.
	total := 0
	if err := c.ExportMemories(ctx, c.caller, storeID, false, memstore.ExportFunc(func(*memstore.Memory) error {
		total++
		return nil
	})); err != nil {
		return err
	}

	var write func(m *memstore.Memory) error // a failure of one memory
	var finish func() error
	var fatal error // a failure of the whole export
	summary := e.stdout
	if isJSONLines(target) {
		var out io.Writer = newJSONWriter(e.raw()) // JSON lines, for a program
		if target == "-" {
			summary = e.stderr
		} else {
			// The old file stays until the export is complete.
			p, err := private.Begin(target)
			if err != nil {
				return err
			}
			defer p.Discard()
			out = p
			finish = p.Commit
		}
		w := bufio.NewWriter(out)
		lw := transfer.NewLineWriter(w)
		write = func(m *memstore.Memory) error {
			if err := lw.Write(m); err != nil {
				fatal = err
			}
			return fatal
		}
		closeFile := finish // nil for standard output
		finish = func() error {
			if err := w.Flush(); err != nil || closeFile == nil {
				return err
			}
			return closeFile()
		}
	} else {
		if err := os.MkdirAll(target, private.DirMode); err != nil {
			return err
		}
		root, err := os.OpenRoot(target)
		if err != nil {
			return err
		}
		defer root.Close()
		dir, err := filepath.Abs(target)
		if err != nil {
			return err
		}
		write = func(m *memstore.Memory) error { return exportFile(root, dir, m) }
		finish = root.Close
	}

	p := newProgress(e.stderr, "exported", total)
	exported, skipped, failed := 0, 0, 0
	// One export: the store as of one moment, in one request.
	err = c.ExportMemories(ctx, c.caller, storeID, true, memstore.ExportFunc(func(m *memstore.Memory) error {
		if err := write(m); err != nil {
			if fatal != nil {
				return fatal
			}
			var why notAFile
			if errors.As(err, &why) {
				skipped++
				fmt.Fprintf(e.stderr, "memstore export: skipped %s: %v (a JSON-lines export keeps it)\n", cell(m.Path), err)
				return nil
			}
			failed++
			fmt.Fprintf(e.stderr, "memstore export: skipped %s: %v\n", cell(m.Path), err)
			return nil
		}
		exported++
		p.step()
		return nil
	}))
	if err == nil {
		err = finish()
	}
	if err != nil {
		return err
	}
	if c.json {
		if err := printJSON(summary, struct {
			StoreID  string `json:"memory_store_id"`
			Exported int    `json:"exported"`
			Skipped  int    `json:"skipped"`
			Failed   int    `json:"failed"`
		}{storeID, exported, skipped, failed}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(summary, "exported %s from %s to %s", plural(exported, "memory", "memories"), storeID, target)
		if skipped > 0 {
			fmt.Fprintf(summary, " (%d skipped)", skipped)
		}
		fmt.Fprintln(summary)
	}
	if failed > 0 {
		return fmt.Errorf("%d memories could not be exported", failed)
	}
	return nil
}

// notAFile is why a memory is not exported to a directory: its path
// cannot be a file there. It is skipped, not failed.
type notAFile string

func (n notAFile) Error() string { return string(n) }

// exportFile writes a memory to the file at its path below root, the
// directory dir. The backend validates paths, but a path is checked again
// here against the rules of local files (no hidden name such as .git/ or
// .env, whatever a store holds, nor one this system cannot have), and
// root refuses any that would reach outside it, symbolic links included.
func exportFile(root *os.Root, dir string, m *memstore.Memory) error {
	rel := filepath.FromSlash(strings.TrimPrefix(m.Path, "/"))
	if memstore.ValidatePath(m.Path) != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("path would leave the directory")
	}
	if why := localfile.PathProblem(dir, m.Path[1:], runtime.GOOS); why != "" {
		return notAFile(why)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, private.DirMode); err != nil {
			return err
		}
	}
	return private.WriteFileIn(root, rel, []byte(m.Content))
}

// importCounts is what an import did.
type importCounts struct {
	StoreID   string `json:"memory_store_id"`
	Created   int    `json:"created"`
	Updated   int    `json:"updated"`
	Unchanged int    `json:"unchanged"`
	Skipped   int    `json:"skipped"`
	Failed    int    `json:"failed"`
}

func runImport(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "import", importHelp)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one DIR or FILE.jsonl")
	if err != nil {
		return err
	}
	defer c.Close()
	source := pos[0]

	s, err := c.Store(ctx, c.caller, storeID)
	if err != nil {
		return err
	}
	if s.ArchivedAt != nil {
		return memstore.ErrArchived(storeID)
	}
	im := &importer{c: c, e: e, storeID: storeID, existing: map[string]*memstore.Memory{},
		counts: importCounts{StoreID: storeID}, progress: newProgress(e.stderr, "imported", 0)}
	// What the store holds, by path, to tell creates from updates from
	// no-ops without a lookup per memory.
	if err := c.eachMemory(ctx, storeID, memstore.MemoryFilter{Limit: 100}, func(it *memstore.ListItem) error {
		if it.Memory != nil {
			im.existing[it.Memory.Path] = it.Memory
		}
		return nil
	}); err != nil {
		return err
	}
	if isJSONLines(source) {
		err = im.fromJSONLines(ctx, source)
	} else {
		err = im.fromDir(ctx, source)
	}
	if err != nil {
		return err
	}
	n := im.counts
	if c.json {
		if err := printJSON(e.stdout, n); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "imported into %s: %d created, %d updated, %d unchanged, %d skipped, %d failed\n",
			storeID, n.Created, n.Updated, n.Unchanged, n.Skipped, n.Failed)
	}
	if n.Failed > 0 {
		return fmt.Errorf("%d memories could not be imported", n.Failed)
	}
	return nil
}

// importer writes memories into a store, counting what it does.
type importer struct {
	c        *conn
	e        env
	storeID  string
	existing map[string]*memstore.Memory // by path, kept up to date
	counts   importCounts
	progress *progress
}

// skip counts an entry left out on purpose, with a warning.
func (im *importer) skip(where, why string) {
	im.counts.Skipped++
	fmt.Fprintf(im.e.stderr, "memstore import: skipped %s: %s\n", cell(where), cell(why))
}

// fail counts an entry that could not be imported, with a warning.
func (im *importer) fail(where, why string) {
	im.counts.Failed++
	im.progress.step()
	fmt.Fprintf(im.e.stderr, "memstore import: failed %s: %s\n", cell(where), cell(why))
}

// apply creates or updates the memory at path. A memstore error concerns
// this memory only and is counted; any other error (an unreachable
// server) ends the import.
func (im *importer) apply(ctx context.Context, where, path, content string) error {
	if err := memstore.ValidatePath(path); err != nil {
		im.fail(where, memstore.ErrorMessage(err))
		return nil
	}
	c, old := im.c, im.existing[path]
	var m *memstore.Memory
	var err error
	switch {
	case old == nil:
		m, err = c.CreateMemory(ctx, c.caller, im.storeID, memstore.MemoryCreate{Path: path, Content: content})
	case old.ContentSHA256 == sha256Hex(content):
		im.counts.Unchanged++
		im.progress.step()
		return nil
	default:
		m, err = c.UpdateMemory(ctx, c.caller, im.storeID, old.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: old.ContentSHA256})
	}
	var me *memstore.Error
	switch {
	case errors.As(err, &me):
		im.fail(where, me.Error())
		return nil
	case err != nil:
		return err
	case old == nil:
		im.counts.Created++
	default:
		im.counts.Updated++
	}
	im.existing[path] = m
	im.progress.step()
	return nil
}

// fromJSONLines imports the memories of a JSON-lines file, or of standard
// input for -; a bad line counts as failed.
func (im *importer) fromJSONLines(ctx context.Context, source string) error {
	in, name := im.e.stdin, "standard input"
	if source != "-" {
		f, err := os.Open(source)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, source
		if im.progress.total, err = countLines(f); err != nil {
			return fmt.Errorf("read %s: %w", source, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	r := bufio.NewReader(in)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			where := fmt.Sprintf("%s:%d", name, n)
			if path, content, perr := transfer.ParseLine(line); perr != nil {
				im.fail(where, perr.Error())
			} else if err := im.apply(ctx, where+" "+path, path, content); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// countLines counts the lines of r that are not blank.
func countLines(r io.Reader) (int, error) {
	n := 0
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadSlice('\n')
		blank := len(bytes.TrimSpace(line)) == 0
		for errors.Is(err, bufio.ErrBufferFull) { // a long line: read on to its end
			blank = false
			_, err = br.ReadSlice('\n')
		}
		if !blank {
			n++
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// fromDir imports the files below dir, each as the memory at its path
// below dir. Hidden entries, files named as keys, credentials or shell
// start-up files are, entries other than regular files and folders
// (symbolic links included) and files that are not text are skipped
// with a warning.
func (im *importer) fromDir(ctx context.Context, dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory (a JSON-lines file must end in .jsonl)", dir)
	}
	var files []string
	err = filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case file == dir:
		case localfile.Hidden(d.Name()):
			im.skip(file, "hidden")
			if d.IsDir() {
				return filepath.SkipDir
			}
		case d.IsDir():
		case localfile.CredentialName(d.Name()) != "":
			im.skip(file, localfile.CredentialName(d.Name()))
		case !d.Type().IsRegular():
			im.skip(file, "not a regular file")
		default:
			files = append(files, file)
		}
		return nil
	})
	if err != nil {
		return err
	}
	im.progress.total = len(files)
	for _, file := range files {
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		b, err := readFileLimited(file)
		switch {
		case err != nil:
			im.fail(file, err.Error())
		case !localfile.Text(b):
			im.skip(file, localfile.NotText)
		default:
			if err := im.apply(ctx, file, "/"+filepath.ToSlash(rel), string(b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// readFileLimited reads a file that a memory can hold, refusing a larger
// one before reading it all.
func readFileLimited(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, memstore.MaxContentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > memstore.MaxContentBytes {
		return nil, transfer.ErrTooLarge
	}
	return b, nil
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const lsHelp = `Usage: memstore ls [--store ID] [PREFIX] [--depth N]

Lists the memories below PREFIX (default /, the whole store) in path order.
Like ls, the default depth 1 shows what is directly below PREFIX and rolls
deeper memories up into one PREFIX/DIR/ line each; --depth N goes N levels
down and --depth 0 lists every memory below PREFIX. A PREFIX that names a
memory lists that memory.
` + backendHelp

const catHelp = `Usage: memstore cat [--store ID] [--raw] PATH

Prints the content of the memory at PATH. Control characters a terminal
would obey (escape sequences, carriage returns, bidirectional controls)
are shown as visible symbols; --raw prints the content exactly as
stored, byte for byte.
` + backendHelp

const putHelp = `Usage: memstore put [--store ID] PATH [FILE|-]

Writes the content of FILE, or of standard input when FILE is - or left
out, to the memory at PATH, byte for byte: creates the memory, or replaces
its content. A replacement applies only if the memory did not change since
it was read, so a concurrent change is reported, never overwritten.
` + backendHelp

const editHelp = `Usage: memstore edit [--store ID] PATH

Opens the memory at PATH in $VISUAL or $EDITOR (default vi) and writes
the result back when it changed. If the memory changed meanwhile, nothing
is overwritten: the edited text is kept in a file, and the message says
where. A PATH with no memory yet creates one, unless left empty.
` + backendHelp

const mvHelp = `Usage: memstore mv [--store ID] FROM TO

Renames the memory at FROM to TO, keeping its ID and history. A TO ending
in / moves the memory into that folder under its own name.
` + backendHelp

const rmHelp = `Usage: memstore rm [--store ID] PATH [--if-sha256 HASH]

Deletes the memory at PATH. Its versions stay, so 'memstore log' and
'memstore show' can still read it. With --if-sha256, deletes only if the
content still has that hash.
` + backendHelp

// memoryFlags starts a memory command: its flag set and the shared flags.
func memoryFlags(e env, name, help string) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, name, help)
	return fs, addBackendFlags(fs, name, true)
}

func runLs(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "ls", lsHelp)
	depth := fs.Int("depth", 1, "levels to list below PREFIX, 0 for all")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError(e, "memstore ls: give at most one PREFIX")
	}
	if *depth < 0 {
		return usageError(e, "memstore ls: --depth must be 0 or more")
	}
	arg := "/"
	if len(pos) == 1 {
		arg = pos[0]
	}
	if !strings.HasPrefix(arg, "/") {
		return usageError(e, "memstore ls: PREFIX %q must start with /", arg)
	}
	prefix := arg
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()

	var items []memstore.ListItem
	err = c.eachMemory(ctx, storeID, memstore.MemoryFilter{PathPrefix: prefix, Depth: *depth, Limit: 100}, func(it *memstore.ListItem) error {
		items = append(items, *it)
		return nil
	})
	if err != nil {
		return err
	}
	if len(items) == 0 && arg != prefix {
		// PREFIX may name a memory, as ls FILE lists the file.
		if m, err := c.findMemory(ctx, storeID, arg); err == nil {
			items = append(items, memstore.ListItem{Memory: m})
		}
	}
	if c.json {
		return printJSONList(e.stdout, items, func(it *memstore.ListItem) httpapi.ListItemJSON { return httpapi.NewListItemJSON(it, false) })
	}
	return printTable(e, items, "no memories below "+prefix, []string{"PATH", "SIZE", "UPDATED", "ID"},
		func(it *memstore.ListItem) []string {
			if m := it.Memory; m != nil {
				return []string{m.Path, strconv.FormatInt(m.ContentSize, 10), fmtTime(m.UpdatedAt), m.ID}
			}
			return []string{it.Prefix, "", "", ""}
		})
}

// storeArgs parses a command that takes exactly n positional arguments
// (what names them in the message) and opens its store.
func storeArgs(ctx context.Context, e env, fs *flag.FlagSet, bf *backendFlags, args []string, n int, what string) (*conn, string, []string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", nil, err
	}
	if len(pos) != n {
		return nil, "", nil, usageError(e, "memstore %s: give %s (run 'memstore %s --help')", bf.cmd, what, bf.cmd)
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return nil, "", nil, err
	}
	return c, storeID, pos, nil
}

func runCat(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "cat", catHelp)
	out := addRawFlag(fs, e)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one PATH")
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := c.readMemory(ctx, storeID, pos[0])
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.NewMemoryJSON(m, true))
	}
	_, err = io.WriteString(out(), m.Content)
	return err
}

// readMemory returns the memory at path with its content.
func (c *conn) readMemory(ctx context.Context, storeID, path string) (*memstore.Memory, error) {
	m, err := c.findMemory(ctx, storeID, path)
	if err != nil {
		return nil, err
	}
	return c.Memory(ctx, c.caller, storeID, m.ID)
}

func runPut(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "put", putHelp)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError(e, "memstore put: give PATH and optionally FILE (run 'memstore put --help')")
	}
	if err := memstore.ValidatePath(pos[0]); err != nil {
		return err
	}
	in, name := e.stdin, "standard input"
	if len(pos) == 2 && pos[1] != "-" {
		f, err := os.Open(pos[1])
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, pos[1]
	}
	content, err := readContent(in, name)
	if err != nil {
		return err
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()

	m, verb, err := c.put(ctx, storeID, pos[0], content)
	if err != nil {
		return err
	}
	return c.printWritten(m, verb)
}

// readContent reads memory content, refusing more than a memory may hold
// before reading all of a large input.
func readContent(r io.Reader, name string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, memstore.MaxContentBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > memstore.MaxContentBytes {
		return "", memstore.Errorf(memstore.EInvalid, "%s is over %d bytes, the limit for a memory", name, memstore.MaxContentBytes)
	}
	if err := memstore.ValidateContent(string(b)); err != nil {
		return "", memstore.Errorf(memstore.EInvalid, "%s: %s", name, memstore.ErrorMessage(err))
	}
	return string(b), nil
}

// put creates the memory at path or replaces its content if it did not
// change since it was looked up. verb says which happened: "created",
// "updated" or "unchanged".
func (c *conn) put(ctx context.Context, storeID, path, content string) (*memstore.Memory, string, error) {
	old, err := c.findMemory(ctx, storeID, path)
	switch {
	case memstore.ErrorCode(err) == memstore.ENotFound:
		m, err := c.CreateMemory(ctx, c.caller, storeID, memstore.MemoryCreate{Path: path, Content: content})
		return m, "created", err
	case err != nil:
		return nil, "", err
	case old.ContentSHA256 == sha256Hex(content):
		return old, "unchanged", nil
	}
	m, err := c.UpdateMemory(ctx, c.caller, storeID, old.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: old.ContentSHA256})
	if memstore.ErrorCode(err) == memstore.EPreconditionFailed {
		return nil, "", memstore.Errorf(memstore.EPreconditionFailed, "%s changed while it was being written; nothing was overwritten (see 'memstore log %s')", path, path)
	}
	return m, "updated", err
}

// printWritten reports a memory written by put or edit.
func (c *conn) printWritten(m *memstore.Memory, verb string) error {
	if c.json {
		return printJSON(c.e.stdout, httpapi.NewMemoryJSON(m, false))
	}
	fmt.Fprintf(c.e.stdout, "%s %s (%s)\n", verb, cell(m.Path), plural(int(m.ContentSize), "byte", "bytes"))
	return nil
}

func runEdit(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "edit", editHelp)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one PATH")
	if err != nil {
		return err
	}
	defer c.Close()
	path := pos[0]
	old, err := c.readMemory(ctx, storeID, path)
	if err != nil && memstore.ErrorCode(err) != memstore.ENotFound {
		return err
	}

	var before string
	if old != nil {
		before = old.Content
	}
	// The temporary file keeps the memory's name, so that the editor
	// recognises its kind; CreateTemp makes it readable by its owner only.
	f, err := os.CreateTemp("", "memstore-edit-*-"+tempName(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(before)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp)
		}
	}()

	if err := runEditor(e, tmp); err != nil {
		return err
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	after := string(b)
	if after == before {
		if old == nil {
			fmt.Fprintf(e.stderr, "nothing written: %s left empty\n", path)
			return nil
		}
		fmt.Fprintf(e.stderr, "%s unchanged\n", path)
		if c.json {
			return printJSON(e.stdout, httpapi.NewMemoryJSON(old, false))
		}
		return nil
	}

	var m *memstore.Memory
	verb := "created"
	if old == nil {
		m, err = c.CreateMemory(ctx, c.caller, storeID, memstore.MemoryCreate{Path: path, Content: after})
	} else {
		verb = "updated"
		m, err = c.UpdateMemory(ctx, c.caller, storeID, old.ID, memstore.MemoryUpdate{Content: &after, IfSHA256: old.ContentSHA256})
	}
	if err != nil {
		// Never lose what was typed: keep it and say where.
		keep = true
		switch memstore.ErrorCode(err) {
		case memstore.EPreconditionFailed, memstore.ENotFound, memstore.EPathConflict:
			if old == nil {
				return fmt.Errorf("%s was created by someone else while you were editing it; nothing was overwritten. Your text is kept in %s; compare with 'memstore cat %s', then 'memstore put %s %s'", path, tmp, path, path, tmp)
			}
			return fmt.Errorf("%s changed while you were editing it; nothing was overwritten. Your text is kept in %s; compare with 'memstore cat %s', then 'memstore put %s %s'", path, tmp, path, path, tmp)
		}
		return fmt.Errorf("%s; your text is kept in %s", memstore.ErrorMessage(err), tmp)
	}
	return c.printWritten(m, verb)
}

// tempName is the last segment of a memory path, reduced to characters
// that are safe in a file name.
func tempName(path string) string {
	base := path[strings.LastIndex(path, "/")+1:]
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, base)
}

// runEditor runs $VISUAL or $EDITOR (default vi) on file, without a shell:
// the variable is split on spaces into a program and its arguments.
func runEditor(e env, file string) error {
	editor := e.getenv("VISUAL")
	if editor == "" {
		editor = e.getenv("EDITOR")
	}
	argv := strings.Fields(editor)
	if len(argv) == 0 {
		argv = []string{"vi"}
	}
	// Not CommandContext: an interrupt typed in the editor reaches memstore
	// too, and must not kill the editor.
	cmd := exec.Command(argv[0], append(argv[1:], file)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.raw(), e.rawErr()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("editor %s: %w; nothing written", argv[0], err)
	}
	return nil
}

func runMv(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "mv", mvHelp)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 2, "FROM and TO")
	if err != nil {
		return err
	}
	defer c.Close()
	from, to := pos[0], pos[1]
	if strings.HasSuffix(to, "/") {
		to += from[strings.LastIndex(from, "/")+1:]
	}
	if err := memstore.ValidatePath(to); err != nil {
		return err
	}
	old, err := c.findMemory(ctx, storeID, from)
	if err != nil {
		return err
	}
	m, err := c.UpdateMemory(ctx, c.caller, storeID, old.ID, memstore.MemoryUpdate{Path: &to})
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.NewMemoryJSON(m, false))
	}
	fmt.Fprintf(e.stdout, "renamed %s to %s\n", cell(from), cell(m.Path))
	return nil
}

func runRm(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "rm", rmHelp)
	ifSHA := fs.String("if-sha256", "", "delete only if the content has this SHA-256 `HASH`")
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one PATH")
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := hex.DecodeString(*ifSHA); err != nil || (*ifSHA != "" && len(*ifSHA) != 64) {
		return usageError(e, "memstore rm: --if-sha256 %q is not a SHA-256 (64 hex digits)", *ifSHA)
	}
	m, err := c.findMemory(ctx, storeID, pos[0])
	if err != nil {
		return err
	}
	if err := c.DeleteMemory(ctx, c.caller, storeID, m.ID, *ifSHA); err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.MemoryDeleted(m.ID))
	}
	fmt.Fprintf(e.stdout, "deleted %s\n", cell(m.Path))
	return nil
}

// sha256Hex is the content_sha256 of content.
func sha256Hex(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

package agenttool

import (
	"errors"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/tooltext"
)

// A mount is an attached store as the agent sees it: a directory.
type mount struct {
	att  memstore.Attachment
	path string // the mount path, without a final "/": /mnt/memory/notes
}

// show returns the full path of a path in the store ("" for the mount
// itself, shown as a directory).
func (m *mount) show(storePath string) string {
	if storePath == "" {
		return m.path + "/"
	}
	return m.path + storePath
}

// access describes the mount's access in a few words.
func (m *mount) access() string {
	if m.att.Writable() {
		return "read-write"
	}
	return "read-only"
}

// mountsOf returns the mounts of a session in the order of its
// attachments. Backends assign mount paths at creation; should any be
// missing, all are assigned afresh, as AssignMountPaths does, so that
// every mount has one and they stay distinct.
func mountsOf(s *memstore.Session) []mount {
	atts := append([]memstore.Attachment(nil), s.Attachments...)
	for _, a := range atts {
		if a.MountPath == "" || !strings.HasPrefix(a.MountPath, memstore.MountRoot) {
			memstore.AssignMountPaths(atts)
			break
		}
	}
	out := make([]mount, len(atts))
	for i, a := range atts {
		out[i] = mount{att: a, path: strings.TrimSuffix(a.MountPath, "/")}
	}
	return out
}

// resolve maps a path the model sent onto a mount and a path in its store:
// /mnt/memory/<slug>/rest is (that mount, "/rest"); with exactly one mount
// a plain /rest means that one. rest is "" when p is the mount itself.
// The root of all mounts (/mnt/memory, or / when several stores are
// attached) is (nil, ""), allowed only when root is. rest is not yet
// checked as a memory path.
func (t *Toolset) resolve(p string, root bool) (*mount, string, error) {
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return nil, "", failf("The path %s contains a NUL character, which memory paths cannot hold.", strconv.Quote(p))
	case tooltext.PercentTrap(p) != "":
		return nil, "", failf("The path %s contains the percent-escape %s, which memory paths do not allow; write paths literally. %s", p, tooltext.PercentTrap(p), t.mountList())
	}
	if len(t.mounts) == 0 {
		return nil, "", failf("No memory store is attached to this session, so there is no memory to work on.")
	}
	allRoot := strings.TrimSuffix(memstore.MountRoot, "/")
	if p == allRoot || p == memstore.MountRoot {
		if root {
			return nil, "", nil
		}
		return nil, "", failf("%s is the directory of all memory stores, not a memory. Give the full path of a memory, such as %s/notes.md. %s", memstore.MountRoot, t.mounts[0].path, t.mountList())
	}
	if after, ok := strings.CutPrefix(p, memstore.MountRoot); ok {
		slug, rest, _ := strings.Cut(after, "/")
		if slug == "" {
			return nil, "", failf("The path %s has no store directory after %s. %s", p, memstore.MountRoot, t.mountList())
		}
		for i := range t.mounts {
			if t.mounts[i].path == memstore.MountRoot+slug {
				if rest != "" {
					rest = "/" + rest
				}
				if rest == "/" {
					rest = ""
				}
				return &t.mounts[i], rest, nil
			}
		}
		return nil, "", failf("There is no memory store mounted at %s%s/. %s", memstore.MountRoot, slug, t.mountList())
	}
	if !strings.HasPrefix(p, "/") {
		return nil, "", failf("The path %s is not absolute. Give the full path, such as %s/notes.md. %s", strconv.Quote(p), t.mounts[0].path, t.mountList())
	}
	if len(t.mounts) > 1 {
		if p == "/" && root {
			return nil, "", nil // the stores' common root
		}
		return nil, "", failf("Several memory stores are attached, so %s is ambiguous: give the full path, starting with the mount path of a store, such as %s%s. %s", p, t.mounts[0].path, p, t.mountList())
	}
	if p == "/" {
		return &t.mounts[0], "", nil
	}
	return &t.mounts[0], p, nil
}

// memoryPath resolves the path of one memory: it must lie in a mount and
// be a valid memory path there.
func (t *Toolset) memoryPath(p string) (*mount, string, error) {
	m, rest, err := t.resolve(p, false)
	if err != nil {
		return nil, "", err
	}
	switch {
	case rest == "":
		return nil, "", failf("%s is the directory of the memory store %q, not a memory. Give the full path of a memory in it, such as %s/notes.md; memory_list shows what it holds.", m.show(""), m.att.Name, m.path)
	case strings.HasSuffix(rest, "/"):
		return nil, "", failf("%s ends with /, so it names a directory, not a memory. memory_list with path_prefix %s shows what it holds; to work on a memory, give its full path without the final /.", m.show(rest), m.show(rest))
	}
	if err := memstore.ValidatePath(rest); err != nil {
		return nil, "", pathError(err, m, rest)
	}
	return m, rest, nil
}

// prefixPath resolves a directory to list or search: the root of all
// mounts (nil, ""), a mount (m, ""), or a directory in it (m, "/a/b/",
// always ending with "/", so that /a/b matches /a/b/c but not /a/bc).
func (t *Toolset) prefixPath(p string) (*mount, string, error) {
	m, rest, err := t.resolve(p, true)
	if err != nil || rest == "" {
		return m, "", err
	}
	dir := strings.TrimSuffix(rest, "/")
	if err := memstore.ValidatePath(dir); err != nil {
		return nil, "", pathError(err, m, dir)
	}
	return m, dir + "/", nil
}

// pathError turns ValidatePath's message, which quotes the path in the
// store, into one that quotes the path the model sent.
func pathError(err error, m *mount, storePath string) error {
	var e *memstore.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := strings.ReplaceAll(e.Error(), strconv.Quote(storePath), strconv.Quote(m.show(storePath)))
	return failf("Invalid path: %s. Paths are used exactly as given, never resolved: write each memory's full path, such as %s/topic/notes.md.", msg, m.path)
}

// mountList names the mounts, for messages about paths.
func (t *Toolset) mountList() string {
	if len(t.mounts) == 1 {
		m := &t.mounts[0]
		return "The memory store attached is " + m.show("") + " (" + m.access() + ")."
	}
	parts := make([]string, len(t.mounts))
	for i := range t.mounts {
		parts[i] = t.mounts[i].show("") + " (" + t.mounts[i].access() + ")"
	}
	return "The memory stores attached are " + strings.Join(parts, ", ") + "."
}

package memdir

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memstore/memstore/internal/localfile"
	"github.com/memstore/memstore/internal/private"
)

// A dream distills the daily logs into topic files and the index
// (docs/dreams.md, The memory directory's dream). This file holds its
// side of the directory: which parts of the logs are new since the last
// dream, the record of what was consolidated, and the staging copy the
// model works on, whose changes are applied at the end or not at all.
// Running the model is the caller's.

// The files a dream keeps in the memory directory. They are hidden, so
// the memory tool, sync and snapshots never touch them.
const (
	// DreamStateName records what the dreams consolidated.
	DreamStateName = ".dream.json"
	// dreamJournalName lists the changes being applied; while it exists,
	// an interrupted apply is finished before anything else.
	dreamJournalName = ".dream-apply.json"
	dreamStagingMark = ".dream-staging-"
)

// The bounds of a dream: the log text one run reads (the rest waits for
// the next run), and the size of the directory it copies.
const (
	MaxDreamLogBytes   = 200_000
	MaxDreamCopyBytes  = 64 << 20
	MaxDreamCopyFiles  = 10_000
	logsDir            = "logs"
	dreamLogEntryStart = "\n- "
)

// DreamState is the record of what the dreams consolidated: how many bytes
// of each daily log (logs are only ever appended to, so the rest of a log
// is what is new), and when the last dream was applied; and how many
// turns of each transcript extractions read.
type DreamState struct {
	LastDream time.Time        `json:"last_dream,omitzero"`
	Logs      map[string]int64 `json:"logs"`                // "logs/2026/01/2026-01-02.md" → bytes consolidated
	Extracted map[string]int   `json:"extracted,omitempty"` // a transcript's absolute path → turns read
}

// ReadDreamState reads the record in dir; none yet is the zero state.
func ReadDreamState(dir string) (DreamState, error) {
	st := DreamState{Logs: map[string]int64{}}
	b, err := os.ReadFile(filepath.Join(dir, DreamStateName))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %v; remove it to consolidate every log again", filepath.Join(dir, DreamStateName), err)
	}
	if st.Logs == nil {
		st.Logs = map[string]int64{}
	}
	return st, nil
}

// A LogPart is the part of a daily log a dream reads: bytes [From, To) of
// the log at Path (slash-separated, relative to the directory).
type LogPart struct {
	Path string `json:"path"`
	From int64  `json:"from"`
	To   int64  `json:"to"`
	Text string `json:"-"`
}

// PendingLogs are the parts of the daily logs of dir not consolidated by
// the dreams recorded in st, oldest log first, up to maxBytes in all: a
// part that would go past it is cut after its last whole entry, and the
// logs after it wait for the next dream. A log that shrank (rewritten by
// hand) is read again whole.
func PendingLogs(dir string, st DreamState, maxBytes int) ([]LogPart, error) {
	var paths []string
	root := filepath.Join(dir, logsDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() && p != root && localfile.Hidden(d.Name()) {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".md") && !localfile.Hidden(d.Name()) {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Log names are dates: their order is the days'.
	sort.Slice(paths, func(i, j int) bool { return path.Base(paths[i]) < path.Base(paths[j]) })
	var parts []LogPart
	room := maxBytes
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		from := st.Logs[p]
		if from > int64(len(b)) {
			from = 0
		}
		// A writer may be midway through a line: only whole lines count.
		end := int64(bytes.LastIndexByte(b, '\n') + 1)
		if end <= from {
			continue
		}
		text := b[from:end]
		if len(text) > room {
			text = text[:cutEntries(text, room)]
			if len(text) == 0 {
				break
			}
		}
		parts = append(parts, LogPart{Path: p, From: from, To: from + int64(len(text)), Text: string(text)})
		room -= len(text)
		if room <= 0 {
			break
		}
	}
	return parts, nil
}

// cutEntries is the length of the longest prefix of text within n bytes
// that ends at the end of a log entry (a line before a "- " line), or at
// the end of a line when no entry ends within n.
func cutEntries(text []byte, n int) int {
	if n <= 0 {
		return 0
	}
	head := text[:n]
	if i := bytes.LastIndex(head, []byte(dreamLogEntryStart)); i >= 0 {
		return i + 1
	}
	return bytes.LastIndexByte(head, '\n') + 1
}

// Consolidated is st after a dream that read parts.
func (st DreamState) Consolidated(parts []LogPart, at time.Time) DreamState {
	out := st.clone()
	out.LastDream = at.UTC()
	for _, p := range parts {
		out.Logs[p.Path] = p.To
	}
	return out
}

// Extraction is st after an extraction that read the transcript at path
// up to turn turns.
func (st DreamState) Extraction(path string, turns int) DreamState {
	out := st.clone()
	out.Extracted[path] = turns
	return out
}

func (st DreamState) clone() DreamState {
	out := DreamState{LastDream: st.LastDream, Logs: map[string]int64{}, Extracted: map[string]int{}}
	for k, v := range st.Logs {
		out.Logs[k] = v
	}
	for k, v := range st.Extracted {
		out.Extracted[k] = v
	}
	return out
}

// A Staging is a private copy of a memory directory that a dream works on:
// the directory's non-hidden files, with what each held when copied, so
// that Changes can say what the dream did and Apply can refuse to
// overwrite a file changed meanwhile.
type Staging struct {
	Dir  string // the copy
	orig string
	base map[string][sha256.Size]byte // slash path → content hash at copy time
	lock *os.File
}

// BeginStaging finishes an apply that was interrupted, takes the dream
// lock of dir (one dream at a time per directory), and copies the
// directory's non-hidden regular files into a hidden directory inside
// it. Symbolic links are not copied: the dream works on the directory's
// own files only.
func BeginStaging(dir string) (s *Staging, err error) {
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		return nil, err
	}
	// The lock is held on the directory itself, so that a dream leaves no
	// file of its own behind but the record.
	lock, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if _, err := lockFile(lock); err != nil {
		lock.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	if err := finishApply(dir); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(dir, dreamStagingMark)
	if err != nil {
		return nil, err
	}
	s = &Staging{Dir: staging, orig: dir, base: map[string][sha256.Size]byte{}, lock: lock}
	var total int64
	err = walkFiles(dir, func(rel string, b []byte) error {
		total += int64(len(b))
		if total > MaxDreamCopyBytes || len(s.base) >= MaxDreamCopyFiles {
			return fmt.Errorf("%s holds more than %d files or %d bytes, more than a dream copies; move what is not memory elsewhere", dir, MaxDreamCopyFiles, MaxDreamCopyBytes)
		}
		s.base[rel] = sha256.Sum256(b)
		dst := filepath.Join(staging, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), private.DirMode); err != nil {
			return err
		}
		return os.WriteFile(dst, b, private.FileMode)
	})
	if err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	return s, nil
}

// walkFiles calls fn with every non-hidden regular file below dir (no
// hidden directory entered, no symbolic link followed), by slash path.
func walkFiles(dir string, fn func(rel string, content []byte) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if localfile.Hidden(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), b)
	})
}

// A Change is one file a dream added, changed or removed.
type Change struct {
	Path string `json:"path"`
	Op   string `json:"op"` // "added", "changed" or "removed"
}

// Changes compares the staging copy with the directory as it was copied.
// The daily logs are not the dream's to change: what it did to them is
// left out.
func (s *Staging) Changes() ([]Change, error) {
	seen := map[string]bool{}
	var out []Change
	err := walkFiles(s.Dir, func(rel string, b []byte) error {
		seen[rel] = true
		if isLog(rel) {
			return nil
		}
		h, existed := s.base[rel]
		switch {
		case !existed:
			out = append(out, Change{Path: rel, Op: "added"})
		case h != sha256.Sum256(b):
			out = append(out, Change{Path: rel, Op: "changed"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for rel := range s.base {
		if !seen[rel] && !isLog(rel) {
			out = append(out, Change{Path: rel, Op: "removed"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func isLog(rel string) bool { return strings.HasPrefix(rel, logsDir+"/") }

// FitIndex keeps the staging copy's MEMORY.md within its limits: when the
// dream left it over them, the index is rebuilt from the topic files as
// lint --fix rebuilds it. It reports whether it rebuilt the index.
func (s *Staging) FitIndex() (bool, error) {
	x, err := ReadIndex(filepath.Join(s.Dir, indexName))
	if err != nil || !x.Truncated() {
		return false, err
	}
	if _, err := FixIndex(s.Dir); err != nil {
		return false, err
	}
	return true, nil
}

// dreamJournal is what an apply will do, written before it starts.
type dreamJournal struct {
	Staging string      `json:"staging"` // the staging directory's name in dir
	Changes []Change    `json:"changes"`
	State   *DreamState `json:"state,omitempty"` // nil: the record stays as it is
}

// Apply makes the changes in the directory and records state, all or
// nothing: it first checks that no file it changes or removes was
// changed in the directory since it was copied (nor one it adds created),
// then writes a journal, moves each new file into place (each one
// atomically) and removes the removed ones; an apply interrupted midway
// is finished by the next BeginStaging or RecoverDream, from the journal.
// The staging copy is gone afterwards, and the lock released. A nil state
// leaves the record as it is (an extraction consolidates no log).
func (s *Staging) Apply(changes []Change, state *DreamState) error {
	// Everything below goes through the directory as a root, so that a
	// symbolic link in it never leads a write elsewhere.
	root, err := os.OpenRoot(s.orig)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, c := range changes {
		cur, err := root.ReadFile(filepath.FromSlash(c.Path))
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w; nothing was applied", c.Path, err)
		}
		// Its directory must be in this one (or not be there yet).
		if _, err := root.Stat(filepath.Dir(filepath.FromSlash(c.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w; nothing was applied", c.Path, err)
		}
		h, copied := s.base[c.Path]
		switch {
		case c.Op == "added" && exists, copied && (!exists || sha256.Sum256(cur) != h):
			return fmt.Errorf("%s changed in the memory directory while the dream ran; nothing was applied: run the dream again", c.Path)
		}
	}
	j := dreamJournal{Staging: filepath.Base(s.Dir), State: state}
	for _, c := range changes {
		j.Changes = append(j.Changes, Change{Path: c.Path, Op: c.Op})
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := private.WriteFile(filepath.Join(s.orig, dreamJournalName), b); err != nil {
		return err
	}
	err = finishApply(s.orig)
	s.release()
	return err
}

// Discard removes the staging copy, leaving the directory as it was.
func (s *Staging) Discard() {
	os.RemoveAll(s.Dir)
	s.release()
}

func (s *Staging) release() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// RecoverDream finishes an apply of dir that was interrupted, if any,
// under the dream lock.
func RecoverDream(dir string) error {
	s, err := BeginStaging(dir)
	if err != nil {
		return err
	}
	s.Discard()
	return nil
}

// finishApply carries out the journal of dir, if there is one: every step
// can be done again, so an apply interrupted at any point ends the same.
// Then it removes what earlier dreams left: staging copies of dreams that
// never finished. The caller holds the lock.
func finishApply(dir string) error {
	jpath := filepath.Join(dir, dreamJournalName)
	b, err := os.ReadFile(jpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		var j dreamJournal
		if err := json.Unmarshal(b, &j); err != nil || !strings.HasPrefix(j.Staging, dreamStagingMark) || strings.ContainsAny(j.Staging, `/\`) {
			return fmt.Errorf("%s does not parse; remove it (the dream it records is lost)", jpath)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return err
		}
		defer root.Close()
		for _, c := range j.Changes {
			if !filepath.IsLocal(filepath.FromSlash(c.Path)) {
				return fmt.Errorf("%s names %q, outside the directory; remove it", jpath, c.Path)
			}
			dst := filepath.FromSlash(c.Path)
			if c.Op == "removed" {
				if err := root.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				continue
			}
			src := filepath.Join(j.Staging, dst)
			if _, err := root.Lstat(src); errors.Is(err, fs.ErrNotExist) {
				continue // moved already
			}
			if err := root.MkdirAll(filepath.Dir(dst), private.DirMode); err != nil {
				return err
			}
			if err := root.Rename(src, dst); err != nil {
				return err
			}
		}
		if j.State != nil {
			sb, err := json.MarshalIndent(j.State, "", "  ")
			if err != nil {
				return err
			}
			if err := private.WriteFile(filepath.Join(dir, DreamStateName), append(sb, '\n')); err != nil {
				return err
			}
		}
		if err := os.Remove(jpath); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), dreamStagingMark) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

package memdir

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
)

// The lengths of an index line, in UTF-16 units: the guidance asks for
// lines under IndexLineTarget; over IndexLineMax, Claude Code's own
// warning calls an entry too long.
const (
	IndexLineTarget = 150
	IndexLineMax    = 200
)

// The sizes above which a topic file is too long for recall, which shows
// only its first RecallMaxLines lines and RecallMaxBytes bytes. Directory
// sync skips files over a memory's limit, memstore.MaxContentBytes.
const (
	RecallMaxLines = 200
	RecallMaxBytes = 4096
)

// An IndexLine is one entry of MEMORY.md: "- [Title](file.md) — hook".
type IndexLine struct {
	Title string
	File  string // the link target, unescaped
	Hook  string // "" when the line has none
}

var indexLineRE = regexp.MustCompile(`^- \[([^\]]+)\]\(([^()\s]+)\)(?: — (.*))?$`)

// ParseIndexLine reads an index line; ok is false when line is not one.
func ParseIndexLine(line string) (l IndexLine, ok bool) {
	m := indexLineRE.FindStringSubmatch(line)
	if m == nil {
		return IndexLine{}, false
	}
	file, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(m[2], "<"), ">"))
	if err != nil {
		return IndexLine{}, false
	}
	return IndexLine{Title: m[1], File: file, Hook: strings.TrimSpace(m[3])}, true
}

// String formats the line, its hook shortened with "…" so that the line
// stays within IndexLineTarget units when the title and file allow it.
func (l IndexLine) String() string {
	title := strings.Map(func(r rune) rune {
		switch r {
		case '[', ']', '\n', '\r', '\t':
			return ' '
		}
		return r
	}, strings.TrimSpace(l.Title))
	file := strings.NewReplacer("%", "%25", " ", "%20", "(", "%28", ")", "%29").Replace(l.File)
	s := "- [" + title + "](" + file + ")"
	hook := strings.Join(strings.Fields(l.Hook), " ")
	if hook == "" {
		return s
	}
	s += " — "
	room := IndexLineTarget - Units(s)
	if room < 12 {
		room = 12 // a hook too short to say anything is no hook
	}
	if Units(hook) > room {
		hook = strings.TrimRight(prefixUnits(hook, room-1), " ") + "…"
	}
	return s + hook
}

// Severity says how serious a finding is.
type Severity string

// The severities of findings.
const (
	SeverityError   Severity = "error"   // memory is lost, hidden or exposed
	SeverityWarning Severity = "warning" // memory works, but not as well as it could
)

// A Finding is one problem lint found.
type Finding struct {
	// Rule is the check's stable identifier, such as "index-dangling-link".
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// File is the file's path relative to the directory, with slashes.
	File string `json:"file"`
	// Line is the 1-based line in File, 0 when the finding is about the
	// whole file.
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// The rules of lint, with what each checks.
var Rules = map[string]string{
	"index-over-lines":    fmt.Sprintf("the index has more lines than are loaded (%d)", MaxIndexLines),
	"index-over-size":     fmt.Sprintf("the index is larger than is loaded (%d UTF-16 units)", MaxIndexUnits),
	"index-near-lines":    fmt.Sprintf("the index has more than %d lines", NearIndexLines),
	"index-near-size":     fmt.Sprintf("the index is larger than %d UTF-16 units", NearIndexUnits),
	"index-frontmatter":   "the index has frontmatter: it is an index, not a memory",
	"index-line-format":   "an index line is not '- [Title](file.md) — one-line hook'",
	"index-line-long":     fmt.Sprintf("an index line is longer than %d characters", IndexLineTarget),
	"index-line-too-long": fmt.Sprintf("an index line is longer than %d characters", IndexLineMax),
	"index-dangling-link": "an index line links to a file that does not exist",
	"index-missing-topic": "a topic file has no line in the index",
	"frontmatter-missing": "a topic file does not start with frontmatter",
	"frontmatter-invalid": "a topic file's frontmatter does not parse",
	"frontmatter-field":   "the frontmatter lacks name, description or type, or has a bad modified",
	"type-unknown":        "the type is not user, feedback, project or reference",
	"name-duplicate":      "two topic files have the same name",
	"secret":              "a file holds what looks like a credential (an error in team/)",
	"file-long":           fmt.Sprintf("a topic file is longer than recall shows (%d lines or %d bytes)", RecallMaxLines, RecallMaxBytes),
	"file-too-large":      fmt.Sprintf("a topic file is larger than directory sync carries (%d bytes, a memory's limit)", memstore.MaxContentBytes),
	"index-missing":       "the directory has topic files but no index",
}

// Lint checks the memory directory dir, and its team directory when there
// is one, against Rules (docs/memory-directory.md, Lint), and returns the
// findings ordered by file and line. A directory that does not exist has
// no findings.
func Lint(dir string) ([]Finding, error) {
	var all []Finding
	for _, s := range scopes(dir) {
		f, err := lintScope(dir, s)
		if err != nil {
			return nil, err
		}
		all = append(all, f...)
	}
	slices.SortStableFunc(all, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return all, nil
}

// A scope is the private directory or its team directory: each has its
// own index and topic files.
type scope struct {
	prefix string // "" or "team/"
	team   bool
}

func scopes(dir string) []scope {
	out := []scope{{}}
	if fi, err := os.Lstat(filepath.Join(dir, "team")); err == nil && fi.IsDir() {
		out = append(out, scope{prefix: "team/", team: true})
	}
	return out
}

func (s scope) dir(root string) string { return filepath.Join(root, filepath.FromSlash(s.prefix)) }

func lintScope(root string, s scope) ([]Finding, error) {
	dir := s.dir(root)
	files, err := ListTopics(dir, false)
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(rule string, sev Severity, file string, line int, format string, args ...any) {
		out = append(out, Finding{Rule: rule, Severity: sev, File: s.prefix + file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	secretSeverity := SeverityWarning
	if s.team {
		secretSeverity = SeverityError
	}

	// The index.
	raw, err := os.ReadFile(filepath.Join(dir, indexName))
	haveIndex := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	linked := map[string]bool{}
	if !haveIndex && len(files) > 0 {
		add("index-missing", SeverityError, indexName, 0, "%d topic files but no %s: an agent sees none of them; run lint --fix to write it", len(files), indexName)
	}
	if haveIndex {
		text := string(raw)
		x := LoadIndex(text)
		if x.LinesCut {
			add("index-over-lines", SeverityError, indexName, 0, "%d lines: only the first %d are loaded", x.Lines, MaxIndexLines)
		} else if x.Lines > NearIndexLines {
			add("index-near-lines", SeverityWarning, indexName, 0, "%d lines, near the limit of %d", x.Lines, MaxIndexLines)
		}
		if x.SizeCut {
			add("index-over-size", SeverityError, indexName, 0, "%s (%d units): only the first %d units are loaded", FormatSize(x.Units), x.Units, MaxIndexUnits)
		} else if x.Units > NearIndexUnits {
			add("index-near-size", SeverityWarning, indexName, 0, "%d units, near the limit of %d", x.Units, MaxIndexUnits)
		}
		if _, _, ok := memstore.SplitFrontmatter(text); ok {
			add("index-frontmatter", SeverityWarning, indexName, 1, "the index has frontmatter; it is an index of the topic files, not a memory")
		}
		if kind, found := memstore.FindCredential(text); found {
			add("secret", secretSeverity, indexName, 0, "looks like it holds a credential (%s)", kind)
		}
		clean := memstore.CleanIndex(text)
		lineNos := sourceLines(text, clean)
		for i, line := range strings.Split(clean, "\n") {
			n := lineNos[i]
			trimmed := strings.TrimSpace(line)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue // blank lines and headings group the entries
			}
			if u := Units(line); u > IndexLineMax {
				add("index-line-too-long", SeverityError, indexName, n, "%d characters (limit %d): move the detail into the topic file", u, IndexLineMax)
			} else if u > IndexLineTarget {
				add("index-line-long", SeverityWarning, indexName, n, "%d characters; keep index lines under %d", u, IndexLineTarget)
			}
			l, ok := ParseIndexLine(line)
			if !ok {
				add("index-line-format", SeverityWarning, indexName, n, "not an index line: want '- [Title](file.md) — one-line hook'")
				continue
			}
			if l.Hook == "" {
				add("index-line-format", SeverityWarning, indexName, n, "no hook: add ' — ' and one line saying when %s matters", l.File)
			}
			target, inside := linkTarget(l.File)
			if !inside {
				add("index-line-format", SeverityWarning, indexName, n, "%s is not a file of this directory", l.File)
				continue
			}
			linked[target] = true
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil || !fi.Mode().IsRegular() {
				add("index-dangling-link", SeverityError, indexName, n, "%s does not exist", l.File)
			}
		}
	}

	// The topic files.
	names := map[string]string{} // lower-case name → first file with it
	for _, f := range files {
		t, err := ReadTopic(dir, f, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if haveIndex && !linked[f.Name] {
			add("index-missing-topic", SeverityWarning, f.Name, 0, "no line in %s%s links to it, so an agent will not see it", s.prefix, indexName)
		}
		if kind, found := memstore.FindCredential(t.Content); found {
			add("secret", secretSeverity, f.Name, 0, "looks like it holds a credential (%s)", kind)
		}
		if f.Size > memstore.MaxContentBytes {
			add("file-too-large", SeverityError, f.Name, 0, "%d bytes: directory sync skips files over %d bytes, a memory's limit", f.Size, memstore.MaxContentBytes)
		} else if lines := strings.Count(t.Content, "\n") + 1; f.Size > RecallMaxBytes || lines > RecallMaxLines {
			add("file-long", SeverityWarning, f.Name, 0, "%d lines, %d bytes: recall shows only the first %d lines and %d bytes; split it or move detail out", lines, f.Size, RecallMaxLines, RecallMaxBytes)
		}
		switch {
		case errors.Is(t.FrontmatterErr, ErrNoFrontmatter):
			add("frontmatter-missing", SeverityError, f.Name, 1, "no frontmatter: start the file with name, description and type between '---' lines")
			continue
		case t.FrontmatterErr != nil:
			add("frontmatter-invalid", SeverityError, f.Name, 0, "%v", t.FrontmatterErr)
			continue
		}
		fm := t.Frontmatter
		var missing []string
		for _, k := range [][2]string{{"name", fm.Name}, {"description", fm.Description}, {"type", fm.Type}} {
			if strings.TrimSpace(k[1]) == "" {
				missing = append(missing, k[0])
			}
		}
		if len(missing) > 0 {
			add("frontmatter-field", SeverityError, f.Name, 0, "the frontmatter lacks %s", strings.Join(missing, ", "))
		}
		if fm.ModifiedRaw != "" && fm.Modified.IsZero() {
			add("frontmatter-field", SeverityWarning, f.Name, 0, "modified %q is not a time like 2026-09-01T12:34:56Z", fm.ModifiedRaw)
		}
		if fm.Type != "" && !ValidType(fm.Type) {
			add("type-unknown", SeverityError, f.Name, 0, "type %q: want %s", fm.Type, strings.Join(Types, ", "))
		}
		if key := strings.ToLower(strings.TrimSpace(fm.Name)); key != "" {
			if first, dup := names[key]; dup {
				add("name-duplicate", SeverityWarning, f.Name, 0, "the name %q is also %s's: merge them or tell them apart", fm.Name, s.prefix+first)
			} else {
				names[key] = f.Name
			}
		}
	}
	return out, nil
}

// linkTarget is the directory-relative path an index link names, and
// whether it stays inside the directory (no URL, no absolute path, no
// way up).
func linkTarget(link string) (string, bool) {
	link, _, _ = strings.Cut(link, "#")
	if link == "" || strings.Contains(link, "://") || strings.HasPrefix(link, "/") || strings.HasPrefix(link, "mailto:") {
		return "", false
	}
	p := path.Clean(strings.ReplaceAll(link, "\\", "/"))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// sourceLines maps each line of clean (the cleaned index) to its 1-based
// line in raw. Cleaning removes whole lines (frontmatter, comments) and
// white space at the ends, so the lines of clean are found in raw in
// order; a line cleaning changed maps to the last line matched.
func sourceLines(raw, clean string) []int {
	rawLines := strings.Split(raw, "\n")
	cleanLines := strings.Split(clean, "\n")
	out := make([]int, len(cleanLines))
	j := 0
	for i, cl := range cleanLines {
		k := j
		for k < len(rawLines) && strings.TrimRight(rawLines[k], "\r") != cl && strings.TrimSpace(rawLines[k]) != strings.TrimSpace(cl) {
			k++
		}
		if k == len(rawLines) {
			out[i] = max(j, 1)
			continue
		}
		out[i] = k + 1
		j = k + 1
	}
	return out
}

// BuildIndex writes an index for topics: one line per topic, newest first
// (by Topic.Time, then by file name), stopping before the index would go
// over MaxIndexLines lines or MaxIndexUnits units, so that what is lost to
// the limits is the oldest memories, never the newest. Each line takes the
// memory's name and description from its frontmatter, else the title and
// hook the old index gave it, else the file's name and the first line of
// its body. It returns the index, ending with a line feed, and the topics
// left out.
func BuildIndex(topics []Topic, old map[string]IndexLine) (index string, omitted []Topic) {
	topics = slices.Clone(topics)
	slices.SortStableFunc(topics, func(a, b Topic) int {
		return cmp.Or(b.Time().Compare(a.Time()), cmp.Compare(a.Name, b.Name))
	})
	var b strings.Builder
	lines, units := 0, 0
	for i, t := range topics {
		l := IndexLine{File: t.Name, Title: t.Frontmatter.Name, Hook: t.Frontmatter.Description}
		prev, hasPrev := old[t.Name]
		if strings.TrimSpace(l.Title) == "" {
			l.Title = t.Title()
			if hasPrev {
				l.Title = prev.Title
			}
		}
		if strings.TrimSpace(l.Hook) == "" {
			l.Hook = firstLine(t.Body)
			if hasPrev && prev.Hook != "" {
				l.Hook = prev.Hook
			}
		}
		line := l.String()
		u := Units(line)
		if lines > 0 {
			u++ // the line feed before it
		}
		if lines+1 > MaxIndexLines || units+u > MaxIndexUnits {
			return b.String(), topics[i:]
		}
		b.WriteString(line)
		b.WriteByte('\n')
		lines++
		units += u
	}
	return b.String(), nil
}

// firstLine is the first line of text that is not blank or a heading
// mark, trimmed.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); t != "" {
			return t
		}
	}
	return ""
}

// A FixResult is what FixIndex did in one scope.
type FixResult struct {
	// Index is the path of the index, relative to the directory.
	Index string `json:"index"`
	// Entries is the number of lines written.
	Entries int `json:"entries"`
	// Omitted lists the topic files left out by the limits, newest first.
	Omitted []string `json:"omitted,omitempty"`
	// Changed is false when the index already had this content.
	Changed bool `json:"changed"`
}

// FixIndex rebuilds the index of dir, and of its team directory when
// there is one, from the topic files (see BuildIndex), replacing each
// atomically (a new file renamed over the old one, with the old one's
// permissions less any execute bit, 0600 for a new one). An index is written only when its
// content changes; a scope with neither topic files nor an index is left
// alone.
func FixIndex(dir string) ([]FixResult, error) {
	var out []FixResult
	for _, s := range scopes(dir) {
		sdir := s.dir(dir)
		files, err := ListTopics(sdir, false)
		if err != nil {
			return nil, err
		}
		topics := make([]Topic, 0, len(files))
		for _, f := range files {
			t, err := ReadTopic(sdir, f, 0)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			topics = append(topics, t)
		}
		ipath := filepath.Join(sdir, indexName)
		raw, err := os.ReadFile(ipath)
		if errors.Is(err, fs.ErrNotExist) {
			if len(topics) == 0 {
				continue
			}
			raw, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		old := map[string]IndexLine{}
		for _, line := range strings.Split(memstore.CleanIndex(string(raw)), "\n") {
			if l, ok := ParseIndexLine(line); ok {
				if target, inside := linkTarget(l.File); inside {
					old[target] = l
				}
			}
		}
		index, omitted := BuildIndex(topics, old)
		r := FixResult{Index: s.prefix + indexName, Entries: len(topics) - len(omitted)}
		for _, t := range omitted {
			r.Omitted = append(r.Omitted, s.prefix+t.Name)
		}
		if string(raw) != index {
			if err := private.WriteFile(ipath, []byte(index), private.KeepMode()); err != nil {
				return nil, err
			}
			r.Changed = true
		}
		out = append(out, r)
	}
	return out, nil
}

package memdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
)

// The four types of memory (docs/memory-directory.md, Topic files).
const (
	TypeUser      = "user"      // who the user is: role, expertise, preferences
	TypeFeedback  = "feedback"  // corrections and confirmed approaches, with the reason
	TypeProject   = "project"   // work, goals and deadlines the repository does not record
	TypeReference = "reference" // pointers to external systems
)

// Types lists the memory types, in the order the guidance presents them.
var Types = []string{TypeUser, TypeFeedback, TypeProject, TypeReference}

// ValidType reports whether t is one of Types.
func ValidType(t string) bool { return slices.Contains(Types, t) }

// Frontmatter is what memstore reads from a topic file's frontmatter. Both
// shapes are read (docs/memory-directory.md, Topic files): type and
// modified at the top level (older files) or under metadata: (newer ones,
// which win when both are there).
type Frontmatter struct {
	Name        string
	Description string
	Type        string
	// Modified is when the memory was last changed; zero when the
	// frontmatter does not say (or says it in a form that does not parse,
	// which ModifiedRaw then holds).
	Modified    time.Time
	ModifiedRaw string
	// Fields holds every scalar read, nested keys joined with a dot
	// ("metadata.type").
	Fields map[string]string
}

// ErrNoFrontmatter is returned by ParseFrontmatter for a text that does
// not start with a frontmatter block.
var ErrNoFrontmatter = fmt.Errorf("no frontmatter: the file must start with a line '---'")

// ParseFrontmatter reads the frontmatter at the start of a topic file and
// returns it with the body that follows. A text without frontmatter gives
// ErrNoFrontmatter and the whole text as body; frontmatter that does not
// parse gives an error naming the line, and the body after it.
//
// It reads the subset of YAML that memory files use: "key: value" pairs,
// one level of nested maps, plain, quoted and block (| or >) scalars, and
// comments; lists are skipped.
func ParseFrontmatter(text string) (Frontmatter, string, error) {
	block, body, ok := memstore.SplitFrontmatter(text)
	if !ok {
		return Frontmatter{}, text, ErrNoFrontmatter
	}
	fields, err := parseYAMLSubset(block)
	if err != nil {
		return Frontmatter{}, body, err
	}
	fm := Frontmatter{
		Name:        fields["name"],
		Description: fields["description"],
		Type:        firstNonEmpty(fields["metadata.type"], fields["type"]),
		ModifiedRaw: firstNonEmpty(fields["metadata.modified"], fields["modified"]),
		Fields:      fields,
	}
	if fm.ModifiedRaw != "" {
		if t, ok := parseTime(fm.ModifiedRaw); ok {
			fm.Modified = t
		}
	}
	return fm, body, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseTime reads a timestamp as frontmatter writes it: RFC 3339 with or
// without fractional seconds, or a bare date (midnight UTC).
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseYAMLSubset reads the frontmatter block; see ParseFrontmatter.
func parseYAMLSubset(block string) (map[string]string, error) {
	fields := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(block, "\r\n", "\n"), "\n")
	parent, parentIndent := "", -1 // the open nested map
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if strings.HasPrefix(line[indent:], "\t") {
			return nil, fmt.Errorf("frontmatter line %d: tabs cannot indent YAML", i+2)
		}
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if indent == 0 && parent == "" {
				return nil, fmt.Errorf("frontmatter line %d: a list item outside a key", i+2)
			}
			continue // list items are not read
		}
		key, value, found := strings.Cut(trimmed, ":")
		key = strings.TrimSpace(key)
		if !found || key == "" || (value != "" && value[0] != ' ' && value[0] != '\t') {
			return nil, fmt.Errorf("frontmatter line %d: expected 'key: value'", i+2)
		}
		key = unquoteKey(key)
		value = strings.TrimSpace(value)
		if indent == 0 {
			parent, parentIndent = "", -1
		} else if parent == "" {
			return nil, fmt.Errorf("frontmatter line %d: unexpected indentation", i+2)
		} else if parentIndent < 0 {
			parentIndent = indent
		}
		name := key
		if indent > 0 {
			name = parent + "." + key
		}
		// Lines more indented than this one continue its value.
		var more []string
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			more = append(more, next)
			i++
		}
		switch {
		case value == "" && indent == 0 && hasKeys(more):
			// A nested map: its lines are read in turn.
			i -= len(more)
			parent, parentIndent = key, -1
		case strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">"):
			fields[name] = blockScalar(value[0], more)
		case strings.HasPrefix(value, `"`) || strings.HasPrefix(value, "'"):
			v, err := quotedScalar(strings.Join(append([]string{value}, trimAll(more)...), " "))
			if err != nil {
				return nil, fmt.Errorf("frontmatter line %d: %v", i+2-len(more), err)
			}
			fields[name] = v
		default:
			if hasListItems(more) {
				continue
			}
			parts := append([]string{stripComment(value)}, trimAll(more)...)
			fields[name] = strings.TrimSpace(strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " "))
		}
	}
	return fields, nil
}

func unquoteKey(k string) string {
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		return k[1 : len(k)-1]
	}
	return k
}

// hasKeys reports whether the continuation lines are a nested map.
func hasKeys(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return !strings.HasPrefix(t, "-") && strings.Contains(t, ":")
	}
	return false
}

func hasListItems(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return strings.HasPrefix(t, "- ") || t == "-"
		}
	}
	return false
}

func trimAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// stripComment removes a trailing " # comment" from a plain scalar.
func stripComment(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// blockScalar reads a literal (|) or folded (>) block scalar's lines.
func blockScalar(style byte, lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	var out []string
	for _, l := range lines {
		if len(l) >= indent && indent >= 0 {
			l = l[indent:]
		}
		out = append(out, strings.TrimRight(l, " \r"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if style == '|' {
		return strings.Join(out, "\n")
	}
	// Folded: lines of a paragraph join with spaces, blank lines are breaks.
	var b strings.Builder
	for i, l := range out {
		switch {
		case l == "":
			b.WriteByte('\n')
		case i > 0 && out[i-1] != "":
			b.WriteByte(' ')
			b.WriteString(l)
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}

// quotedScalar reads a single- or double-quoted scalar; text after the
// closing quote may only be a comment.
func quotedScalar(v string) (string, error) {
	q := v[0]
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == q && q == '\'' && i+1 < len(v) && v[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("text after the closing quote")
			}
			return b.String(), nil
		case c == '\\' && q == '"' && i+1 < len(v):
			r, _, tail, err := strconv.UnquoteChar(v[i:], '"')
			if err != nil {
				return "", fmt.Errorf("bad escape in a quoted value")
			}
			b.WriteRune(r)
			i = len(v) - len(tail) - 1
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("the quoted value is not closed")
}

// A TopicFile is a memory file of a directory.
type TopicFile struct {
	// Name is the file's path relative to the directory, with slashes
	// ("deploy.md", "team/style.md").
	Name    string
	Size    int64
	ModTime time.Time
}

// ListTopics lists the topic files of a memory directory: its regular
// *.md files at any depth, except the indexes (MEMORY.md), the daily logs
// (logs/), hidden files and directories, and, when withTeam is false, the
// team directory (team/). Symbolic links are not followed. A missing
// directory has no topic files.
func ListTopics(dir string, withTeam bool) ([]TopicFile, error) {
	var out []TopicFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if localfile.Hidden(name) || rel == "logs" || (rel == "team" && !withTeam) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || localfile.Hidden(name) || !strings.HasSuffix(name, ".md") || name == indexName {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		out = append(out, TopicFile{Name: rel, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// A Topic is a topic file with its content read.
type Topic struct {
	TopicFile
	Frontmatter Frontmatter
	// FrontmatterErr is nil, ErrNoFrontmatter or why the frontmatter does
	// not parse.
	FrontmatterErr error
	Content        string // the whole file
	Body           string // the content after the frontmatter
}

// Time is when the memory was last changed: the frontmatter's modified
// when it says, the file's modification time otherwise.
func (t Topic) Time() time.Time {
	if !t.Frontmatter.Modified.IsZero() {
		return t.Frontmatter.Modified
	}
	return t.ModTime
}

// Title is the memory's name, or the file's name without .md.
func (t Topic) Title() string {
	if n := strings.TrimSpace(t.Frontmatter.Name); n != "" {
		return n
	}
	return strings.TrimSuffix(path.Base(t.Name), ".md")
}

// ReadTopic reads the topic file f of the directory dir, at most limit
// bytes of it when limit > 0.
func ReadTopic(dir string, f TopicFile, limit int64) (Topic, error) {
	file, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Name)))
	if err != nil {
		return Topic{}, err
	}
	defer file.Close()
	var r io.Reader = file
	if limit > 0 {
		r = io.LimitReader(file, limit)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return Topic{}, err
	}
	t := Topic{TopicFile: f, Content: string(b)}
	t.Frontmatter, t.Body, t.FrontmatterErr = ParseFrontmatter(t.Content)
	return t, nil
}

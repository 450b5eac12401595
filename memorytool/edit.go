package memorytool

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memstore/memstore/internal/tooltext"
)

// The text side of the commands, apart from any storage, so that every
// backend formats and edits the same way.

// renderFile is view's output for a file whose decoded content is content.
// maxChars > 0 cuts the output at a line boundary and appends a note naming
// the view_range to ask for next.
func renderFile(p, content string, viewRange []int, maxChars int) (string, error) {
	lines := strings.Split(content, "\n")
	if len(lines) > maxLines {
		return "", errTooManyLines(p, len(lines))
	}
	shown, first, end := lines, 1, -1
	if len(viewRange) == 2 {
		shown, first = selectRange(lines, viewRange[0], viewRange[1])
		end = viewRange[1]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, fileHeader, p)
	if maxChars <= 0 {
		// Each line gets its number, a TAB and an LF: size the output once.
		size := len(shown) * (tooltext.LineNumberWidth + 2)
		for _, line := range shown {
			size += len(line)
		}
		sb.Grow(size)
		tooltext.AppendNumbered(&sb, shown, first)
		return sb.String(), nil
	}
	return cutView(&sb, shown, first, len(lines), end, maxChars), nil
}

// listItem is one line of a directory view: a size and a path relative to
// the viewed directory, ending in "/" for a directory.
type listItem struct {
	size int64
	rel  string
}

// renderListing is view's output for the directory p of size size whose
// entries, in listing order, are items. maxChars > 0 cuts the list at an
// entry boundary once the output would exceed that many characters, with a
// note saying how many entries were left out.
func renderListing(p string, size int64, items []listItem, maxChars int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, dirHeader, p)
	sb.WriteString(formatSize(size))
	sb.WriteByte('\t')
	sb.WriteString(p)
	used := utf8.RuneCountInString(sb.String())
	for i, it := range items {
		line := "\n" + formatSize(it.size) + "\t" + p + "/" + it.rel
		if n := utf8.RuneCountInString(line); maxChars > 0 && used+n > maxChars {
			fmt.Fprintf(&sb, "\n\n[Listing cut at the %d-character view limit: %d more entries not shown. View a subdirectory to see its entries.]",
				maxChars, len(items)-i)
			break
		} else {
			used += n
		}
		sb.WriteString(line)
	}
	return sb.String()
}

// cutView appends numbered lines to sb while the output stays within
// maxChars characters (code points), then a note telling the model how to
// read on. At least one line is shown; a single line longer than the limit
// is cut inside.
func cutView(sb *strings.Builder, shown []string, first, total, end, maxChars int) string {
	used := utf8.RuneCountInString(sb.String())
	var line strings.Builder
	for i, text := range shown {
		line.Reset()
		if i > 0 {
			line.WriteByte('\n')
		}
		tooltext.AppendNumbered(&line, []string{text}, first+i)
		n := utf8.RuneCountInString(line.String())
		if used+n <= maxChars {
			sb.WriteString(line.String())
			used += n
			continue
		}
		last := first + i - 1
		if i == 0 {
			// Not even one line fits: show the start of it.
			sb.WriteString(cutRunes(line.String(), max(maxChars-used, 0)))
			fmt.Fprintf(sb, "\n\n[Line %d is longer than the %d-character view limit and was cut. Continue with view_range [%d, %d].]",
				first, maxChars, first+1, end)
			return sb.String()
		}
		fmt.Fprintf(sb, "\n\n[Showing lines %d-%d of %d; the rest was cut at the %d-character view limit. Continue with view_range [%d, %d].]",
			first, last, total, maxChars, last+1, end)
		return sb.String()
	}
	return sb.String()
}

func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// replace is str_replace on decoded content: oldStr must occur exactly once
// in the whole text (memstore matches the whole text where the reference
// matches line by line; docs/memory-tool.md, Whole-text str_replace). It
// returns the new content and the result text, a snippet of the new
// content around the change.
func replace(p, content, oldStr, newStr string) (string, string, error) {
	var at, endLine int
	if oldStr == "" {
		// As in the reference, an empty old_str matches every line: it is
		// unique only in a one-line file, where new_str is prepended.
		n := strings.Count(content, "\n") + 1
		if n > 1 {
			lines := make([]int, n)
			for i := range lines {
				lines[i] = i + 1
			}
			return "", "", errManyMatches(oldStr, lines)
		}
	} else {
		found := tooltext.Occurrences(content, oldStr)
		switch len(found) {
		case 0:
			return "", "", errNoMatch(p, oldStr)
		case 1:
			at = found[0]
		default:
			lines := make([]int, len(found))
			line, prev := 0, 0
			for i, off := range found {
				line += strings.Count(content[prev:off], "\n")
				prev = off
				lines[i] = line + 1
			}
			return "", "", errManyMatches(oldStr, lines)
		}
	}
	updated := content[:at] + newStr + content[at+len(oldStr):]
	start := tooltext.LineIndex(content, at)
	endLine = start + strings.Count(newStr, "\n")
	newLines := strings.Split(updated, "\n")
	from, to := max(0, start-2), min(len(newLines), endLine+3)
	var sb strings.Builder
	sb.WriteString(snippetHeader)
	tooltext.AppendNumbered(&sb, newLines[from:to], from+1)
	return updated, sb.String(), nil
}

// insert is the insert command on decoded content: text, less one trailing
// LF, becomes line number line (0-based) of the LF-split content.
func insert(content string, line int, text string) (string, error) {
	count := strings.Count(content, "\n") + 1
	if line < 0 || line > count {
		return "", errInsertLine(line, count)
	}
	text = strings.TrimSuffix(text, "\n")
	if line == count {
		// After the last line: the line join puts an LF before it, none after.
		return content + "\n" + text, nil
	}
	off := 0 // where line number `line` starts
	for range line {
		off += strings.IndexByte(content[off:], '\n') + 1
	}
	return content[:off] + text + "\n" + content[off:], nil
}

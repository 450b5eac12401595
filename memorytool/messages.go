package memorytool

import (
	"fmt"
	"strconv"
	"strings"
)

// The texts the model reads. Each equals the reference implementation's
// message (@anthropic-ai/sdk 1.14.0, BetaLocalFilesystemMemoryTool) unless its
// comment says otherwise. Execute adds the "Error: " prefix.

// Error is a failure meant for the model: its message becomes the
// tool_result text after "Error: ". Handlers return it for every expected
// failure; Execute turns any other error into a generic message so that host
// details never reach the model.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(format string, args ...any) error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

func errBadPrefix(p string) error {
	return errorf("Path must start with /memories, got: %s", p)
}

func errEscape(p string) error {
	return errorf("Path %s would escape /memories directory", p)
}

func errHidden(p string) error {
	return errorf("The path %s is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot", p)
}

func errSymlinkEscape() error {
	return errorf("Path would escape /memories directory via symlink")
}

// errNotFound is the missing-path message of view, create, str_replace and
// insert.
func errNotFound(p string) error {
	return errorf("The path %s does not exist. Please provide a valid path.", p)
}

// errNoSuchPath is the shorter missing-path message of delete and rename.
func errNoSuchPath(p string) error {
	return errorf("The path %s does not exist", p)
}

func errTooManyLines(p string, n int) error {
	return errorf("File %s has too many lines (%d). Maximum is 999,999 lines.", p, n)
}

func errUnsupportedType(p string) error {
	return errorf("Unsupported file type for %s", p)
}

func errExists(p string) error {
	return errorf("File %s already exists", p)
}

func errNotAFile(p string) error {
	return errorf("The path %s is not a file.", p)
}

func errNoMatch(p, old string) error {
	return errorf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", old, p)
}

// errManyMatches lists 1-based line numbers. memstore lists one entry per
// occurrence (a line with two occurrences appears twice); the reference,
// which matches line by line, lists each line once.
func errManyMatches(old string, lines []int) error {
	nums := make([]string, len(lines))
	for i, n := range lines {
		nums[i] = strconv.Itoa(n)
	}
	return errorf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique", old, strings.Join(nums, ", "))
}

func errInsertLine(line, count int) error {
	return errorf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, count)
}

func errDeleteRoot() error { return errorf("Cannot delete the /memories directory itself") }

func errRenameRoot() error { return errorf("Cannot rename the /memories directory itself") }

func errDestinationExists(p string) error {
	return errorf("The destination %s already exists", p)
}

func errNotImplemented(command string) error {
	return errorf("%s not implemented", command)
}

func errVanished(p string) error {
	return errorf("The file %s no longer exists (may have been deleted or renamed concurrently).", p)
}

// The messages below replace raw operating-system errors, which in the
// reference carry absolute host paths (docs/memory-tool.md, No host paths).

func errTooLong(p string) error { return errorf("The path %s is too long", p) }

func errLoop(p string) error {
	return errorf("The path %s cannot be resolved (symbolic link loop)", p)
}

func errIntoItself(p string) error { return errorf("Cannot move %s into itself", p) }

func errNUL(p string) error {
	return errorf("The path %s contains a NUL byte", strings.ReplaceAll(p, "\x00", `\x00`))
}

// errPercent refuses percent-encoded traversal characters
// (docs/memory-tool.md, Encoded traversal); the reference takes them as
// literal file names.
func errPercent(p string) error { return errEscape(p) }

// errInvalidInput reports malformed tool input (docs/memory-tool.md,
// Malformed input); the reference throws raw JavaScript TypeErrors or
// writes half a file.
func errInvalidInput(command, field, problem string) error {
	return errorf("Invalid input for %s: %s %s", command, field, problem)
}

// Success texts.

func okCreated(p string) string { return "File created successfully at: " + p }

func okInserted(p string) string { return "The file " + p + " has been edited." }

func okDeleted(p string) string { return "Successfully deleted " + p }

func okRenamed(oldPath, newPath string) string {
	return "Successfully renamed " + oldPath + " to " + newPath
}

const (
	fileHeader    = "Here's the content of %s with line numbers:\n"
	dirHeader     = "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n"
	snippetHeader = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
)

// Messages of memstore's optional limits.

func errTooBig(p string, size, limit int64) error {
	return errorf("The file %s would be %d bytes, over the %d-byte limit for a memory file. Keep memory files short: split this one or remove what is no longer needed.", p, size, limit)
}

func errSecret(p, kind string) error {
	return errorf("Refused to write %s: the text looks like it contains a credential (%s). Memory must not hold credentials; leave it out and try again.", p, kind)
}

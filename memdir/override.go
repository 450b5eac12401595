package memdir

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// ValidateOverride checks a memory directory chosen by an override and
// returns it cleaned, NFC-normalised and ending with one separator, or an
// error saying why it is rejected (docs/memory-directory.md, Overrides).
// fromSettings is true for autoMemoryDirectory in a settings file, where
// "~/" (and "~\") stand for home; the environment override never expands
// "~", so "~/mem" there is a relative path.
//
// A value is rejected when it is empty; from settings, when the part after
// "~/" cleans to "." or ".." (the home directory or its parent); and when,
// cleaned and without trailing separators, it contains a NUL byte, is not
// absolute, is shorter than 3 UTF-16 units (a root or near-root
// directory), is a drive root ("C:") or a UNC path ("\\" or "//" prefix).
// These are Claude Code's rules, so both accept the same values. On POSIX
// systems cleaning turns a leading "//" into "/", so there "//srv/x" is
// the absolute path "/srv/x/", as it is for Claude Code.
func ValidateOverride(value string, fromSettings bool, home string) (string, error) {
	if value == "" {
		return "", errors.New("empty")
	}
	candidate := value
	if fromSettings {
		if value == "~" {
			return "", errors.New("points at the home directory itself")
		}
		if strings.HasPrefix(value, "~/") || strings.HasPrefix(value, `~\`) {
			rest := value[2:]
			switch filepath.Clean(rest) { // Clean("") is "."
			case ".":
				return "", errors.New("points at the home directory itself")
			case "..":
				return "", errors.New("points above the home directory")
			}
			if home == "" {
				return "", errors.New("starts with ~/ but the home directory is unknown")
			}
			candidate = filepath.Join(home, rest)
		}
	}
	n := strings.TrimRight(filepath.Clean(candidate), `/\`)
	if n != "" {
		// Trimming a "\" may leave a final "." ("~/.\" is the home
		// directory with ".\" after it): clean again.
		n = filepath.Clean(n)
	}
	switch {
	case fromSettings && home != "" && n == filepath.Clean(home):
		return "", errors.New("points at the home directory itself")
	case strings.ContainsRune(n, 0):
		return "", errors.New("contains a NUL byte")
	case !filepath.IsAbs(n):
		if fromSettings {
			return "", errors.New("not an absolute path (start it with / or ~/)")
		}
		return "", errors.New("not an absolute path (~ is not expanded here)")
	case Units(n) < 3:
		return "", errors.New("a root or near-root directory (shorter than 3 characters)")
	case len(n) == 2 && n[1] == ':' && 'a' <= n[0]|0x20 && n[0]|0x20 <= 'z':
		return "", errors.New("a drive root")
	case strings.HasPrefix(n, `\\`) || strings.HasPrefix(n, "//"):
		return "", errors.New("a UNC (network) path")
	}
	return norm.NFC.String(n + string(filepath.Separator)), nil
}

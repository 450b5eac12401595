package memstore

import (
	"errors"
	"fmt"
	"strings"
)

// The hosted API's own words for its refusals. Clients of the hosted API,
// Claude Code's team memory among them, match these messages word for
// word: anything else is an unknown failure to them (Claude Code pauses
// the whole store after a few). So a refusal that the hosted API makes
// starts with, or is, its message, and memstore's more exact account goes
// in Error.Detail.
const (
	// ArchivedMessage begins every refusal of a write to an archived store
	// (ErrArchived, ErrStoreArchived).
	ArchivedMessage = "cannot modify archived resource"
	// MemoryLimitMessage is the refusal of a memory beyond a store's cap
	// (Limits.MemoriesPerStore).
	MemoryLimitMessage = "memory store has reached its memory limit"
	// CredentialMessage is the refusal of content that holds a
	// credential (ContentRules).
	CredentialMessage = "memory content appears to contain a credential or API key; remove it before writing. If the credential is real, rotate it."
	// IndexCapMessage is the refusal of a store's MEMORY.md that the
	// prompt-index cap would cut (ContentRules).
	IndexCapMessage = "MEMORY.md content exceeds the prompt-index cap"
)

// The hosted API's wording of the limits of input (validate.go), each
// with its number.
func contentTooLarge(limit int) string { return fmt.Sprintf("content must be at most %d bytes", limit) }
func pathTooLong(limit int) string     { return fmt.Sprintf("path must be at most %d bytes", limit) }
func pathTooDeep(limit int) string {
	return fmt.Sprintf("path must be at most %d segments deep", limit)
}

const (
	pathDotSegment  = "path must not contain . or .. segments"
	pathControlChar = "path must not contain control or format characters"
	pathNotNFC      = "path must be NFC-normalized"
)

// refusal is an EInvalid error in the hosted API's words, with memstore's
// detail.
func refusal(hosted, format string, args ...any) *Error {
	return &Error{Code: EInvalid, Message: hosted, Detail: fmt.Sprintf(format, args...)}
}

// IsArchived reports whether err is the refusal of a write to an archived
// store, so that a surface may explain it in its own words.
func IsArchived(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == EInvalid && strings.HasPrefix(e.Message, ArchivedMessage)
}

// ContentRules are the hosted API's two rules on what a memory may hold,
// which every Core applies to every write, from every surface. Both are
// on by default (the zero value); memstore serve turns either off with a
// flag (docs/security.md).
type ContentRules struct {
	// AllowCredentials lets content that looks like it holds a
	// credential (FindCredential) be written (--refuse-credentials=false).
	AllowCredentials bool
	// AllowOversizedIndex lets a store's /MEMORY.md (IndexPath) be
	// written beyond the prompt-index cap, MaxIndexLines lines or
	// MaxIndexUnits UTF-16 units of its cleaned text
	// (--refuse-oversized-index=false).
	AllowOversizedIndex bool
}

// WithContentRules sets which content rules a Core applies.
func WithContentRules(r ContentRules) CoreOption {
	return func(co *Core) { co.rules = r }
}

// checkCredentials refuses content that holds a credential, naming its
// kind, never its text.
func (r ContentRules) checkCredentials(content string) error {
	if r.AllowCredentials {
		return nil
	}
	if kind, found := FindCredential(content); found {
		return refusal(CredentialMessage, "the content holds what looks like a credential (%s); the server's operator may allow such content (memstore serve --refuse-credentials=false)", kind)
	}
	return nil
}

// checkIndex refuses content at path that the prompt-index cap would cut,
// when path is the store's index.
func (r ContentRules) checkIndex(path, content string) error {
	if r.AllowOversizedIndex || path != IndexPath {
		return nil
	}
	x := MeasureIndex(content)
	if !x.Over() {
		return nil
	}
	return refusal(IndexCapMessage, "%s is %d lines and %d UTF-16 units without its frontmatter and comments; an agent loads at most %d lines and %d units of it, so keep one short line per topic and move detail into topic files; the server's operator may allow a larger index (memstore serve --refuse-oversized-index=false)",
		IndexPath, x.Lines, x.Units, MaxIndexLines, MaxIndexUnits)
}

// checkContent applies the content rules to a memory to be created with
// content at path.
func (co *Core) checkContent(path, content string) error {
	if err := co.rules.checkCredentials(content); err != nil {
		return err
	}
	return co.rules.checkIndex(path, content)
}

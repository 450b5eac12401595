package memstore

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the memory stores API.
const (
	MaxPathBytes        = 1024
	MaxPathSegments     = 20
	MaxContentBytes     = 102_400
	MaxStoreName        = 255 // characters
	MaxStoreDescription = 1024
	MaxMetadataPairs    = 16
	MaxMetadataKey      = 64
	MaxMetadataValue    = 512
)

// ValidatePath checks a memory path: it starts with "/", has 1-20
// non-empty segments and at most 1,024 bytes, no "." or ".." segment, no
// control or format characters nor U+2028/U+2029, and is valid UTF-8 in
// NFC (never normalised for the caller: a path is stored as given). A
// violation is EInvalid, in the hosted API's words where it has some
// (hosted.go).
func ValidatePath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/") || len(p) < 2:
		return Errorf(EInvalid, "path %q must start with / and name a memory", p)
	case len(p) > MaxPathBytes:
		return refusal(pathTooLong(MaxPathBytes), "path is %d bytes long; the limit is %d", len(p), MaxPathBytes)
	case !utf8.ValidString(p):
		return Errorf(EInvalid, "path %q is not valid UTF-8", p)
	}
	segments := strings.Split(p[1:], "/")
	if len(segments) > MaxPathSegments {
		return refusal(pathTooDeep(MaxPathSegments), "path %q has %d segments; the limit is %d", p, len(segments), MaxPathSegments)
	}
	for _, s := range segments {
		switch s {
		case "":
			return Errorf(EInvalid, "path %q has an empty segment (a trailing or doubled /)", p)
		case ".", "..":
			return refusal(pathDotSegment, "path %q has a %q segment", p, s)
		}
	}
	for _, r := range p {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return refusal(pathControlChar, "path %q contains the control or format character %U", p, r)
		}
	}
	if !norm.NFC.IsNormalString(p) {
		return refusal(pathNotNFC, "path %q is not in Unicode NFC; send it normalised", p)
	}
	return nil
}

// PathsOverlap reports whether two memory paths cannot coexist in a store:
// they are equal, or one is an ancestor of the other.
func PathsOverlap(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+"/")
}

// ValidateContent checks memory content: valid UTF-8, at most 102,400
// bytes (EInvalid, in the hosted API's words). Content is stored byte for
// byte, never normalised.
func ValidateContent(c string) error {
	switch {
	case len(c) > MaxContentBytes:
		return refusal(contentTooLarge(MaxContentBytes), "content is %d bytes; the limit is %d", len(c), MaxContentBytes)
	case !utf8.ValidString(c):
		return Errorf(EInvalid, "content is not valid UTF-8")
	}
	return nil
}

// ValidatePathPrefix checks a list's path prefix: "" or text
// (ValidateText) that starts with "/" (see MemoryFilter.PathPrefix for
// the meaning of one that does not end with "/"), at most MaxPathBytes
// long, since no path is longer: so that the work a prefix costs is
// bounded.
func ValidatePathPrefix(p string) error {
	if len(p) > MaxPathBytes {
		return Errorf(EInvalid, "path_prefix is %d bytes long; the limit is %d", len(p), MaxPathBytes)
	}
	if err := ValidateText("path_prefix", p); err != nil {
		return err
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		return Errorf(EInvalid, "path_prefix %q must start with /", p)
	}
	return nil
}

// ValidateMemoryFilter checks a list of memories: its path prefix, its
// page size (see PageSize) and a depth that is not negative.
func ValidateMemoryFilter(f MemoryFilter) error {
	if err := ValidatePathPrefix(f.PathPrefix); err != nil {
		return err
	}
	if _, err := PageSize(f.Limit, f.Full); err != nil {
		return err
	}
	if f.Depth < 0 {
		return Errorf(EInvalid, "depth %d must not be negative", f.Depth)
	}
	return nil
}

// ValidateVersionFilter checks a list of versions: its page size, the IDs
// it filters by and the operation, when one is asked for.
func ValidateVersionFilter(f VersionFilter) error {
	if _, err := PageSize(f.Limit, f.Full); err != nil {
		return err
	}
	if err := validateIDs("memory_id", f.MemoryID, "session_id", f.SessionID, "api_key_id", f.APIKeyID,
		"service_account_id", f.ServiceAccountID); err != nil {
		return err
	}
	switch f.Operation {
	case "", OpCreated, OpModified, OpDeleted:
		return nil
	}
	return Errorf(EInvalid, "operation %q must be created, modified or deleted", f.Operation)
}

// ValidateStoreName checks a store name: 1-255 characters, no control
// characters.
func ValidateStoreName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return Errorf(EInvalid, "name is required")
	case n > MaxStoreName:
		return Errorf(EInvalid, "name is %d characters; the limit is %d", n, MaxStoreName)
	case !utf8.ValidString(name):
		return Errorf(EInvalid, "name is not valid UTF-8")
	case strings.IndexFunc(name, func(r rune) bool { return unicode.Is(unicode.Cc, r) }) >= 0:
		return Errorf(EInvalid, "name must not contain control characters")
	}
	return nil
}

// ValidateStoreDescription checks a description: at most 1,024 characters.
func ValidateStoreDescription(d string) error {
	if n := utf8.RuneCountInString(d); n > MaxStoreDescription {
		return Errorf(EInvalid, "description is %d characters; the limit is %d", n, MaxStoreDescription)
	}
	if !utf8.ValidString(d) {
		return Errorf(EInvalid, "description is not valid UTF-8")
	}
	return nil
}

// validateMetadataPatch checks each pair of a metadata merge patch (a
// removal as a pair with an empty value): one pair at a time, since a
// patch may name more than MaxMetadataPairs keys when it also removes
// some. What the patch makes is checked where it is applied.
func validateMetadataPatch(patch map[string]*string) error {
	for k, v := range patch {
		if v == nil { // a removal: its key alone
			if err := validateMetadataKey(k); err != nil {
				return err
			}
			continue
		}
		if err := ValidateMetadata(map[string]string{k: *v}); err != nil {
			return err
		}
	}
	return nil
}

// ValidateMetadata checks the metadata of a store or a session: at most
// 16 pairs, keys of 1-64 characters, values of at most 512, all of them
// text (ValidateText), and the reserved ConversationKey "true" or
// "false".
func ValidateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataPairs {
		return Errorf(EInvalid, "metadata has %d pairs; the limit is %d", len(m), MaxMetadataPairs)
	}
	for k, v := range m {
		if err := validateMetadataKey(k); err != nil {
			return err
		}
		if err := ValidateText("metadata value of "+strconv.Quote(k), v); err != nil {
			return err
		}
		if n := utf8.RuneCountInString(v); n > MaxMetadataValue {
			return Errorf(EInvalid, "metadata value of %q is %d characters; the limit is %d", k, n, MaxMetadataValue)
		}
		if err := validateConversationKey(k, v); err != nil {
			return err
		}
	}
	return nil
}

// validateMetadataKey checks a key of metadata: text of 1-64 characters.
func validateMetadataKey(k string) error {
	if err := ValidateText("metadata key "+strconv.Quote(shortName(k)), k); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(k); n == 0 || n > MaxMetadataKey {
		return Errorf(EInvalid, "metadata key %q must be 1 to %d characters", k, MaxMetadataKey)
	}
	return nil
}

// Text that a backend keeps as text, or looks records up by, must be
// text to every backend: PostgreSQL's text refuses NUL characters and
// invalid UTF-8, and its JSON functions the escape \u0000 and unpaired
// surrogates, where SQLite takes them all. So that both answer alike,
// the core refuses such input before any backend sees it: every ID,
// filter and name (ValidateText, ValidateID) and the kept fields of
// sessions (ValidateJSONText). Text a backend keeps byte for byte
// (memory content, descriptions of stores, titles and instructions of
// sessions) may hold NUL, and so may a search's text, which searches it
// as a space. Text memstore keeps from outside that no caller chose, such
// as a webhook receiver's answer, is made storable instead
// (StorableText).

// ValidateText checks text given for field: valid UTF-8 without NUL
// characters (EInvalid naming the field).
func ValidateText(field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(EInvalid, "%s is not valid UTF-8; send text", field)
	case strings.IndexByte(s, 0) >= 0:
		return Errorf(EInvalid, "%s holds a NUL character, which memstore does not accept; remove it", field)
	}
	return nil
}

// ValidateJSONText checks the JSON text of field, already valid JSON, for
// what a backend could not read back as text: invalid UTF-8, the escape
// \u0000 (NUL), or a surrogate escape that is not half of a pair
// (EInvalid naming the field). memstore refuses them rather than change
// what it keeps as sent.
func ValidateJSONText(field string, b []byte) error {
	if !utf8.Valid(b) {
		return Errorf(EInvalid, "%s is not valid UTF-8; send text", field)
	}
	unpaired := Errorf(EInvalid, "%s holds a \\u escape of half a surrogate pair, which is no character; send the character itself", field)
	inString, high := false, false // high: the last escape was a pair's first half
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		if c != '\\' || i+1 == len(b) || b[i+1] != 'u' || i+5 >= len(b) {
			if high {
				return unpaired
			}
			switch c {
			case '"':
				inString = false
			case '\\':
				i++ // the escaped character, which may be a quote
			}
			continue
		}
		r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 16) // valid JSON: four hex digits
		i += 5
		switch {
		case r == 0:
			return Errorf(EInvalid, "%s holds the escape \\u0000, a NUL character, which memstore does not accept; remove it", field)
		case r >= 0xD800 && r < 0xDC00:
			if high {
				return unpaired
			}
			high = true
		case r >= 0xDC00 && r < 0xE000:
			if !high {
				return unpaired
			}
			high = false
		case high:
			return unpaired
		}
	}
	return nil
}

// StorableText is text from outside that no caller chose (a webhook
// receiver's answer, a remote error) as every backend can keep it: its
// NUL characters removed, invalid UTF-8 replaced with U+FFFD, and cut, at
// a character, to at most max bytes.
func StorableText(s string, max int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// MaxJSONDepth bounds how deeply any JSON value given to memstore may
// nest: a request body's field, or a field a session keeps as sent.
// Answers that repeat such a value must stay readable by every JSON
// parser, and common ones give up far sooner than encoding/json's 10,000.
const MaxJSONDepth = 32

// JSONDepth is the deepest nesting of arrays and objects in the JSON text
// b: 0 for a scalar, 1 for a flat array or object. It only counts
// brackets outside strings, so it is linear in len(b) and needs no valid
// JSON: a decoder reports what else is wrong.
func JSONDepth(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++ // the escaped character, which may be a quote
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// ValidateJSONDepth checks that the JSON value of field nests at most
// MaxJSONDepth levels (EInvalid naming the field otherwise).
func ValidateJSONDepth(field string, v []byte) error {
	if d := JSONDepth(v); d > MaxJSONDepth {
		return Errorf(EInvalid, "%s is nested %d levels deep; the limit is %d", field, d, MaxJSONDepth)
	}
	return nil
}

// Limits of workspaces and keys.
const (
	MaxWorkspaceName = 64  // characters
	MaxKeyName       = 255 // characters
)

// ValidateWorkspaceName checks a workspace name: 1-64 ASCII letters,
// digits, "-", "_" or ".", so that it can be typed on a command line and
// never looks like an ID (wrkspc_...).
func ValidateWorkspaceName(name string) error {
	if name == "" || len(name) > MaxWorkspaceName {
		return Errorf(EInvalid, "workspace name must be 1-%d characters", MaxWorkspaceName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return Errorf(EInvalid, "workspace name %q may hold only letters, digits, '-', '_' and '.'", name)
		}
	}
	if strings.HasPrefix(name, "wrkspc_") {
		return Errorf(EInvalid, "workspace name %q must not look like a workspace ID", name)
	}
	return nil
}

// ValidateKeyName checks an API key's name: at most 255 characters, no
// control characters; it may be empty.
func ValidateKeyName(name string) error {
	if utf8.RuneCountInString(name) > MaxKeyName {
		return Errorf(EInvalid, "key name must be at most %d characters", MaxKeyName)
	}
	if strings.ContainsFunc(name, unicode.IsControl) || !utf8.ValidString(name) {
		return Errorf(EInvalid, "key name must be valid text without control characters")
	}
	return nil
}

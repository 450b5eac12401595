package memstore

import "strings"

// The prefixes of memstore's identifiers, each naming the kind of record
// an ID is of (package internal/ids makes the IDs). An ID is its prefix
// and a lowercase ULID.
const (
	StoreIDPrefix          = "memstore_"
	MemoryIDPrefix         = "mem_"
	VersionIDPrefix        = "memver_"
	WorkspaceIDPrefix      = "wrkspc_"
	APIKeyIDPrefix         = "apikey_"
	SessionIDPrefix        = "sesn_"
	SessionTokenIDPrefix   = "sesntok_"
	UserIDPrefix           = "user_"
	RequestIDPrefix        = "req_"
	WebhookIDPrefix        = "webhook_"
	WebhookEventIDPrefix   = "wevt_"
	ServiceAccountIDPrefix = "svac_" // no service account is made yet
)

// The rule of what an ID is, in two strengths. An ID that names a record
// to find, or filters by one, need only be text that every backend can
// look up (ValidateID): one that memstore never made finds nothing
// (ENotFound), and some fields take a name as well. A record being
// copied in from elsewhere (migrate) must carry an ID of the form that
// memstore makes (validateIDOf), since it will be kept and found by it.

// maxIDLength bounds a copied record's ID: a prefix and a ULID are well
// under it.
const maxIDLength = 64

// ValidateID checks an ID given for field, to name a record or to filter
// by: valid UTF-8 without NUL characters, as every ID memstore makes is
// (EInvalid naming the field). Whether a record has it is the backend's
// to say (ENotFound).
func ValidateID(field, id string) error {
	if ValidateText(field, id) != nil {
		return Errorf(EInvalid, "%s %q is not an ID: an ID is UTF-8 text without NUL characters", field, shortName(id))
	}
	return nil
}

// validateIDOf checks the ID of a copied record, of the kind that prefix
// begins: ValidateID, then the prefix followed by lowercase letters,
// digits and "_", at most maxIDLength bytes in all.
func validateIDOf(field, prefix, id string) error {
	if err := ValidateID(field, id); err != nil {
		return err
	}
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" || len(id) > maxIDLength || strings.ContainsFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		return Errorf(EInvalid, "%s %q is not an ID: an ID of this kind is %s followed by lowercase letters, digits and _, at most %d bytes in all", field, shortName(id), prefix, maxIDLength)
	}
	return nil
}

// validateIDs checks pairs of a field and its ID by ValidateID, in turn.
func validateIDs(fieldsAndIDs ...string) error {
	for i := 0; i+1 < len(fieldsAndIDs); i += 2 {
		if err := ValidateID(fieldsAndIDs[i], fieldsAndIDs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

package memstore

import "fmt"

// A Role is what a console user may do in their workspace. Callers with
// an API key, a session token or the operator's command line have none
// (""): a role only ever narrows what a caller may do.
type Role string

// The roles of users.
const (
	// RoleAdmin may do everything in the workspace: memories, stores,
	// keys, users, sessions and redactions.
	RoleAdmin Role = "admin"
	// RoleMember reads and writes stores and memories, and administers
	// nothing.
	RoleMember Role = "member"
	// RoleAuditor reads everything a caller may read (memories, stores,
	// sessions, users) and changes nothing.
	RoleAuditor Role = "auditor"
)

// Roles lists the roles, most powerful first.
var Roles = []Role{RoleAdmin, RoleMember, RoleAuditor}

// An action is a kind of call, as a role allows it or not.
type action int

const (
	readData   action = iota // read stores, memories, versions; search
	writeData                // change them
	readAdmin                // read sessions, tokens, users and keys
	administer               // change keys, users, sessions; redact
)

// roleActions is the one table of what each role allows.
var roleActions = map[Role][]action{
	RoleAdmin:   {readData, writeData, readAdmin, administer},
	RoleMember:  {readData, writeData},
	RoleAuditor: {readData, readAdmin},
}

// allows returns nil when role r may do act (what names it in the
// message): always for no role, never for a role it does not know
// (EPermission).
func (r Role) allows(act action, what Permission) error {
	if r == "" {
		return nil
	}
	for _, a := range roleActions[r] {
		if a == act {
			return nil
		}
	}
	return Errorf(EPermission, "a user with the %s role cannot %s", r, what)
}

// ValidateRole checks that r is one of Roles (EInvalid).
func ValidateRole(r Role) error {
	if _, ok := roleActions[r]; ok {
		return nil
	}
	return Errorf(EInvalid, "role %q is not one of %s", r, fmt.Sprint(Roles))
}

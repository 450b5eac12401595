package memstore

import "strings"

// ActorType says who made a change.
type ActorType string

// The kinds of actor.
const (
	ActorAPIKey         ActorType = "api_actor"             // a caller with an API key (ID: apikey_...)
	ActorSession        ActorType = "session_actor"         // an agent in a session (ID: sesn_...)
	ActorUser           ActorType = "user_actor"            // a person (ID: user_...)
	ActorServiceAccount ActorType = "service_account_actor" // a workload identity (ID: svac_...)
)

// ActorTypes lists the kinds of actor.
var ActorTypes = []ActorType{ActorAPIKey, ActorSession, ActorUser, ActorServiceAccount}

// actorIDPrefixes are the prefixes of each kind of actor's IDs.
var actorIDPrefixes = map[ActorType]string{
	ActorAPIKey: APIKeyIDPrefix, ActorSession: SessionIDPrefix, ActorUser: UserIDPrefix, ActorServiceAccount: ServiceAccountIDPrefix,
}

// actorPrefixList names the prefixes of actors' IDs, in the order of
// ActorTypes: "apikey_, sesn_, user_ or svac_".
func actorPrefixList() string {
	var b strings.Builder
	for i, t := range ActorTypes {
		switch {
		case i == len(ActorTypes)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(actorIDPrefixes[t])
	}
	return b.String()
}

// ActorTypeOf returns the kind of actor an ID names by its prefix, ""
// when it names none.
func ActorTypeOf(id string) ActorType {
	for t, p := range actorIDPrefixes {
		if strings.HasPrefix(id, p) {
			return t
		}
	}
	return ""
}

// An Actor is who made a change, as recorded at the time; it is never
// rewritten, even when the principal is gone.
type Actor struct {
	Type ActorType
	ID   string
}

// The operator is who works on a database directly, with memstore's
// command line (--db): no API key, session or console user. Its changes
// are recorded as a user actor with a reserved ID, so that every client
// of the API, the official SDKs included, reads them as the user actors
// they know. No user can have this ID: user IDs end in a ULID, and user
// names may not begin with user_.
const (
	OperatorUserID = UserIDPrefix + "operator"
	// OperatorName is how the command line and the console show the
	// operator.
	OperatorName = "operator"
)

// OperatorActor is the actor of the operator's changes.
var OperatorActor = Actor{Type: ActorUser, ID: OperatorUserID}

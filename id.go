package memstore

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

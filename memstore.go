// Package memstore is persistent memory for AI agents, self-hosted.
//
// It implements three related systems, each a view of one model: text
// documents addressed by path, where every change is a version.
//
//   - The memory tool (memory_20250818): the client-side tool through which
//     a model views, creates, edits, renames and deletes files under
//     /memories. Package memorytool.
//   - Memory stores: workspace-scoped collections of memories with
//     immutable versions, served over an HTTP API compatible with
//     Anthropic's /v1/memory_stores.
//   - The memory directory: a Claude-Code-style MEMORY.md index with topic
//     files and daily logs, shared through directory sync.
//
// The words used throughout:
//
//   - A memory is one text document, addressed by a path such as
//     /preferences/style.md.
//   - A store is a collection of memories; /memories is what the memory
//     tool calls the root of one.
//   - A version is an immutable snapshot of a memory after one change.
//   - An actor is who made a change: an API key, a session, or a user.
//   - A caller is who a call comes from once authenticated: a workspace,
//     an actor and, for a session token, the session; for a console user,
//     a role.
//
// # One core
//
// Every surface (the HTTP API, the web console, the MCP server and the
// agent tools, the memory tool over a store, directory sync, the command
// line) calls the same services, StoreService, MemoryService,
// VersionService, SessionService and SearchService, with FeedService for
// the change feed and ActivityService for a workspace's changes, with the
// *Caller it authenticated. Core implements them over a Backend, and is
// the one place where a call is checked: it refuses a nil caller, then
// anything the caller may not do (a session reaches only its attached
// stores, changes only those attached read-write, reads only its own
// session and administers nothing: Caller.CanRead, CanWrite,
// CanReadSession, CanAdminister, in caller.go), then invalid input (the
// Validate functions), and only then calls the backend, in the caller's workspace
// and as its actor. So a surface does the wire's work and authentication
// alone, and one that forgets a check cannot hand a session token the rest
// of its workspace: there is no check for it to forget.
//
// The backend's interfaces, StoreStorage, MemoryStorage, VersionStorage,
// KeyStorage, SessionStorage, SearchStorage and EventStorage (together,
// Backend), take a workspace ID and an actor and trust them: a backend
// keeps storage, transactions and queries, and checks only what its data
// depends on. Only a Core calls them. Database (contract.go) gathers
// them, with the storage of what works beside the core, into the one
// interface a backend implements.
//
// The rules that decide what a change does given what is stored (path
// overlaps, upserts, preconditions, updates that change nothing, the order
// in which errors are decided, archived stores and sessions, the
// snapshot of a session's stores, tokens that no longer work, page sizes)
// are in rules.go, once. The writes of memories and of sessions read
// several things in turn, so the Core runs their rules inside the
// backend's transaction, over a MemoryTx (MemoryStorage.WriteMemory) or a
// SessionTx (SessionStorage.WriteSessions), a handful of reads and
// changes; an update or archive of a store runs over a StoreTx
// (StoreStorage.WriteStore), which reads the store with its row locked;
// PageSize sizes a page. A create that a quota caps (Limits, and the fixed caps of API
// keys and webhook endpoints) is checked on a count made in the insert's
// transaction (Quota.Check): the Core counts through its SessionTx, and
// hands the other creates' Quota to the backend (a memory's to its
// MemoryTx, MemoryTx.CheckQuota). Every
// limit refuses in the same words (LimitReached). When a change stops a
// credential, the Core decides which Revocation it makes, and the backend
// only carries it to every process that shares its database. A new
// backend therefore implements storage and these calls. What remains to
// it is what only its storage can state: that archiving or redacting
// again changes nothing, and its cursors. The suite in package storetest
// holds it to all of it.
//
// Console users have a Role (admin, member or auditor), which narrows
// what their caller may do: the same Can methods check it, from one
// table (role.go). Users (user.go) manages users, their passwords
// (argon2id), their console sign-ins and the limits on sign-in attempts,
// counted in the database (signin_limit.go), for callers that may, and
// turns a signed-in user into the Caller the console calls the core as,
// over a backend's UserStorage.
//
// Keys (key.go) and Webhooks (webhook.go) check each caller in the same
// way over their own storage. KeyService, the credential layer
// (workspaces, API keys and authentication), takes no caller: operators
// and authentication use it, before there is one. The Core implements it
// over the backend's KeyStorage: it mints every secret, of which the
// backend keeps only a hash, and its one Authenticate tells an API key
// from a session token by its prefix (CredentialOf) and decides whether
// the credential still works. Dumper and Restorer, with which an operator
// copies a whole database to another backend (dump.go), take no caller
// either.
//
// httpapi.Client implements the same services (Services) against a
// server: it is a remote core, whose server's core decides, and it calls
// only as its own credential.
package memstore

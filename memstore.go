// Package memstore is persistent memory for AI agents, self-hosted.
//
// It implements three related systems, each a view of one core: a store of
// text documents addressed by path, where every change is a version.
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
package memstore

// Package memorytool implements Anthropic's client-side memory tool,
// memory_20250818: the view, create, str_replace, insert, delete and rename
// commands through which a model keeps files under /memories between
// conversations.
//
// Execute takes the input of a tool_use block, validates it and runs it on a
// Handler, returning the tool_result text. Local is the Handler over a host
// directory, confined to it with os.Root (and on Linux openat2's
// RESOLVE_BENEATH); Store is the Handler over a memory store, where
// /memories/a/b.md is the memory at path /a/b.md. Prompt is the memory
// protocol that integrators put in the system prompt.
//
// Results equal those of the official TypeScript implementation
// (@anthropic-ai/sdk 1.14.0, BetaLocalFilesystemMemoryTool) character for
// character, including its error messages, line numbering, size format,
// UTF-16 name order, UTF-8 repair and filesystem effects, except where
// memstore is deliberately better:
//
//   - str_replace matches the whole text, not line by line: a multi-line
//     old_str works, and two occurrences on one line are two occurrences.
//   - No result contains a host path: where the reference passes a raw
//     operating-system error to the model, memstore names only the model's
//     path.
//   - The /memories prefix is exact: /memoriesX/a is refused, not mapped
//     into the root.
//   - Percent-encoded traversal (%2e, %2f, %5c, %25, ...) is refused.
//   - Malformed input is a clear error that changes nothing.
//   - Optional limits (Options): file size, view length, expiry and a
//     credential guard, all off by default.
//
// Store gives the same results as Local wherever a store can behave like a
// directory: the same messages, listing format, UTF-16 order, hidden names
// and edits. Where it cannot, it differs on purpose:
//
//   - A directory is a path prefix: it exists while a memory lies below it,
//     so there are no empty directories, create and rename make no parent
//     directories, and deleting or moving the last file of a directory
//     leaves no directory behind. /memories itself always exists.
//   - A listing gives every directory the size 4K (4096 bytes, what a
//     directory shows on the common Linux filesystems): a store has no
//     directory entries to measure.
//   - There are no symlinks, FIFOs or invalid UTF-8: a store holds text.
//   - A path must be one a store can hold: at most 1,024 bytes and 20
//     levels below /memories, without control or format characters, in
//     Unicode NFC. Others are refused with a message naming the rule.
//   - A file holds at most 100 KiB (102,400 bytes), the store's limit,
//     refused with the same message as Options.MaxFileBytes.
//   - Edits and deletions of a file apply only if the memory still has the
//     content that was read (its content_sha256): a change made meanwhile
//     by another client is reported, and nothing is overwritten.
//   - Rename keeps the memory, with its ID and versions, under the new
//     path. A directory is renamed or deleted one memory at a time, not
//     atomically; if one step fails, the result says how many files were
//     moved or deleted and which one failed.
//   - Failures of the store (a read-only session, an archived store, an
//     unreachable server) are messages of their own.
//   - Options.ExpireAfter is refused: a store keeps every version and
//     records no reads.
package memorytool

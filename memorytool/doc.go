// Package memorytool implements Anthropic's client-side memory tool,
// memory_20250818: the view, create, str_replace, insert, delete and rename
// commands through which a model keeps files under /memories between
// conversations.
//
// Execute takes the input of a tool_use block, validates it and runs it on a
// Handler, returning the tool_result text. Local is the Handler over a host
// directory, confined to it with os.Root. Prompt is the memory protocol that
// integrators put in the system prompt.
//
// Results equal those of the official TypeScript implementation
// (@anthropic-ai/sdk 1.11.0, BetaLocalFilesystemMemoryTool) character for
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
package memorytool

package agenttool

import (
	"regexp"
	"strconv"

	"github.com/memstore/memstore"
)

// The descriptions and schemas are part of the product: they are all a
// model knows of the tools. They name the limits the tools enforce.

const descMemoryPath = "Full path of the memory: the mount path of its store followed by its path in the store, such as /mnt/memory/notes/projects/plan.md. With exactly one store attached, /projects/plan.md also means that store."

const descPrefix = "A directory, as a full path such as /mnt/memory/notes/ or /mnt/memory/notes/projects/ (the final / is optional; /mnt/memory/notes/projects never matches /mnt/memory/notes/projects-old/)."

var tools = []spec{
	{
		tool: Tool{
			Name:  ToolList,
			Title: "List memories",
			Description: "List the memories in the memory stores attached to this session. Each store is a directory under /mnt/memory/, such as /mnt/memory/notes/, and each memory is a text document at a path below it. " +
				"Without path_prefix, lists every attached store (mount path, name, whether it is read-only) and what it holds; with path_prefix, lists only that directory. " +
				"Each entry is a full path with its size in bytes; an entry ending in / is a directory holding deeper memories, which you can list by passing it as path_prefix. " +
				"At most " + strconv.Itoa(MaxListEntries) + " entries are returned; the result says when there are more. Use this before starting a task to see what memory holds.",
			ReadOnly: true, Idempotent: true,
		},
		params: []param{
			{name: "path_prefix", kind: kindString, minLength: 1, desc: descPrefix + " Omit it to list every attached store."},
			{name: "depth", kind: kindInteger, minimum: 0, maximum: memstore.MaxPathSegments,
				desc: "How many levels below the directory to show, default " + strconv.Itoa(DefaultListDepth) + ". Memories deeper than that are rolled up into their directory at that level (an entry ending in /). 1 shows only what is directly in the directory; 0 shows every memory below it, however deep, and no directories."},
		},
		run: runList,
	},
	{
		tool: Tool{
			Name:  ToolSearch,
			Title: "Search memories",
			Description: "Search the memories in the attached stores, all of them or only below path_prefix. " +
				"By words (mode lexical), a memory matches when it contains the words of query, in any order and in any inflection (\"running\" finds \"runs\"), or contains query's text exactly, which finds identifiers and parts of words of three or more characters; matches in the path rank above matches in the text. " +
				"By meaning (mode semantic, when the server has an embedding model), memories are ranked by how near their meaning is to query's, whatever their words; mode hybrid ranks by both. " +
				"Returns the best matches first, each with its full path, size in bytes, score (higher is better) and a snippet of the matching text. Read a match in full with memory_read.",
			ReadOnly: true, Idempotent: true,
		},
		params: []param{
			{name: "query", kind: kindString, required: true, minLength: 1,
				desc: "What to look for: a few words, or a fragment of text such as a name or an identifier; at most " + strconv.Itoa(memstore.MaxSearchQuery) + " bytes."},
			{name: "path_prefix", kind: kindString, minLength: 1, desc: "Search only below this directory. " + descPrefix + " Omit it to search every attached store."},
			{name: "limit", kind: kindInteger, minimum: 1, maximum: MaxSearchResults,
				desc: "The most matches to return, 1-" + strconv.Itoa(MaxSearchResults) + "; default " + strconv.Itoa(memstore.DefaultSearchLimit) + "."},
			{name: "mode", kind: kindString, enum: []string{memstore.ModeLexical, memstore.ModeSemantic, memstore.ModeHybrid},
				desc: "How to match: lexical (by words), semantic (by meaning) or hybrid (both). Omit it for the server's default: hybrid when it has an embedding model, lexical when not; semantic and hybrid fail on a server without one."},
			{name: "conversation", kind: kindBoolean,
				desc: "true when the memories are turns of conversations, one memory a turn numbered in its path (/chats/ana/0007.md): each turn then ranks with the turns beside it, which often hold the rest of an answer; false when they are not. Omit it to leave it to the session and the stores, which may say so."},
		},
		run: runSearch,
	},
	{
		tool: Tool{
			Name:  ToolRead,
			Title: "Read a memory",
			Description: "Read one memory: a header with its full path, size in bytes, number of lines and content_sha256, then its text with line numbers. " +
				"Each line is shown as its number, a tab, and the line's text; the numbers and the tab are not part of the memory, so leave them out of memory_edit's old_str. " +
				"To read part of a long memory, give start_line and end_line. A result longer than " + strconv.Itoa(MaxReadBytes) + " bytes is cut after a whole line, with a note saying which start_line to continue from.",
			ReadOnly: true, Idempotent: true,
		},
		params: []param{
			{name: "path", kind: kindString, required: true, minLength: 1, desc: descMemoryPath},
			{name: "start_line", kind: kindInteger, minimum: 1, maximum: maxLine,
				desc: "The first line to show, counting from 1; default 1."},
			{name: "end_line", kind: kindInteger, minimum: 1, maximum: maxLine,
				desc: "The last line to show, inclusive; default the last line of the memory. A value past the end means the end."},
		},
		run: runRead,
	},
	{
		tool: Tool{
			Name:  ToolWrite,
			Title: "Write a memory",
			Description: "Create a memory, or replace the whole text of an existing one. path is its full path; directories need not exist, they are implied by paths. content becomes the memory's complete text. " +
				"Overwriting replaces all of the old text: to change part of a memory, use memory_edit. " +
				"A path cannot be both a memory and a directory: /mnt/memory/notes/a.md cannot be written while /mnt/memory/notes/a.md/b exists, nor the other way round. " +
				"If another writer changes the memory at the same moment, nothing is overwritten and the result says so. " +
				"Returns whether the memory was created or updated, its size and its new content_sha256. Fails on a store attached read-only.",
			Destructive: true, Idempotent: true,
		},
		params: []param{
			{name: "path", kind: kindString, required: true, minLength: 1, desc: descMemoryPath},
			{name: "content", kind: kindString, required: true,
				desc: "The complete text of the memory, at most " + strconv.Itoa(memstore.MaxContentBytes) + " bytes of UTF-8. Prefer several small memories, one per topic, to one large one."},
		},
		run: runWrite,
	},
	{
		tool: Tool{
			Name:  ToolEdit,
			Title: "Edit a memory",
			Description: "Replace one exact piece of text in a memory with another. old_str must occur exactly once in the memory's text and match it character for character, spaces, indentation and line breaks included; it may span several lines. " +
				"If old_str occurs nowhere, or more than once (the result gives the line of each occurrence), nothing changes: include more of the surrounding text to make it unique. " +
				"Give expected_sha256 to edit only if the memory still has the content_sha256 you last saw. " +
				"Returns the new content_sha256 and the edited lines with their numbers. Fails on a store attached read-only.",
			Destructive: true,
		},
		params: []param{
			{name: "path", kind: kindString, required: true, minLength: 1, desc: descMemoryPath},
			{name: "old_str", kind: kindString, required: true, minLength: 1,
				desc: "The exact text to replace, without the line numbers that memory_read shows; it must occur exactly once in the memory."},
			{name: "new_str", kind: kindString, required: true,
				desc: "The text to put in its place; empty to delete old_str."},
			{name: "expected_sha256", kind: kindString, pattern: sha256Pattern, patternText: sha256Pattern.String(),
				desc: "Optional: the content_sha256 you last saw for this memory (from memory_read or a write). If the memory has changed since, nothing is edited and its current content_sha256 is reported."},
		},
		run: runEdit,
	},
	{
		tool: Tool{
			Name:  ToolDelete,
			Title: "Delete a memory",
			Description: "Delete one memory, given its full path. It is gone for this session and every later one (the store's history keeps a record for its owners). " +
				"A directory cannot be deleted as a whole: delete the memories in it one by one; a directory disappears with its last memory. Fails on a store attached read-only.",
			Destructive: true, Idempotent: true,
		},
		params: []param{
			{name: "path", kind: kindString, required: true, minLength: 1, desc: descMemoryPath},
		},
		run: runDelete,
	},
}

// maxLine bounds line numbers: a memory of at most MaxContentBytes bytes
// has at most that many lines, and a bound keeps the integers exact.
const maxLine = 1_000_000

var sha256Pattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

func init() {
	for i := range tools {
		tools[i].tool.InputSchema = schema(tools[i].params)
	}
}

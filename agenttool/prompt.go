package agenttool

import (
	"strings"

	"github.com/memstore/memstore"

	"github.com/memstore/memstore/internal/tooltext"
)

// Prompt renders the memory section of the system prompt of an agent in
// session s: each attached store (name, mount path, access, description
// and the attachment's instructions, in the order of attachment) and the
// memory protocol, which makes the agent look at memory before starting,
// record progress as it goes, and assume that its context may be reset at
// any time. The text depends only on s, so that a prompt can be cached and
// compared. The HTTP API serves it as GET /v1/sessions/{id}/memory_prompt
// and the MCP server sends it as its instructions. Prompt(nil) is "".
func Prompt(s *memstore.Session) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Memory\n\n")
	mounts := mountsOf(s)
	if len(mounts) == 0 {
		b.WriteString("No memory store is attached to this session, so you have no persistent memory: nothing you learn here will be kept after the session ends.\n")
		return b.String()
	}
	example := mounts[0].path
	for i := range mounts {
		if mounts[i].att.Writable() {
			example = mounts[i].path
			break
		}
	}
	b.WriteString("You have persistent memory: memory stores that keep text documents, called memories, from one session to the next. " +
		"Each store attached to this session is a directory under " + memstore.MountRoot + ", and each memory is addressed by its full path, such as " + example + "/projects/plan.md. " +
		"Work with memory through the tools " + ToolList + ", " + ToolSearch + ", " + ToolRead + ", " + ToolWrite + ", " + ToolEdit + " and " + ToolDelete + ".\n")
	b.WriteString("\n## Attached memory stores\n")
	writable, readOnly := 0, 0
	for i := range mounts {
		m := &mounts[i]
		name := strings.TrimSpace(m.att.Name)
		if name == "" {
			name = m.show("")
		}
		b.WriteString("\n### " + name + "\n")
		b.WriteString("- Mount path: " + m.show("") + "\n")
		if m.att.Writable() {
			writable++
			b.WriteString("- Access: read-write. You can list, search and read its memories, and create, change and delete them.\n")
		} else {
			readOnly++
			b.WriteString("- Access: read-only. You can list, search and read its memories, but not create, change or delete them.\n")
		}
		field(&b, "Description", m.att.Description)
		field(&b, "Instructions", m.att.Instructions)
	}
	b.WriteString("\n## Memory protocol\n\n")
	b.WriteString("1. Look at memory before doing anything else: list the stores with " + ToolList + ", search them with " + ToolSearch + " for earlier progress, decisions and preferences that bear on your task, and read what is relevant with " + ToolRead + ".\n")
	if writable == 0 {
		if readOnly == 1 {
			b.WriteString("2. The attached store is read-only: use its memories as reference. You cannot record anything in it.\n")
		} else {
			b.WriteString("2. The attached stores are all read-only: use their memories as reference. You cannot record anything in them.\n")
		}
		b.WriteString("3. Assume your context can be reset at any moment: look things up in memory again rather than relying on what you remember of it.\n")
		return b.String()
	}
	use := "Use "
	if readOnly > 0 {
		use = "In a read-write store, use "
	}
	b.WriteString("2. Record progress as you go, not only at the end: what you have done, what you decided and why, what remains to do, and what you learned that will help later. " +
		use + ToolWrite + " to create a memory or replace its text, and " + ToolEdit + " to change part of one.\n")
	b.WriteString("3. Keep memory organised and concise: one topic per memory under a descriptive path, current facts rather than a log of everything. " +
		"Update an existing memory rather than adding a near-duplicate, and delete with " + ToolDelete + " what is wrong or obsolete.\n")
	b.WriteString("4. Never store secrets: no passwords, API keys, tokens or other credentials.\n")
	b.WriteString("5. Assume your context can be reset at any moment: whatever you have not recorded in memory will be lost.\n")
	return b.String()
}

// field writes one "- Name: value" line of a store, continuation lines of
// a multi-line value indented under it; nothing for an empty value.
func field(b *strings.Builder, name, value string) {
	value = strings.TrimSpace(strings.ReplaceAll(value, "\r\n", "\n"))
	if value == "" {
		return
	}
	b.WriteString("- " + name + ": ")
	tooltext.AppendListItem(b, value)
}

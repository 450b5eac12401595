package agenttool

import (
	"context"
	"fmt"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/tooltext"
)

// lookup returns the memory at a path of a mount, with its content when
// full, or nil when there is none. A store that is gone also gives nil
// here; notFound then reports it.
func (t *Toolset) lookup(ctx context.Context, m *mount, storePath string, full bool) (*memstore.Memory, error) {
	mem, err := memstore.FindMemory(ctx, t.svc.Memories, t.caller, m.att.StoreID, storePath)
	if err == nil && full {
		mem, err = t.svc.Memories.Memory(ctx, t.caller, m.att.StoreID, mem.ID)
	}
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil, nil
	}
	return mem, err
}

// notFound explains that there is no memory at a path: it may be a
// directory, or nothing at all.
func (t *Toolset) notFound(ctx context.Context, m *mount, storePath, tool string) error {
	full := m.show(storePath)
	page, err := t.svc.Memories.Memories(ctx, t.caller, m.att.StoreID, memstore.MemoryFilter{PathPrefix: storePath + "/", Limit: 1})
	switch {
	case err != nil:
		return explain(err, m, full)
	case len(page.Items) == 0:
		return failf("There is no memory at %s. memory_list shows the memories that exist; memory_search finds them by their text.", full)
	case tool == ToolDelete:
		return failf("%s is a directory, not a memory, and memory_delete deletes one memory at a time. Delete the memories in it one by one (memory_list with path_prefix %s/ shows them); the directory disappears with its last memory.", full, full)
	}
	return failf("%s is a directory, not a memory. memory_list with path_prefix %s/ shows what it holds.", full, full)
}

// runRead is memory_read.
func runRead(t *Toolset, ctx context.Context, a args) (string, error) {
	p, _ := a.str("path")
	m, storePath, err := t.memoryPath(p)
	if err != nil {
		return "", err
	}
	full := m.show(storePath)
	mem, err := t.lookup(ctx, m, storePath, true)
	if err != nil {
		return "", explain(err, m, full)
	}
	if mem == nil {
		return "", t.notFound(ctx, m, storePath, ToolRead)
	}
	lines := splitLines(mem.Content)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s, %s, content_sha256 %s\n", full, bytesText(mem.ContentSize), linesText(len(lines)), mem.ContentSHA256)
	if len(lines) == 0 {
		sb.WriteString("(the memory is empty)")
		return sb.String(), nil
	}
	start, end := 1, len(lines)
	if n, ok := a.integer("start_line"); ok {
		start = n
	}
	if n, ok := a.integer("end_line"); ok {
		if n < start {
			return "", failf("end_line %d is before start_line %d; give end_line >= start_line.", n, start)
		}
		end = min(n, len(lines))
	}
	if start > len(lines) {
		return "", failf("start_line %d is past the end of %s, which has %s.", start, full, linesText(len(lines)))
	}
	// Whole lines while they fit in MaxReadBytes; the first is always
	// shown, however long, so that every line can be read.
	used := 0
	for i := start; i <= end; i++ {
		line := lines[i-1]
		if i > start && used+len(line)+tooltext.LineNumberWidth+2 > MaxReadBytes {
			fmt.Fprintf(&sb, "\n\n[Lines %d-%d of %d are shown; the rest was cut at the %d-byte limit of one read. Continue with start_line %d.]", start, i-1, len(lines), MaxReadBytes, i)
			break
		}
		if i > start {
			sb.WriteByte('\n')
		}
		tooltext.AppendNumbered(&sb, lines[i-1:i], i)
		used += len(line) + tooltext.LineNumberWidth + 2
	}
	return sb.String(), nil
}

package agenttool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/tooltext"
)

// Every change is conditional on the memory as the tool just found it (its
// content_sha256, or its absence), so that a write by someone else in
// between is reported, never overwritten.
//
// Whether the session may change a memory is for the services to decide:
// the tools read, check their input and then ask for the change, which the
// services refuse on a store attached read-only before anything is
// written. A change that would leave the memory as it is is asked for too
// (the services make it a no-op, with no version), so that the model hears
// of a read-only store then as well.

// runWrite is memory_write: a create, or an update of the whole content.
func runWrite(t *Toolset, ctx context.Context, a args) (string, error) {
	p, _ := a.str("path")
	content, _ := a.str("content")
	m, storePath, err := t.memoryPath(p)
	if err != nil {
		return "", err
	}
	full := m.show(storePath)
	if err := checkContent(full, content); err != nil {
		return "", err
	}
	old, err := t.lookup(ctx, m, storePath, false)
	if err != nil {
		return "", explain(err, m, full)
	}
	if old == nil {
		mem, err := t.svc.Memories.CreateMemory(ctx, t.caller, m.att.StoreID, memstore.MemoryCreate{Path: storePath, Content: content})
		if err != nil {
			return "", createError(err, m, storePath)
		}
		return fmt.Sprintf("Created %s: %s, %s.\ncontent_sha256: %s", full, bytesText(mem.ContentSize), linesText(len(splitLines(content))), mem.ContentSHA256), nil
	}
	mem, err := t.svc.Memories.UpdateMemory(ctx, t.caller, m.att.StoreID, old.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: old.ContentSHA256})
	if err != nil {
		return "", updateError(err, m, full, "written")
	}
	if strings.EqualFold(mem.ContentSHA256, old.ContentSHA256) {
		return fmt.Sprintf("Unchanged: %s already has exactly this content (%s).\ncontent_sha256: %s", full, bytesText(old.ContentSize), old.ContentSHA256), nil
	}
	return fmt.Sprintf("Updated %s: %s, %s (it was %s).\ncontent_sha256: %s", full, bytesText(mem.ContentSize), linesText(len(splitLines(content))), bytesText(old.ContentSize), mem.ContentSHA256), nil
}

// runEdit is memory_edit: one exact, unique, whole-text replacement.
func runEdit(t *Toolset, ctx context.Context, a args) (string, error) {
	p, _ := a.str("path")
	oldStr, _ := a.str("old_str")
	newStr, _ := a.str("new_str")
	m, full, mem, err := t.existing(ctx, p, ToolEdit, true)
	if err != nil {
		return "", err
	}
	if want, ok := a.str("expected_sha256"); ok && !strings.EqualFold(want, mem.ContentSHA256) {
		return "", failf("%s has changed since you saw it: its content_sha256 is now %s, not %s. Nothing was edited. Read it again with memory_read and make the edit on its current text.", full, mem.ContentSHA256, strings.ToLower(want))
	}
	found := tooltext.Occurrences(mem.Content, oldStr)
	switch len(found) {
	case 0:
		return "", failf("old_str does not occur in %s, so nothing was changed. It must match the memory's text exactly, spaces, indentation and line breaks included, and without the line numbers and tabs that memory_read adds. Read the memory with memory_read and copy the text from it.", full)
	case 1:
	default:
		var lines []string // where occurrences start, each line once
		for _, off := range found {
			if n := strconv.Itoa(tooltext.LineIndex(mem.Content, off) + 1); len(lines) == 0 || lines[len(lines)-1] != n {
				lines = append(lines, n)
			}
		}
		word := "line"
		if len(lines) > 1 {
			word = "lines"
		}
		return "", failf("old_str occurs %d times in %s (starting on %s %s), so nothing was changed. Include more of the surrounding text in old_str so that it occurs exactly once.",
			len(found), full, word, strings.Join(lines, ", "))
	}
	at := found[0]
	content := mem.Content[:at] + newStr + mem.Content[at+len(oldStr):]
	if len(content) > memstore.MaxContentBytes {
		return "", failf("The edit would make %s %d bytes, over the %d-byte limit of a memory, so nothing was changed. Move some of its text into another memory.", full, len(content), memstore.MaxContentBytes)
	}
	updated, err := t.svc.Memories.UpdateMemory(ctx, t.caller, m.att.StoreID, mem.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: mem.ContentSHA256})
	if err != nil {
		return "", updateError(err, m, full, "edited")
	}
	if oldStr == newStr {
		return fmt.Sprintf("Unchanged: old_str and new_str are the same, so %s was left as it is.\ncontent_sha256: %s", full, updated.ContentSHA256), nil
	}
	lines := splitLines(content)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Edited %s: %s, %s.\ncontent_sha256: %s\n", full, bytesText(updated.ContentSize), linesText(len(lines)), updated.ContentSHA256)
	first := tooltext.LineIndex(mem.Content, at) + 1
	last := first + strings.Count(newStr, "\n")
	from, to := max(1, first-2), min(len(lines), last+2)
	if from > to {
		sb.WriteString("The memory is now empty.")
		return sb.String(), nil
	}
	sb.WriteString("The edited part, with line numbers:\n")
	tooltext.AppendNumbered(&sb, lines[from-1:to], from)
	return sb.String(), nil
}

// existing resolves the path of a tool that changes an existing memory:
// its mount, its full path for messages, and the memory (with its content
// when withContent), or an error for the model when no memory is there.
func (t *Toolset) existing(ctx context.Context, p, tool string, withContent bool) (*mount, string, *memstore.Memory, error) {
	m, storePath, err := t.memoryPath(p)
	if err != nil {
		return nil, "", nil, err
	}
	full := m.show(storePath)
	mem, err := t.lookup(ctx, m, storePath, withContent)
	if err != nil {
		return nil, "", nil, explain(err, m, full)
	}
	if mem == nil {
		return nil, "", nil, t.notFound(ctx, m, storePath, tool)
	}
	return m, full, mem, nil
}

// runDelete is memory_delete: one memory, if unchanged since it was found.
func runDelete(t *Toolset, ctx context.Context, a args) (string, error) {
	p, _ := a.str("path")
	m, full, mem, err := t.existing(ctx, p, ToolDelete, false)
	if err != nil {
		return "", err
	}
	err = t.svc.Memories.DeleteMemory(ctx, t.caller, m.att.StoreID, mem.ID, mem.ContentSHA256)
	switch memstore.ErrorCode(err) {
	case "":
		return fmt.Sprintf("Deleted %s (%s).", full, bytesText(mem.ContentSize)), nil
	case memstore.EPreconditionFailed:
		return "", failf("%s was changed by another writer just now, so it was not deleted. Read it with memory_read; if it should still go, call memory_delete again.", full)
	case memstore.ENotFound:
		return "", failf("%s no longer exists: another writer deleted it just now.", full)
	}
	return "", explainChange(err, m, full)
}

// checkContent refuses content that no store would take.
func checkContent(full, content string) error {
	if len(content) > memstore.MaxContentBytes {
		return failf("content is %d bytes, over the %d-byte limit of a memory, so %s was not written. Split the text into several smaller memories, one per topic.", len(content), memstore.MaxContentBytes, full)
	}
	if err := memstore.ValidateContent(content); err != nil {
		return failf("%s was not written: %s.", full, trimDot(memstore.ErrorMessage(err)))
	}
	return nil
}

// createError explains a failed create of the memory at storePath.
func createError(err error, m *mount, storePath string) error {
	full := m.show(storePath)
	var e *memstore.Error
	if !errors.As(err, &e) || e.Code != memstore.EPathConflict {
		return explainChange(err, m, full)
	}
	switch at := e.ConflictingPath; {
	case at == "" || at == storePath:
		// Taken between the lookup and the create.
		return failf("%s was created by another writer just now, so nothing was written. Read it with memory_read; write again if your text should replace it.", full)
	case strings.HasPrefix(storePath, at+"/"):
		return failf("%s cannot be created: %s is a memory, and a memory cannot also be a directory holding others. Choose another path, or first move that memory (write its text to a new path, then delete it).", full, m.show(at))
	default:
		return failf("%s cannot be created: it is a directory holding %s, and a path cannot be both a directory and a memory. Choose another path, such as %s.md.", full, m.show(at), full)
	}
}

// updateError explains a failed update of an existing memory.
func updateError(err error, m *mount, full, done string) error {
	switch memstore.ErrorCode(err) {
	case memstore.EPreconditionFailed:
		return failf("%s was changed by another writer after it was read, so it was not %s and the other change was kept. Read it again with memory_read and redo your change on its current text.", full, done)
	case memstore.ENotFound:
		return failf("%s was deleted by another writer after it was read, so it was not %s. Check with memory_list; memory_write creates it again if it should exist.", full, done)
	}
	return explainChange(err, m, full)
}

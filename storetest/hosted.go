package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// The hosted API's answers, which its clients (Claude Code's team memory
// among them) match word for word: the messages are written out here,
// not taken from the root's constants, so that a change of wording
// fails.

// wantHosted checks that err is a 400 whose message is exactly message
// and whose detail, memstore's own account, contains detail.
func wantHosted(t *testing.T, err error, message, detail, what string) {
	t.Helper()
	if !wantCode(t, err, memstore.EInvalid, what) {
		return
	}
	var e *memstore.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %T is not a *memstore.Error", what, err)
	} else if e.Message != message || !strings.Contains(e.Detail, detail) {
		t.Errorf("%s: message %q, detail %q; want %q and a detail with %q", what, e.Message, e.Detail, message, detail)
	}
}

// testHostedLimits: each limit of a memory's path and content is refused
// in the hosted API's words, on create and on update, and changes
// nothing.
func testHostedLimits(t *testing.T, open func(*testing.T) backend) {
	b, sid := newStore(t, open)
	m := mustCreateMemory(t, b, wsA, sid, "/m.md", "m")
	for _, tc := range []struct{ name, path, content, message, detail string }{
		{"content", "", strings.Repeat("x", memstore.MaxContentBytes+1), "content must be at most 102400 bytes", "content is 102401 bytes"},
		{"path bytes", "/" + strings.Repeat("p", memstore.MaxPathBytes), "", "path must be at most 1024 bytes", "path is 1025 bytes long"},
		{"path depth", strings.Repeat("/a", memstore.MaxPathSegments+1), "", "path must be at most 20 segments deep", "has 21 segments"},
		{"dot segment", "/a/./b.md", "", "path must not contain . or .. segments", `has a "." segment`},
		{"dot dot segment", "/a/../b.md", "", "path must not contain . or .. segments", `has a ".." segment`},
		{"control character", "/a\tb.md", "", "path must not contain control or format characters", "U+0009"},
		{"format character", "/a\u200bb.md", "", "path must not contain control or format characters", "U+200B"},
		{"NFC", "/e\u0301.md", "", "path must be NFC-normalized", "not in Unicode NFC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, content := tc.path, tc.content
			if path == "" {
				path = "/new.md"
			}
			_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: path, Content: content}, actorKey)
			wantHosted(t, err, tc.message, tc.detail, "create")
			u := memstore.MemoryUpdate{}
			if tc.path != "" {
				u.Path = &path
			} else {
				u.Content = &content
			}
			_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, u, actorKey)
			wantHosted(t, err, tc.message, tc.detail, "update")
		})
	}
	checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/m.md", "m", true, "memory after refused writes")
	if items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{}); len(items) != 1 {
		t.Errorf("%d memories after refused creates, want 1", len(items))
	}
}

// testHostedMemoryLimit: a store at its cap refuses one more memory with
// the hosted API's message, memstore's (with the configured cap and its
// flag) in the detail.
func testHostedMemoryLimit(t *testing.T, openWithLimit func(*testing.T, int) backend) {
	b := openWithLimit(t, 1)
	s := mustCreateStore(t, b, wsA, "limited")
	mustCreateMemory(t, b, wsA, s.ID, "/a.md", "a")
	_, err := b.CreateMemory(t.Context(), wsA, s.ID, memstore.MemoryCreate{Path: "/b.md", Content: "b"}, actorKey)
	wantHosted(t, err, "memory store has reached its memory limit", "memory store "+s.ID+" is at its limit of 1 memories", "a memory beyond the cap")
	wantHosted(t, err, "memory store has reached its memory limit", "(memstore serve --max-memories-per-store)", "a memory beyond the cap")
}

// testContentRules: the hosted API's two rules on content, which a
// Core applies by default. Content that holds a credential is refused on
// create and update; the store's /MEMORY.md is refused when the
// prompt-index cap (200 lines, 25,000 UTF-16 units of its text without
// frontmatter and block comments) would cut it, whether written, updated
// or renamed there; a MEMORY.md elsewhere in the store is a topic file.
func testContentRules(t *testing.T, open func(*testing.T) backend) {
	const credentialMessage = "memory content appears to contain a credential or API key; remove it before writing. If the credential is real, rotate it."
	const indexMessage = "MEMORY.md content exceeds the prompt-index cap"
	// Assembled from parts, so that this file does not look like it
	// leaks any.
	key := "key: sk-ant-" + "api03-" + strings.Repeat("a1B2", 10)
	line := "- [Topic](topic.md) — when it matters\n"

	t.Run("Credentials", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/m.md", "notes")
		_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/k.md", Content: "deploy with\n" + key}, actorKey)
		wantHosted(t, err, credentialMessage, "Anthropic API key", "create")
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/m.md", Content: key, Upsert: true}, actorKey)
		wantHosted(t, err, credentialMessage, "Anthropic API key", "upsert")
		_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("postgres://app:" + "hunter2@db.internal/app")}, actorKey)
		wantHosted(t, err, credentialMessage, "password in a URL", "update")
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the refusal repeats the credential: %v", err)
		}
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/m.md", "notes", true, "memory after refused writes")
		// Words about credentials are no credential.
		mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("API keys live in the vault; never paste one here.")}, actorKey)
	})

	t.Run("Index", func(t *testing.T) {
		b, sid := newStore(t, open)
		full := strings.Repeat(line, memstore.MaxIndexLines)
		over := full + line
		_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/MEMORY.md", Content: over}, actorKey)
		wantHosted(t, err, indexMessage, "201 lines", "create of 201 lines")
		wide := strings.Repeat("é", memstore.MaxIndexUnits+1) // one UTF-16 unit each, two bytes
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/MEMORY.md", Content: wide}, actorKey)
		wantHosted(t, err, indexMessage, "25001 UTF-16 units", "create of 25,001 units")
		// At the cap is fine, and so is what the cap does not count.
		x := mustCreateMemory(t, b, wsA, sid, "/MEMORY.md", full)
		mustUpdateMemory(t, b, wsA, sid, x.ID, memstore.MemoryUpdate{Content: ptr("---\nname: index\n---\n<!--\n" + strings.Repeat("note\n", 50) + "-->\n" + full)}, actorKey)
		mustUpdateMemory(t, b, wsA, sid, x.ID, memstore.MemoryUpdate{Content: ptr(strings.Repeat("é", memstore.MaxIndexUnits))}, actorKey)
		_, err = b.UpdateMemory(t.Context(), wsA, sid, x.ID, memstore.MemoryUpdate{Content: &over}, actorKey)
		wantHosted(t, err, indexMessage, "201 lines", "update")
		// A topic file renamed to the index is measured as the index.
		topic := mustCreateMemory(t, b, wsA, sid, "/topics/long.md", over)
		mustDeleteMemory(t, b, wsA, sid, x.ID, actorKey)
		_, err = b.UpdateMemory(t.Context(), wsA, sid, topic.ID, memstore.MemoryUpdate{Path: ptr("/MEMORY.md")}, actorKey)
		wantHosted(t, err, indexMessage, "201 lines", "rename to the index")
		checkMemory(t, mustMemory(t, b, wsA, sid, topic.ID), "/topics/long.md", over, true, "topic after a refused rename")
		// Only the store's root holds its index.
		mustCreateMemory(t, b, wsA, sid, "/team/MEMORY.md", over)
		mustCreateMemory(t, b, wsA, sid, "/memory.md", over)
	})
}

// testNotExistsConflict: a create whose not_exists precondition fails
// names the memory in the way, as a path conflict does.
func testNotExistsConflict(t *testing.T, open func(*testing.T) backend) {
	b, sid := newStore(t, open)
	m := mustCreateMemory(t, b, wsA, sid, "/notes/a.md", "a")
	for _, path := range []string{"/notes/a.md", "/notes", "/notes/a.md/b.md"} {
		_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: path, Content: "b", IfNotExists: true}, actorKey)
		if !wantCode(t, err, memstore.EPreconditionFailed, path) {
			continue
		}
		var e *memstore.Error
		if !errors.As(err, &e) || e.ConflictingMemoryID != m.ID || e.ConflictingPath != "/notes/a.md" {
			t.Errorf("%s: %#v, want a conflict with (%q, /notes/a.md)", path, err, m.ID)
		}
	}
}

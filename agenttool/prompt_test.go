package agenttool_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
)

func TestPrompt(t *testing.T) {
	prefs := &memstore.Store{ID: "memstore_01prefs", Name: "User Preferences", Description: "Per-user preferences and project context."}
	notes := &memstore.Store{ID: "memstore_01notes", Name: "Notes", Description: ""}
	team := &memstore.Store{ID: "memstore_01team", Name: "Team Conventions", Description: "How the team works.\r\nCoding standards, review rules.  \n"}
	tests := []struct {
		name string
		s    *memstore.Session
	}{
		{"one_store", newSession(attach{store: notes, instr: "Keep a log of each task under /tasks/."})},
		{"mixed", newSession(
			attach{store: prefs, readOnly: true, instr: "User preferences and project context. Check before starting any task."},
			attach{store: notes},
			attach{store: team, readOnly: true, instr: "Follow these.\n\n- Never push to main.\n- Ask before deleting."},
		)},
		{"read_only", newSession(attach{store: prefs, readOnly: true})},
		{"no_stores", newSession()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := agenttool.Prompt(tt.s)
			if again := agenttool.Prompt(tt.s); again != got {
				t.Fatal("two renderings of one session differ")
			}
			golden(t, "prompt_"+tt.name+".golden", got)
			for _, a := range tt.s.Attachments {
				wantContains(t, got, "### "+a.Name+"\n- Mount path: "+a.MountPath+"/\n")
				if a.Description != "" {
					wantContains(t, got, "- Description: "+strings.SplitN(strings.TrimSpace(strings.ReplaceAll(a.Description, "\r", "")), "\n", 2)[0])
				}
				if a.Instructions != "" {
					wantContains(t, got, "- Instructions: "+strings.SplitN(a.Instructions, "\n", 2)[0])
				}
				access := "- Access: read-write."
				if !a.Writable() {
					access = "- Access: read-only."
				}
				wantContains(t, got, "- Mount path: "+a.MountPath+"/\n"+access)
			}
			if len(tt.s.Attachments) > 0 {
				wantContains(t, got, "memory_list", "memory_search", "memory_read", "memory_write", "memory_edit", "memory_delete",
					"before doing anything else", "context can be reset at any moment")
			}
		})
	}
	if got := agenttool.Prompt(nil); got != "" {
		t.Errorf("Prompt(nil) = %q", got)
	}
}

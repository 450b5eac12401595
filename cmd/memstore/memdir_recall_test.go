package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMemdirRecallConversation: memdir recall --conversation ranks the
// files of a directory of conversations with their neighbouring turns.
func TestMemdirRecallConversation(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"chats/c1/0001.md": "Ana: we adopted a rescue dog from the shelter, finally a dog of our own\n",
		"chats/c1/0002.md": "Ben: a dog! what breed is the dog?\n",
		"chats/c1/0003.md": "Ana: a beagle called Biscuit, who sleeps all day long on the sofa\n",
		"chats/c2/0001.md": "Cem: beagle\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := func(args ...string) string {
		t.Helper()
		code, out, errs := run(t, "", append([]string{"memdir", "recall", "--dir", dir, "--body", "--json", "--limit", "10"}, args...)...)
		var res struct {
			Hits []struct {
				File string `json:"file"`
			} `json:"hits"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Hits) == 0 {
			t.Fatalf("memdir recall %v: exit %d: %s %s", args, code, out, errs)
		}
		var files []string
		for _, h := range res.Hits {
			files = append(files, h.File)
		}
		i, j := slices.Index(files, "chats/c1/0003.md"), slices.Index(files, "chats/c2/0001.md")
		if i < 0 || j < 0 {
			t.Fatalf("memdir recall %v: %q; want both beagles", args, files)
		}
		if i < j {
			return "answer"
		}
		return "lone"
	}
	if got := first("dog", "beagle"); got != "lone" {
		t.Errorf("without --conversation the %s beagle first; want the lone one (the data tells nothing apart otherwise)", got)
	}
	if got := first("--conversation", "dog", "beagle"); got != "answer" {
		t.Errorf("with --conversation the %s beagle first; want the answer", got)
	}
}

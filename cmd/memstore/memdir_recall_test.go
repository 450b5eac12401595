package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/memdir"
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
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
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

// TestMemdirRecallModes: memdir recall with an embedding endpoint finds
// by meaning (hybrid by default), keeps the files' vectors in the
// directory, and says what is wrong with a mode without a model or a
// model that fails; as a hook, a failing model leaves recall by words.
func TestMemdirRecallModes(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"notes.md":      "---\nname: Notes\ndescription: miscellany\ntype: user\n---\nThe staging cluster is called kestrel.\n",
		"dashboards.md": "---\nname: Grafana\ndescription: latency dashboards for the API live in Grafana\ntype: reference\n---\nSee Grafana.\n",
	} {
		writeFile(t, filepath.Join(dir, name), text)
	}
	srv := embedtest.New(t, 32)
	model := []string{"--embed-url", srv.BaseURL(), "--embed-model", "words"}
	recall := func(args ...string) (int, []string, string) {
		t.Helper()
		code, out, errs := run(t, "", append([]string{"memdir", "recall", "--dir", dir, "--json"}, args...)...)
		var res struct {
			Hits []struct {
				File string `json:"file"`
			} `json:"hits"`
		}
		if code <= 1 && json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("memdir recall %v: exit %d: %q %s", args, code, out, errs)
		}
		var files []string
		for _, h := range res.Hits {
			files = append(files, h.File)
		}
		return code, files, errs
	}
	if code, files, errs := recall(append(model, "kestrel", "staging")...); code != 0 || !slices.Contains(files, "notes.md") {
		t.Errorf("hybrid by default: exit %d, %q %s; want notes.md", code, files, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, memdir.VectorCacheName)); err != nil {
		t.Errorf("the vectors are not kept in the directory: %v", err)
	}
	if code, files, _ := recall(append(model, "--mode", "lexical", "kestrel", "staging")...); code != 1 {
		t.Errorf("--mode lexical: exit %d, %q; want nothing found (the words are in a body)", code, files)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--mode", "semantic", "kestrel"}, 2, "needs an embedding model"},
		{[]string{"--mode", "fuzzy", "kestrel"}, 2, "must be one of lexical, semantic, hybrid"},
		{[]string{"--embed-url", "http://127.0.0.1:1/v1", "--embed-model", "m", "kestrel"}, 6, "embedding model failed"},
		{[]string{"--embed-model", "m", "kestrel"}, 2, "need --embed-url"},
	} {
		if code, _, errs := recall(tt.args...); code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("memdir recall %v: exit %d, %s; want %d with %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
	// A model2vec model in the process: the words' hash vectors, an
	// unknown word's zero.
	vocab := []string{"[UNK]", "[PAD]", "kestrel", "staging", "cluster", "grafana", "latency", "notes", "dashboards"}
	rows := make([]float32, 16*2)
	for _, w := range vocab[2:] {
		rows = append(rows, embedtest.Vector(w, 16)...)
	}
	modelDir := filepath.Join(t.TempDir(), "model")
	embedtest.WriteModel2Vec(t, modelDir, vocab, true, map[string]embedtest.Tensor{"embeddings": {Dtype: "F32", Shape: []int{len(vocab), 16}, Data: embedtest.F32(rows...)}})
	if code, files, errs := recall("--embed-model-file", modelDir, "--mode", "semantic", "kestrel", "staging"); code != 0 || len(files) == 0 || files[0] != "notes.md" {
		t.Errorf("--embed-model-file --mode semantic: exit %d, %q %s; want notes.md first", code, files, errs)
	}
	hook := `{"hook_event_name":"UserPromptSubmit","prompt":"grafana latency"}`
	code, out, errs := run(t, hook, "memdir", "recall", "--hook", "user-prompt-submit", "--dir", dir, "--embed-url", "http://127.0.0.1:1/v1", "--embed-model", "m")
	if code != 0 || !strings.Contains(out, "dashboards.md") {
		t.Errorf("hook with a failing model: exit %d, %q %s; want the recall by words", code, out, errs)
	}
}

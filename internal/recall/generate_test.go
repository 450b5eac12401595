package recall_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/recall"
)

// TestGenerateEvidence: a generated question's evidence is every turn
// that answers it. People and facts recur across conversations, so a
// turn that says word for word what an evidence turn says, by the same
// person when the question names one, answers the question as well.
func TestGenerateEvidence(t *testing.T) {
	docs, qs, err := recall.Generate(1, 100).Docs()
	if err != nil {
		t.Fatal(err)
	}
	// A turn's content is "[date] speaker: text": what it says is the
	// rest after the date.
	said := map[string]string{}
	for _, d := range docs {
		_, said[d.ID], _ = strings.Cut(d.Content, "] ")
	}
	missing, several := 0, 0
	for _, q := range qs {
		if len(q.Relevant) > 1 {
			several++
		}
		for _, ev := range q.Relevant {
			speaker, text, _ := strings.Cut(said[ev], ": ")
			named := strings.Contains(q.Query, speaker)
			for _, d := range docs {
				s, dt, _ := strings.Cut(said[d.ID], ": ")
				if dt == text && (s == speaker || !named) && !slices.Contains(q.Relevant, d.ID) {
					if missing++; missing <= 5 {
						t.Errorf("%q: %s says %q as %s does, and is not among the evidence %v", q.Query, d.ID, said[d.ID], ev, q.Relevant)
					}
				}
			}
		}
	}
	if missing > 5 {
		t.Errorf("and %d more turns missing", missing-5)
	}
	if several == 0 {
		t.Error("no question has more than one answer: the test proves nothing")
	}
}

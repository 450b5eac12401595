package recall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/memstore/memstore"
)

// Conversations is the JSON file of conversations `memstore bench recall
// --conversations` reads: each turn becomes one memory, at
// /conversations/<id>/<turn>.md with the turn numbered from 1 in four
// digits, its content "[date] speaker: text" (the date and speaker when
// given), and each question's evidence names the turns that answer it.
//
//	{"conversations": [{"id": "c1", "turns": [{"speaker": "Ana", "date": "2024-03-12", "text": "..."}]}],
//	 "questions": [{"question": "...", "evidence": [{"conversation": "c1", "turn": 3}]}]}
type Conversations struct {
	Conversations []Conversation `json:"conversations"`
	Questions     []Question     `json:"questions"`
}

// A Conversation is turns in order.
type Conversation struct {
	ID    string `json:"id"`
	Turns []Turn `json:"turns"`
}

// A Turn is one message of a conversation.
type Turn struct {
	Speaker string `json:"speaker,omitempty"`
	Date    string `json:"date,omitempty"`
	Text    string `json:"text"`
}

// A Question is a query and the turns that answer it.
type Question struct {
	Question string     `json:"question"`
	Evidence []Evidence `json:"evidence"`
}

// Evidence names a turn, numbered from 1.
type Evidence struct {
	Conversation string `json:"conversation"`
	Turn         int    `json:"turn"`
}

// TurnPath is where a conversation's turn is kept: the conversation's
// directory, and the turn's number, which is how search tells a
// conversation's turns and their order (searchtext.TurnOf).
func TurnPath(conversation string, turn int) string {
	return fmt.Sprintf("/conversations/%s/%04d.md", conversation, turn)
}

// ReadConversations reads a conversations file as documents, one a turn,
// and queries.
func ReadConversations(r io.Reader) ([]Doc, []Query, error) {
	d := json.NewDecoder(r)
	d.DisallowUnknownFields()
	var cs Conversations
	if err := d.Decode(&cs); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object of conversations and questions: %v", err)
	}
	return cs.Docs()
}

// Docs turns the conversations into documents and queries, checking that
// every turn is a memory memstore accepts and every question names turns
// that exist.
func (cs Conversations) Docs() ([]Doc, []Query, error) {
	var docs []Doc
	turns := map[string]int{}
	for _, c := range cs.Conversations {
		if c.ID == "" {
			return nil, nil, errors.New(`a conversation has no "id"`)
		}
		if _, ok := turns[c.ID]; ok {
			return nil, nil, fmt.Errorf("conversation %q is given twice", c.ID)
		}
		turns[c.ID] = len(c.Turns)
		for i, t := range c.Turns {
			d := Doc{ID: TurnPath(c.ID, i+1), Content: t.Text}
			d.Path = d.ID
			if t.Speaker != "" {
				d.Content = t.Speaker + ": " + d.Content
			}
			if t.Date != "" {
				d.Content = "[" + t.Date + "] " + d.Content
			}
			if err := memstore.ValidatePath(d.Path); err != nil {
				return nil, nil, fmt.Errorf("conversation %q: %s", c.ID, memstore.ErrorMessage(err))
			}
			if err := memstore.ValidateContent(d.Content); err != nil {
				return nil, nil, fmt.Errorf("conversation %q, turn %d: %s", c.ID, i+1, memstore.ErrorMessage(err))
			}
			docs = append(docs, d)
		}
	}
	var qs []Query
	for i, q := range cs.Questions {
		if err := memstore.ValidateSearchQuery(memstore.SearchQuery{Text: q.Question}); err != nil {
			return nil, nil, fmt.Errorf("question %d: %s", i+1, memstore.ErrorMessage(err))
		}
		if len(q.Evidence) == 0 {
			return nil, nil, fmt.Errorf("question %d (%q) names no evidence", i+1, q.Question)
		}
		query := Query{Query: q.Question}
		for _, e := range q.Evidence {
			if n, ok := turns[e.Conversation]; !ok || e.Turn < 1 || e.Turn > n {
				return nil, nil, fmt.Errorf("question %d (%q): no turn %d in conversation %q", i+1, q.Question, e.Turn, e.Conversation)
			}
			query.Relevant = append(query.Relevant, TurnPath(e.Conversation, e.Turn))
		}
		qs = append(qs, query)
	}
	return docs, qs, nil
}

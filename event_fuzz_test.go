package memstore

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzTurnDrafts turns hostile turns into transcript events: a turn is
// refused with EInvalid or becomes events of the SDKs' agent and user
// types, each a JSON object whose type is its own.
func FuzzTurnDrafts(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"tu_1","name":"memory_read","input":{"path":"/a"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":[{"type":"text","text":"a"}],"is_error":false}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"tool_use","name":"n","input":null}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"image","source":{}},{"type":"tool_result","tool_use_id":"x","content":"s"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"system","content":"\u0000"}]}`))
	types := []string{"user.message", "agent.message", "agent.tool_use", "agent.tool_result", "agent.thinking"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var turn Turn
		if json.Unmarshal(data, &turn) != nil {
			return
		}
		drafts, err := turnDrafts(turn)
		if err != nil {
			if ErrorCode(err) != EInvalid {
				t.Fatalf("a turn refused with %v, not EInvalid", err)
			}
			return
		}
		if len(drafts) == 0 {
			return // a turn of empty messages: nothing to keep
		}
		for i, d := range drafts {
			if !slices.Contains(types, d.typ) {
				t.Fatalf("event %d has type %q", i, d.typ)
			}
			if d.checkSize("event") != nil {
				continue
			}
			b, err := d.body(nil)
			if err != nil {
				continue
			}
			var obj map[string]json.RawMessage
			var typ string
			if json.Unmarshal(b, &obj) != nil || json.Unmarshal(obj["type"], &typ) != nil || typ != d.typ {
				t.Fatalf("event %d of type %q has body %s", i, d.typ, b)
			}
		}
	})
}

package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// testTranscriptPageBytes: a page of events holds at most
// memstore.MaxSessionEventPageBytes of them (at least one event), whatever
// its limit, so that reading or streaming a transcript of large events
// holds a bounded amount at a time; the pages together still hold every
// event, in order.
func testTranscriptPageBytes(t *testing.T, b Services) {
	ctx := t.Context()
	key := keyCaller(wsA, actorKey)
	s, _, _, err := b.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	// Events of 200 KiB, 4 to a request (within a request body's MiB).
	const size, n = 200 << 10, 48
	var want []string
	for len(want) < n {
		var batch []json.RawMessage
		for range 4 {
			raw, _ := json.Marshal(map[string]any{"type": "user.message", "content": []any{map[string]string{"type": "text", "text": strings.Repeat("e", size)}}})
			batch = append(batch, raw)
		}
		out, err := b.SendSessionEvents(ctx, key, s.ID, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range out {
			want = append(want, ev.ID)
		}
	}
	for _, desc := range []bool{false, true} {
		f := memstore.SessionEventFilter{Limit: memstore.MaxPageSize, Descending: desc}
		var got []string
		pages := 0
		for {
			page, err := b.ListSessionEvents(ctx, key, s.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			bytes := 0
			for _, ev := range page.Items {
				bytes += len(ev.Body)
				got = append(got, ev.ID)
			}
			if len(page.Items) == 0 || bytes > memstore.MaxSessionEventPageBytes {
				t.Fatalf("descending %v: a page of %d events, %d bytes; want 1 or more, within %d", desc, len(page.Items), bytes, memstore.MaxSessionEventPageBytes)
			}
			if f.Page = page.Next; f.Page == "" {
				break
			}
			if pages > n {
				t.Fatal("the pages do not end")
			}
		}
		w := append([]string(nil), want...)
		if desc {
			for i, j := 0, len(w)-1; i < j; i, j = i+1, j-1 {
				w[i], w[j] = w[j], w[i]
			}
		}
		if strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("descending %v: the pages hold %d events, want the %d appended, in order", desc, len(got), len(w))
		}
		if pages < 2 {
			t.Errorf("descending %v: %d events of %d bytes came in one page", desc, n, size)
		}
	}
}

package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// tokens makes n sessions attaching f's store, each with two more tokens
// minted by f's key, and returns all their tokens.
func (f *feedFixture) tokens(t *testing.T, n int) []string {
	t.Helper()
	var tokens []string
	for range n {
		s, _, secret, err := f.c.CreateSession(t.Context(), nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.store.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, secret)
		for range 2 {
			_, secret, err := f.c.CreateSessionToken(t.Context(), nil, s.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, secret)
		}
	}
	return tokens
}

// stream opens an event stream of f's store as secret, ended with the
// test; it returns the response, whose body is closed at the end.
func (f *feedFixture) stream(t *testing.T, secret string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	res := f.get(t, ctx, secret, "", "Accept", "text/event-stream")
	t.Cleanup(func() {
		cancel()
		res.Body.Close()
	})
	return res
}

// otherWorkspace makes another workspace on f's server, with a key and
// a store, and returns a fixture of that store and the key's secret.
func (f *feedFixture) otherWorkspace(t *testing.T) (*feedFixture, string) {
	t.Helper()
	_, _, secret := f.h.newKey(t, "other")
	st, err := f.h.client(secret).CreateStore(t.Context(), nil, memstore.StoreCreate{Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	return &feedFixture{h: f.h, store: st}, secret
}

// TestEventsWorkspaceShare: one workspace's API key mints session tokens
// and opens streams with each, as many as each may: the workspace holds
// no more than its share of the server's streams (429 beyond, naming the
// flag), and another workspace's stream opens at once.
func TestEventsWorkspaceShare(t *testing.T) {
	const max, share, perCredential = 6, 3, 2
	f := newFeedFixture(t, harnessOptions{configure: func(c *httpapi.Config) {
		c.MaxStreams, c.MaxStreamsPerWorkspace, c.MaxStreamsPerCredential = max, share, perCredential
	}})
	opened := 0
	for _, token := range append(f.tokens(t, 2), f.c.APIKey) {
		for range perCredential {
			res := f.stream(t, token)
			switch res.StatusCode {
			case http.StatusOK:
				opened++
			case http.StatusTooManyRequests:
				if b, _ := io.ReadAll(res.Body); opened >= share && (!strings.Contains(string(b), "this workspace is at its limit of 3 open event streams") || !strings.Contains(string(b), "(memstore serve --feed-max-streams-per-workspace)")) {
					t.Errorf("429 %s; want the message to name the workspace's share", b)
				}
			default:
				t.Fatalf("a stream: %d", res.StatusCode)
			}
		}
	}
	if opened != share {
		t.Errorf("one workspace opened %d streams; want its share, %d", opened, share)
	}

	theirs, other := f.otherWorkspace(t)
	if res := theirs.stream(t, other); res.StatusCode != http.StatusOK {
		t.Errorf("another workspace's stream, with the first at its share: %d", res.StatusCode)
	}
}

// TestEventsFullServerReclaims: when one workspace holds every stream of
// the server (its share is all of them), another workspace's stream ends
// the oldest stream of the workspace holding the most, which is told why,
// until both hold as many; the first cannot take them back.
func TestEventsFullServerReclaims(t *testing.T) {
	const max = 4
	f := newFeedFixture(t, harnessOptions{configure: func(c *httpapi.Config) {
		c.MaxStreams, c.MaxStreamsPerWorkspace, c.MaxStreamsPerCredential = max, max, max
	}})
	var mine []*http.Response
	for range max {
		res := f.stream(t, f.c.APIKey)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("a stream: %d", res.StatusCode)
		}
		mine = append(mine, res)
	}
	theirs, other := f.otherWorkspace(t)
	if res := theirs.stream(t, other); res.StatusCode != http.StatusOK {
		t.Fatalf("another workspace's stream at a full server: %d", res.StatusCode)
	}
	// The oldest of the first workspace's streams ends, saying why.
	ended := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(mine[0].Body))
		ended <- string(b)
	}()
	select {
	case b := <-ended:
		if !strings.Contains(b, "event: error") || !strings.Contains(b, "overloaded_error") || !strings.Contains(b, "another workspace") {
			t.Errorf("the stream ended to make room: %q; want an error event saying why", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no stream of the workspace holding all was ended")
	}

	if res := f.stream(t, f.c.APIKey); res.StatusCode != 529 {
		t.Errorf("the first workspace, holding 3 of 4, opening another: %d; want 529", res.StatusCode)
	}
	if res := theirs.stream(t, other); res.StatusCode != http.StatusOK { // 2 against 2
		t.Errorf("the second workspace's second stream: %d", res.StatusCode)
	}
	if res := theirs.stream(t, other); res.StatusCode != 529 {
		t.Errorf("the second workspace, holding as many as the first, opening another: %d; want 529", res.StatusCode)
	}
}

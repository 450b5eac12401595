package scriptedmodel_test

import (
	"net/http"
	"strings"
	"testing"

	sm "github.com/memstore/memstore/internal/scriptedmodel"
)

func TestServerAnswersOnlyMessagesAndRecords(t *testing.T) {
	s := sm.New(t, sm.Seq(sm.Answer(sm.Usage{InputTokens: 1}, sm.Text("hi"))))
	res, err := http.Get(s.URL + sm.Path)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET = %d, want 404", res.StatusCode)
	}
	body := `{"model":"m","max_tokens":5,"system":"sys","messages":[{"role":"user","content":"hello"}]}`
	for i, want := range []int{200, 500} {
		res, err := http.Post(s.URL+sm.Path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("request %d = %d, want %d", i+1, res.StatusCode, want)
		}
		if i == 1 && res.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("an exhausted script asks for retries")
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].N != 1 || reqs[0].System != "sys" || reqs[0].Messages[0].Content[0].Text != "hello" || reqs[0].MaxTokens != 5 {
		t.Errorf("requests = %+v", reqs)
	}
}

package webdriver

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClient drives a form through each browser that is installed: it
// types, submits with Enter, reads text, follows a link by its text,
// moves the focus with Tab, runs a script that sees the page's own
// script's variables (the console's tests rely on it) and sees a missing element
// reported as such.
func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form action="/got"><input id="q" name="q"><button id="go">go</button></form>
<a id="first" href="/got?q=first">first link</a><p id="said">%s</p><script>window.ran = 1</script>`, html.EscapeString(r.FormValue("q")))
	}))
	defer srv.Close()
	browsers := map[string]func(t *testing.T) (*Session, error){
		"firefox": func(t *testing.T) (*Session, error) {
			if FirefoxPath() == "" {
				t.Skip("no firefox-esr on PATH (apt-get install firefox-esr)")
			}
			return Firefox(t.TempDir(), Options{})
		},
		"webkit": func(t *testing.T) (*Session, error) {
			if WebKitDriverPath() == "" || XvfbPath() == "" {
				t.Skip("no WebKitWebDriver or Xvfb on PATH (apt-get install webkit2gtk-driver xvfb)")
			}
			return WebKit(Options{})
		},
	}
	for name, open := range browsers {
		t.Run(name, func(t *testing.T) {
			s, err := open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Navigate(srv.URL); err != nil {
				t.Fatal(err)
			}
			if err := s.Type("#q", "a <b> & c"+Enter); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait("#said:not(:empty)"); err != nil {
				t.Fatal(err)
			}
			u, _ := s.URL()
			if said := s.Text("#said"); said != "a <b> & c" || u != srv.URL+"/got?q=a+%3Cb%3E+%26+c" {
				t.Errorf("after Enter: text %q at %s", said, u)
			}
			if err := s.ClickLink("first link"); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait("#said:not(:empty)"); err != nil || s.Text("#said") != "first" {
				t.Errorf("after the link: %q (%v)", s.Text("#said"), err)
			}
			// Tab from the page's start: the field, the button, the link.
			if err := s.Navigate(srv.URL); err != nil {
				t.Fatal(err)
			}
			if err := s.Keys(Tab + Tab + Tab); err != nil {
				t.Fatal(err)
			}
			var id string
			if err := s.Eval(`return document.activeElement.id`, &id); err != nil || id != "first" {
				t.Errorf("three tabs reach %q, not the link (%v)", id, err)
			}
			var ran int
			if err := s.Eval(`return window.ran`, &ran); err != nil || ran != 1 {
				t.Errorf("the page's script's variable, seen from a script: %d (%v)", ran, err)
			}
			if _, err := s.Find("#nothing"); !IsNoSuchElement(err) {
				t.Errorf("a missing element: %v", err)
			}
		})
	}
}

package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// copyJSHash is the CSP hash source of static/copy.js, as read from the
// file itself.
func copyJSHash(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("static/copy.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// wantCSP is the policy every response of the console carries.
func wantCSP(t *testing.T) string {
	return "default-src 'none'; script-src '" + copyJSHash(t) + "'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

var scriptRE = regexp.MustCompile(`<script[^>]*>`)

// TestCopyScript: a signed-in page loads one script, the console's
// copy.js (and has no copy button of its own, which the script adds),
// with the integrity of the file it is served and that the
// policy names; its versioned address is cached for good, any other
// address of it not at all; a signed-out page has no script.
func TestCopyScript(t *testing.T) {
	f := newFixture(t, "x")
	resp, page := f.get(t, f.signIn(t, "admin"), "/console/stores")
	tags := scriptRE.FindAllString(page, -1)
	m := regexp.MustCompile(`^<script src="(/console/static/copy\.js\?v=[0-9a-f]{16})" integrity="(sha256-[^"]+)" defer>$`).FindStringSubmatch(strings.Join(tags, ""))
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the stores page's scripts: %q", tags)
	}
	src, integrity := m[1], html.UnescapeString(m[2])
	// Without script the page is the same: the script adds the buttons.
	if !strings.Contains(page, `<code class="id" title="`+f.storeID+`">`) || strings.Contains(page, "<button type=\"button\"") || strings.Contains(page, `class="copy"`) {
		t.Errorf("the page has a button before any script runs, or no short ID:\n%s", page)
	}
	if integrity != copyJSHash(t) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src '"+integrity+"';") {
		t.Errorf("integrity %s; the file's hash %s; the policy %q", integrity, copyJSHash(t), resp.Header.Get("Content-Security-Policy"))
	}
	resp, body := f.get(t, f.client(t), src)
	sum := sha256.Sum256([]byte(body))
	if resp.StatusCode != http.StatusOK || "sha256-"+base64.StdEncoding.EncodeToString(sum[:]) != integrity ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") ||
		resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET %s: %d, Content-Type %q, Cache-Control %q", src, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	for _, other := range []string{"/console/static/copy.js", "/console/static/copy.js?v=0123456789abcdef"} {
		if resp, _ := f.get(t, f.client(t), other); resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d, Cache-Control %q, want no-store", other, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	if _, page := f.get(t, f.client(t), "/console/signin"); strings.Contains(page, "<script") {
		t.Errorf("the sign-in page has a script:\n%s", page)
	}
}

package main

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBadText: a real server on each backend, signed in to
// or not, is sent NUL and invalid UTF-8 in the console's sign-in form,
// its IDs and filters, and the API's: a sign-in fails as any wrong one
// does, the rest is refused with a 4xx, and nothing is a 500 or an error
// in the log.
func TestServeRefusesBadText(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			clearEnv(t)
			db := filepath.Join(t.TempDir(), "m.db")
			if backend == "postgres" {
				db = postgresDB(t, "pw")
			}
			const pw = "correct horse battery"
			if code, out, errOut := run(t, pw+"\n", "users", "create", "--db", db, "--name", "ann", "--role", "admin"); code != 0 {
				t.Fatalf("users create: %d %s %s", code, out, errOut)
			}
			s := startServer(t, "--db", db)
			a := s.api(t)
			store := a.createStore(t, "notes")
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			signIn := func(workspace, name, password string) (int, string) {
				t.Helper()
				form := url.Values{"workspace": {workspace}, "name": {name}, "password": {password}}
				req, _ := http.NewRequest(http.MethodPost, s.url+"/console/signin", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", s.url)
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var b strings.Builder
				res.Write(&b)
				return res.StatusCode, b.String()
			}
			for _, f := range [][2]string{{"default", "ann\x00"}, {"default\x00", "ann"}, {"default", "\xff"}, {"\xffx", "ann"}, {"default", "ann"}} {
				status, body := signIn(f[0], f[1], "wrong password!")
				if status != http.StatusUnauthorized || !strings.Contains(body, "wrong workspace, user name or password") {
					t.Errorf("sign in as %q in %q: %d\n%s", f[1], f[0], status, body)
				}
			}
			if status, body := signIn("default", "ann", pw); status != http.StatusSeeOther {
				t.Fatalf("sign in: %d\n%s", status, body)
			}
			for _, path := range []string{
				"/console/stores/%00", "/console/stores/%FF", "/console/stores/" + store + "/memories/%00",
				"/console/stores/" + store + "?path=/%00", "/console/stores/" + store + "/versions/%00",
				"/console/stores/" + store + "/memories/%00/history", "/console/stores/%00/search?q=x",
				"/console/stores/" + store + "/search?q=%FF", "/console/sessions/%00", "/console/activity?store=%00",
				"/console/activity?actor_type=api_key&actor=%00", "/console/activity?actor_type=session&actor=%FF",
				"/console/stores?page=%00", "/console/keys?page=%00", "/console/users?page=%00",
			} {
				res, err := c.Get(s.url + path)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusBadRequest {
					t.Errorf("GET %s: %d, want 400", path, res.StatusCode)
				}
			}
			for _, path := range []string{"/v1/memory_stores/%00", "/v1/memory_stores/" + store + "/memories?path_prefix=/%FF",
				"/v1/sessions?agent_id=%00", "/v1/organizations/webhooks/%00"} {
				if status, body, err := a.call("GET", path, nil, nil); err != nil || status != http.StatusBadRequest {
					t.Errorf("GET %s: %d %s %v, want 400", path, status, body, err)
				}
			}
			if log := s.stderr.String(); strings.Contains(log, "level=ERROR") || strings.Contains(log, `"level":"ERROR"`) {
				t.Errorf("an error was logged:\n%s", log)
			}
		})
	}
}

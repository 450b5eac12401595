package main

import (
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/webdriver"
)

// phoneWidth is the window width, in CSS pixels, of a small phone, at
// which no console page may scroll sideways.
const phoneWidth = 360

// TestConsoleInFirefox runs the console's main flows in a headless
// Firefox (consoleFlowsIn).
func TestConsoleInFirefox(t *testing.T) {
	if webdriver.FirefoxPath() == "" {
		skipOrFailInCI(t, "no firefox-esr or firefox on PATH: the console's Firefox test needs one (apt-get install firefox-esr)")
	}
	srv, _ := startConsoleServer(t)
	consoleFlowsIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		s, err := webdriver.Firefox(t.TempDir(), o)
		if err == nil {
			t.Logf("browser: %s", s.Browser)
		}
		return s, err
	})
}

// TestConsoleInWebKit runs the console's main flows in WebKitGTK, the
// engine of Safari, through WebKitWebDriver (consoleFlowsIn).
func TestConsoleInWebKit(t *testing.T) {
	if webdriver.WebKitDriverPath() == "" || webdriver.MiniBrowserPath() == "" || webdriver.XvfbPath() == "" {
		skipOrFailInCI(t, "no WebKitWebDriver, MiniBrowser or Xvfb: the console's WebKit test needs them (apt-get install webkit2gtk-driver xvfb)")
	}
	srv, _ := startConsoleServer(t)
	consoleFlowsIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		s, err := webdriver.WebKit(o)
		if err == nil {
			t.Logf("browser: %s", s.Browser)
		}
		return s, err
	})
}

// consolePage is a browser as the shared console flow drives it: a
// *webdriver.Session, or Chromium through chromedpPage.
type consolePage interface {
	Navigate(url string) error
	URL() (string, error)
	Wait(sel string) error                // an element sel matches appears
	Click(sel string) error               // waits for it first
	ClickLink(text string) error          // the link whose text is text
	Type(sel, text string) error          // clears the field first; "\n" and webdriver.Enter press Enter
	Text(sel string) string               // "" when nothing matches
	Eval(script string, out any) error    // script is a function's body
	Keys(keys string) error               // to the focus; webdriver.Tab, webdriver.Enter
	ResizeWindow(width, height int) error // the browser may keep it wider
	Close()
}

// openPage starts a browser for the shared flow.
type openPage func(*testing.T, webdriver.Options) (consolePage, error)

// skipOrFailInCI skips the test for want of a browser, or fails it under
// CI, which installs every browser the tests drive.
func skipOrFailInCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why + "; CI must run it: .ci/run installs the packages")
	}
	t.Skip(why)
}

// consoleFlowsIn drives the console of srv (as startConsoleServer makes
// it) through a browser that open starts:
// sign in with the keyboard (Enter submits), Tab reaches the main links
// with a visible focus, browse a store's tree to a memory whose content
// tries to run script (nothing runs), edit and save, a conflicting edit
// made through the API meanwhile (shown, nothing lost), search with its
// matches highlighted, a history diff, and sign out; then, in a second
// browser that prefers dark and is phone-narrow, the main pages in dark
// colours with nothing scrolling sideways.
func consoleFlowsIn(t *testing.T, srv *child, open openPage) {
	base := srv.url + "/console/"
	storeID := apiPost(t, srv, "/v1/memory_stores", `{"name":"Plans"}`)
	memID := apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/notes/plan.md","content":"step one\nstep two\n"}`)
	memURL := base + "stores/" + storeID + "/memories/" + memID
	content := func(t *testing.T) string {
		var m struct{ Content string }
		if code := apiGet(t, srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, &m); code != http.StatusOK {
			t.Fatalf("GET the memory: %d", code)
		}
		return m.Content
	}
	start := func(t *testing.T, o webdriver.Options) consolePage {
		s, err := open(t, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	// signIn signs meg, a member, in, pressing Enter in the password
	// field. (Not ann: the Chromium test signs her in often enough
	// already for the sign-in rate limit.)
	signIn := func(s consolePage) error {
		return errors.Join(s.Navigate(base+"signin"), s.Type("#name", "meg"),
			s.Type("#password", consolePassword+webdriver.Enter), s.Wait("table"))
	}
	s := start(t, webdriver.Options{})

	t.Run("sign in with the keyboard", func(t *testing.T) {
		if err := signIn(s); err != nil {
			t.Fatal(err)
		}
		if u, err := s.URL(); err != nil || !strings.HasSuffix(u, "/console/") {
			t.Errorf("signed in at %q (%v)", u, err)
		}
	})

	t.Run("tab to the main links", func(t *testing.T) {
		// From the page's start, Tab goes to the link that skips the
		// header, then through the header's links in order, each showing
		// where the focus is.
		// A loaded machine may hand keys to the window before it holds
		// the focus: wait until the page is loaded and focused.
		for deadline := time.Now().Add(10 * time.Second); ; {
			var ready bool
			if err := s.Eval(`return document.readyState === "complete" && document.hasFocus()`, &ready); err != nil {
				t.Fatal(err)
			}
			if ready || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		var reached []string
		for range 7 {
			if err := s.Keys(webdriver.Tab); err != nil {
				t.Fatal(err)
			}
			var f struct {
				Text, Outline string
			}
			if err := s.Eval(`const e = document.activeElement; return {text: e.textContent.trim(), outline: getComputedStyle(e).outlineStyle}`, &f); err != nil {
				t.Fatal(err)
			}
			if f.Outline == "none" {
				t.Errorf("the focus on %q is not visible", f.Text)
			}
			reached = append(reached, f.Text)
		}
		if got := strings.Join(reached, "|"); !strings.HasPrefix(got, "Skip to content|memstore|Home|Stores|") || !strings.Contains(got, "|Activity|") {
			t.Errorf("Tab reaches %s", got)
		}
	})

	t.Run("browse to a hostile memory", func(t *testing.T) {
		err := errors.Join(s.Navigate(base+"stores"), s.ClickLink("Team notes"), s.ClickLink("prefs/"), s.ClickLink("style.md"), s.Wait("#rendered"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // time for any onerror to fire
		h1, raw := s.Text("h1"), s.Text("#raw")
		var by string
		if err := s.Eval(`return document.querySelector('#changed-by .actor').title`, &by); err != nil {
			t.Fatal(err)
		}
		if h1 != "/prefs/style.md" || !strings.Contains(raw, "<script>window.pwned = 1</script>") || !strings.HasPrefix(by, "api_actor apikey_") {
			t.Errorf("memory page: h1 %q, raw %q, by %q", h1, raw, by)
		}
		var unsafe, safe int
		err = errors.Join(
			s.Eval(`return document.querySelectorAll('#rendered a[href^="javascript" i], #rendered script, #rendered img').length`, &unsafe),
			s.Eval(`return document.querySelectorAll('#rendered a[href="https://example.com/docs"][rel="noopener noreferrer"]').length`, &safe))
		if err != nil || unsafe != 0 || safe != 1 {
			t.Errorf("%d unsafe elements, %d safe links (%v)", unsafe, safe, err)
		}
		// An alert would make the next command fail; window.pwned set
		// by any of the content's attempts would show.
		checkNothingRan(t, s)
		if err := s.ClickLink("the guide"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		checkNothingRan(t, s)
	})

	// edit opens the memory's edit page and replaces its text.
	edit := func(text string) error {
		return errors.Join(s.Navigate(memURL), s.Click("#edit"), s.Type("#content", text))
	}
	save := func() error { return errors.Join(s.Click("#save"), s.Wait(".notice")) }

	t.Run("edit and save", func(t *testing.T) {
		if err := errors.Join(edit("step one\nstep two, edited\n"), save()); err != nil {
			t.Fatal(err)
		}
		if got := content(t); got != "step one\nstep two, edited\n" {
			t.Errorf("saved: %q", got)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		if err := edit("step one\nstep two, by meg\n"); err != nil {
			t.Fatal(err)
		}
		apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, `{"content":"step one\nstep two, by the agent\n"}`)
		if err := errors.Join(s.Click("#save"), s.Wait("#conflict")); err != nil {
			t.Fatal(err)
		}
		var mine string
		if err := s.Eval(`return document.querySelector('#content').value`, &mine); err != nil {
			t.Fatal(err)
		}
		if diff := s.Text("#diff"); !strings.Contains(diff, "-step two, by the agent") || !strings.Contains(diff, "+step two, by meg") {
			t.Errorf("the conflict shows %q", diff)
		}
		if mine != "step one\nstep two, by meg\n" {
			t.Errorf("the text area lost meg's text: %q", mine)
		}
		if got := content(t); got != "step one\nstep two, by the agent\n" {
			t.Fatalf("the agent's change was overwritten: %q", got)
		}
		if err := save(); err != nil || content(t) != "step one\nstep two, by meg\n" {
			t.Errorf("keep mine: %q (%v)", content(t), err)
		}
	})

	t.Run("search", func(t *testing.T) {
		err := errors.Join(s.Navigate(base+"stores/"+storeID), s.Type("#q", "two"), s.Click("#search"), s.Wait("#results"))
		var marks []string
		err = errors.Join(err, s.Eval(`return [...document.querySelectorAll('#results mark')].map(m => m.textContent)`, &marks))
		if res := s.Text("#results"); err != nil || !strings.Contains(res, "/notes/plan.md") || len(marks) == 0 || !strings.EqualFold(marks[0], "two") {
			t.Errorf("search: %q, marks %q (%v)", res, marks, err)
		}
	})

	t.Run("history diff", func(t *testing.T) {
		err := errors.Join(s.Navigate(memURL), s.Click("#history"), s.Wait("#versions"),
			s.Click("#versions tbody tr:last-child input[name=from]"),
			s.Click("#versions tbody tr:first-child input[name=to]"),
			s.Click("#compare"), s.Wait("#diff"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := s.Text("#diff"); !strings.Contains(diff, "-step two") || !strings.Contains(diff, "+step two, by meg") {
			t.Errorf("the diff of the first and last versions: %q", diff)
		}
	})

	t.Run("light", func(t *testing.T) {
		checkScheme(t, s, false)
	})

	t.Run("sign out", func(t *testing.T) {
		err := errors.Join(s.Navigate(base+"stores"), s.Click("#signout"), s.Wait("#password"),
			s.Navigate(base+"stores"), s.Wait("#password"))
		if u, _ := s.URL(); err != nil || !strings.Contains(u, "/console/signin") {
			t.Errorf("after signing out, stores leads to %q (%v)", u, err)
		}
	})

	t.Run("phone and dark", func(t *testing.T) {
		// A memory with a long path and long unbroken words, as notes
		// often have (a URL, an identifier), on the pages of its own.
		longID := apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/architecture_decision_records/2024_q3_storage_engine_evaluation_and_migration_plan.md","content":"See https://example.com/a/very/long/address/that/does/not/break/anywhere/at/all/ever and SOME_VERY_LONG_CONFIGURATION_VARIABLE_NAME_WITHOUT_BREAKS.\n\n    indented_code_line_that_is_long_enough_to_overflow_a_phone_screen_entirely()\n"}`)
		longURL := base + "stores/" + storeID + "/memories/" + longID
		p := start(t, webdriver.Options{Dark: true})
		if err := errors.Join(p.ResizeWindow(phoneWidth, 740), signIn(p)); err != nil {
			t.Fatal(err)
		}
		for _, page := range []string{"stores", "stores/" + storeID, "stores/" + storeID + "/search?q=step", memURL, memURL + "/edit", memURL + "/history", "stores/" + storeID + "?path=/architecture_decision_records/", longURL, longURL + "/edit", longURL + "/history", "stores/" + storeID + "/search?q=architecture",
			"activity", "sessions", "keys", "users"} {
			if !strings.HasPrefix(page, "http") {
				page = base + page
			}
			if err := errors.Join(p.Navigate(page), p.Wait("main")); err != nil {
				t.Fatal(err)
			}
			// The page at the narrowest window the browser allows, then
			// its content held to a phone's width (WebDriver's windows
			// are no narrower than about 450 CSS pixels).
			var w struct{ Scroll, Client, Inner, Phone int }
			err := p.Eval(`const d = document.documentElement, b = document.body;
				const w = {scroll: d.scrollWidth, client: d.clientWidth, inner: innerWidth};
				d.style.width = '`+strconv.Itoa(phoneWidth)+`px';
				w.phone = b.scrollWidth;
				d.style.width = '';
				return w`, &w)
			if err != nil {
				t.Fatal(err)
			}
			if w.Scroll > w.Client {
				t.Errorf("%s scrolls sideways at %d CSS pixels: %d wide", page, w.Client, w.Scroll)
			}
			if w.Phone > phoneWidth {
				t.Errorf("%s held to %d CSS pixels is %d wide", page, phoneWidth, w.Phone)
			}
			if page == base+"stores" {
				t.Logf("the narrowest window the browser allows shows %d CSS pixels", w.Inner)
				checkScheme(t, p, true)
			}
		}
	})
}

// checkNothingRan fails t if the page's script set window.pwned.
func checkNothingRan(t *testing.T, s consolePage) {
	t.Helper()
	var pwned string
	if err := s.Eval(`return String(window.pwned)`, &pwned); err != nil || pwned != "undefined" {
		t.Errorf("the memory's content ran: window.pwned %s (%v)", pwned, err)
	}
}

// checkScheme checks that the page follows the browser's colour scheme:
// dark text on a light background, or light on dark.
func checkScheme(t *testing.T, s consolePage, dark bool) {
	t.Helper()
	var c struct {
		Dark   bool
		Bg, Fg []float64
	}
	err := s.Eval(`const rgb = c => c.match(/[\d.]+/g).slice(0, 3).map(Number);
		const st = getComputedStyle(document.body);
		return {dark: matchMedia('(prefers-color-scheme: dark)').matches, bg: rgb(st.backgroundColor), fg: rgb(st.color)}`, &c)
	if err != nil {
		t.Fatal(err)
	}
	light := func(rgb []float64) bool { return len(rgb) == 3 && rgb[0]+rgb[1]+rgb[2] > 3*128 }
	if c.Dark != dark || light(c.Bg) == dark || light(c.Fg) != dark {
		t.Errorf("prefers dark %v (want %v): background %v, text %v", c.Dark, dark, c.Bg, c.Fg)
	}
}

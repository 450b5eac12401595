package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/memstore/memstore/internal/webdriver"
)

// The console's layout in the three browsers: at 1280 CSS pixels the
// side navigation beside the page and tables that fit; on a phone, the
// tables as cards; the home page's charts; a memory's tree.

// TestConsoleLookInChromium runs consoleLookIn in a headless Chromium.
func TestConsoleLookInChromium(t *testing.T) {
	bin := browserPath()
	if bin == "" {
		skipOrFailInCI(t, "no chromium or google-chrome on PATH: the console's browser tests need one (apt-get install chromium)")
	}
	srv, _ := startConsoleServer(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Flag("headless", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	consoleLookIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		ctx, cancel := chromedp.NewContext(actx)
		t.Cleanup(cancel)
		ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
		t.Cleanup(cancelT)
		var dialogs atomic.Int32
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			return nil, err
		}
		err := chromedp.Listen(ctx, func(ev any) {
			if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
				dialogs.Add(1)
			}
		})
		return chromedpPage{ctx, &dialogs}, err
	})
}

// TestConsoleLookInFirefox runs consoleLookIn in a headless Firefox.
func TestConsoleLookInFirefox(t *testing.T) {
	if webdriver.FirefoxPath() == "" {
		skipOrFailInCI(t, "no firefox-esr or firefox on PATH: the console's Firefox test needs one (apt-get install firefox-esr)")
	}
	srv, _ := startConsoleServer(t)
	consoleLookIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		return webdriver.Firefox(t.TempDir(), o)
	})
}

// TestConsoleLookInWebKit runs consoleLookIn in WebKitGTK.
func TestConsoleLookInWebKit(t *testing.T) {
	if webdriver.WebKitDriverPath() == "" || webdriver.MiniBrowserPath() == "" || webdriver.XvfbPath() == "" {
		skipOrFailInCI(t, "no WebKitWebDriver, MiniBrowser or Xvfb: the console's WebKit test needs them (apt-get install webkit2gtk-driver xvfb)")
	}
	srv, _ := startConsoleServer(t)
	consoleLookIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		return webdriver.WebKit(o)
	})
}

// consoleLookIn signs ann, an admin, in to the console of srv (as
// startConsoleServer makes it, with a store of several directories
// added) in a browser that open starts, and checks the layout: at 1280
// CSS pixels, the navigation at the side, the main tables within the
// page, the home page's two charts drawn, and a memory's tree open down
// to it, its directories closing and opening on a click; then, held to
// a phone's width, each table of records as cards with its path, author
// and time in view, and nothing wider than the phone.
func consoleLookIn(t *testing.T, srv *child, open openPage) {
	base := srv.url + "/console/"
	storeID := apiPost(t, srv, "/v1/memory_stores", `{"name":"Layout"}`)
	var deep string
	for _, p := range []string{"/projects/alpha/decisions/2026_storage_engine_evaluation.md", "/projects/alpha/notes.md", "/projects/beta.md", "/readme.md"} {
		id := apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", fmt.Sprintf(`{"path":%q,"content":"text of %s"}`, p, p))
		if deep == "" {
			deep = id
		}
	}
	s, err := open(t, webdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := errors.Join(s.ResizeWindow(1280, 900), s.Navigate(base+"signin"), s.Type("#name", "ann"),
		s.Type("#password", consolePassword+webdriver.Enter), s.Wait("table")); err != nil {
		t.Fatal(err)
	}
	// fits reports the page's width against the window's, and each
	// table's against its box.
	type fit struct {
		Scroll, Client int
		Tables         []int // how far each table overflows its parent
		Inner          int
	}
	measure := func(t *testing.T) fit {
		t.Helper()
		var f fit
		if err := s.Eval(`const d = document.documentElement;
			return {scroll: d.scrollWidth, client: d.clientWidth, inner: innerWidth,
				tables: [...document.querySelectorAll('main table')].filter(t => t.offsetParent).map(t => Math.max(0, t.scrollWidth - t.parentElement.clientWidth))}`, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}

	t.Run("wide", func(t *testing.T) {
		for _, p := range []string{"", "stores", "activity", "sessions", "keys", "users", "stores/" + storeID + "/memories/" + deep + "/history"} {
			if err := errors.Join(s.Navigate(base+p), s.Wait("main h1")); err != nil {
				t.Fatal(err)
			}
			f := measure(t)
			if f.Inner < 1000 {
				t.Skipf("the browser keeps its window %d CSS pixels wide", f.Inner)
			}
			if f.Scroll > f.Client {
				t.Errorf("%s scrolls sideways at %d CSS pixels: %d wide", p, f.Client, f.Scroll)
			}
			for i, over := range f.Tables {
				if over > 0 {
					t.Errorf("%s: table %d overflows its box by %d CSS pixels", p, i, over)
				}
			}
			// The navigation beside the page, not above it.
			var side struct{ NavRight, MainLeft, NavBottom, MainTop int }
			if err := s.Eval(`const n = document.querySelector('.top').getBoundingClientRect(), m = document.querySelector('main').getBoundingClientRect();
				return {navRight: Math.round(n.right), mainLeft: Math.round(m.left), navBottom: Math.round(n.bottom), mainTop: Math.round(m.top)}`, &side); err != nil {
				t.Fatal(err)
			}
			if side.NavRight > side.MainLeft || side.NavBottom <= side.MainTop {
				t.Errorf("%s: the navigation is not at the side: %+v", p, side)
			}
		}
	})

	t.Run("home charts", func(t *testing.T) {
		if err := errors.Join(s.Navigate(base), s.Wait("#chart-kind svg")); err != nil {
			t.Fatal(err)
		}
		var c struct {
			Charts, Bars, Width int
			Title               string
		}
		if err := s.Eval(`const svg = document.querySelector('#chart-kind svg');
			return {charts: document.querySelectorAll('figure.chart svg[role=img]').length, bars: document.querySelectorAll('#chart-kind rect').length,
				width: Math.round(svg.getBoundingClientRect().width), title: svg.querySelector('title').textContent}`, &c); err != nil {
			t.Fatal(err)
		}
		if c.Charts != 2 || c.Bars == 0 || c.Width < 200 || c.Title != "Changes by kind of actor" {
			t.Errorf("the home page's charts: %+v", c)
		}
		if got := s.Text("#changes-24h"); got == "" || got == "0" {
			t.Errorf("changes in 24 hours: %q", got)
		}
	})

	t.Run("tree", func(t *testing.T) {
		if err := errors.Join(s.Navigate(base+"stores/"+storeID+"/memories/"+deep), s.Wait("#tree")); err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Open    []string
			Current string
			Visible bool
		}
		state := func() {
			t.Helper()
			if err := s.Eval(`const cur = document.querySelector('#tree a[aria-current=page]');
				return {open: [...document.querySelectorAll('#tree details[open] > summary')].map(e => e.textContent),
					current: cur ? cur.textContent : '', visible: [...document.querySelectorAll('#tree a.file')].some(a => a.textContent === 'notes.md' && !a.closest('details:not([open])'))}`, &tr); err != nil {
				t.Fatal(err)
			}
		}
		state()
		if strings.Join(tr.Open, "|") != "/|projects/|alpha/|decisions/" || tr.Current != "2026_storage_engine_evaluation.md" || !tr.Visible {
			t.Fatalf("the tree: %+v", tr)
		}
		// A click on alpha/ closes it, hiding notes.md; another opens it.
		if err := s.Click("#tree details details details > summary"); err != nil {
			t.Fatal(err)
		}
		state()
		if tr.Visible || strings.Contains(strings.Join(tr.Open, "|"), "alpha/") {
			t.Errorf("after closing alpha/: %+v", tr)
		}
		if err := s.Click("#tree details details details > summary"); err != nil {
			t.Fatal(err)
		}
		state()
		if !tr.Visible {
			t.Errorf("after opening alpha/ again: %+v", tr)
		}
		if err := s.ClickLink("beta.md"); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait("#raw"); err != nil || s.Text("h1") != "/projects/beta.md" {
			t.Errorf("the tree's link to beta.md leads to %q (%v)", s.Text("h1"), err)
		}
	})

	t.Run("phone", func(t *testing.T) {
		if err := s.ResizeWindow(phoneWidth, 800); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ page, table string }{
			{"", "#recent"}, {"stores", "#stores"}, {"activity", "#activity"}, {"stores/" + storeID + "/memories/" + deep + "/history", "#versions"},
		} {
			if err := errors.Join(s.Navigate(base+c.page), s.Wait(c.table)); err != nil {
				t.Fatal(err)
			}
			// Cards when the window is narrow; WebDriver's windows are no
			// narrower than about 450 CSS pixels, so the page is then held
			// to a phone's width as well.
			var card struct {
				Inner, Phone   int
				Display, Label string
				Head           int
				Cells          []string
			}
			if err := s.Eval(`const d = document.documentElement, tr = document.querySelector('`+c.table+` tbody tr');
				const td = tr.querySelector('td[data-label]');
				const r = {inner: innerWidth, display: getComputedStyle(tr).display, label: getComputedStyle(td, '::before').content,
					head: Math.round(document.querySelector('`+c.table+` thead').getBoundingClientRect().height),
					cells: [...tr.querySelectorAll('td[data-label]')].filter(td => td.getBoundingClientRect().width > 0).map(td => td.dataset.label)};
				d.style.width = '`+fmt.Sprint(phoneWidth)+`px';
				r.phone = document.body.scrollWidth;
				d.style.width = '';
				return r`, &card); err != nil {
				t.Fatal(err)
			}
			if card.Inner > 640 {
				t.Skipf("the browser keeps its window %d CSS pixels wide", card.Inner)
			}
			// Firefox gives the ::before's content as written.
			labelled := strings.Contains(card.Label, td0(c.table)) || strings.Contains(card.Label, "attr(data-label)")
			if card.Display != "block" || !labelled || card.Head > 1 {
				t.Errorf("%s at %d CSS pixels: rows %q, label %q, head %d pixels high: not cards", c.page, card.Inner, card.Display, card.Label, card.Head)
			}
			for _, want := range wantCells(c.table) {
				if !strings.Contains(strings.Join(card.Cells, "|"), want) {
					t.Errorf("%s: a card shows %v, not %s", c.page, card.Cells, want)
				}
			}
			if card.Phone > phoneWidth {
				t.Errorf("%s held to %d CSS pixels is %d wide", c.page, phoneWidth, card.Phone)
			}
		}
	})
}

// td0 is the label of the first labelled cell of a table's row.
func td0(table string) string {
	switch table {
	case "#stores":
		return "Name"
	case "#versions":
		return "From"
	}
	return "Time"
}

// wantCells are the cells a card of table must show.
func wantCells(table string) []string {
	switch table {
	case "#stores":
		return []string{"Name", "Memories", "Last change", "By"}
	case "#versions":
		return []string{"Path", "By", "Time"}
	}
	return []string{"Time", "Store", "Path", "By"}
}

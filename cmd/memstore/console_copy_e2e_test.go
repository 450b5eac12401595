package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/memstore/memstore/internal/webdriver"
)

// copyButtonIn checks, in p, signed in to the console of srv (as
// startConsoleServer makes it), that the console's script runs under its
// Content-Security-Policy and adds a copy button beside each short ID
// (none inside a link), labelled with the ID it copies; that pressing
// one keeps the focus on it, says "Copied" in a live region and puts the
// whole ID on the clipboard, read back where the browser lets a page
// read it (mustRead: it must).
func copyButtonIn(t *testing.T, srv *child, p consolePage, mustRead bool) {
	base := srv.url + "/console/"
	err := errors.Join(p.Navigate(base+"signin"), p.Type("#name", "ann"), p.Type("#password", consolePassword+webdriver.Enter),
		p.Wait("#glance"), p.Navigate(base+"stores"), p.Wait("main button.copy"))
	if err != nil {
		t.Fatalf("no copy button on the stores page: %v", err)
	}
	var page struct {
		IDs, Buttons, InLinks int
		Label, Data, Full     string
		Status                string
	}
	err = p.Eval(`const b = document.querySelectorAll("main button.copy"), c = document.querySelector("main code.id[title]");
		return {ids: document.querySelectorAll("main code.id[title]").length, buttons: b.length, inLinks: document.querySelectorAll("a button").length,
			label: b[0].getAttribute("aria-label"), data: b[0].dataset.id, full: c.title,
			status: (document.querySelector('#copy-status[role="status"]') || {}).textContent}`, &page)
	if err != nil {
		t.Fatal(err)
	}
	if page.IDs == 0 || page.Buttons != page.IDs || page.InLinks != 0 || page.Label != "Copy "+page.Full || page.Data != page.Full ||
		!strings.HasPrefix(page.Full, "memstore_") || page.Status != "" {
		t.Fatalf("the stores page's copy buttons: %+v", page)
	}
	if err := p.Click("main button.copy"); err != nil {
		t.Fatal(err)
	}
	var after struct {
		Status  string
		Focused bool
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := p.Eval(`const b = document.querySelector("main button.copy");
			return {status: document.querySelector("#copy-status").textContent.trim(), focused: document.activeElement === b}`, &after); err != nil {
			t.Fatal(err)
		}
		if after.Status != "" || time.Now().After(deadline) {
			break
		}
	}
	if after.Status != "Copied" || !after.Focused {
		t.Fatalf("after pressing the copy button: the live region says %q, focus on it %v", after.Status, after.Focused)
	}
	// The clipboard, read by the page where the browser allows it.
	err = p.Eval(`window.memstoreClip = null;
		const put = v => { if (!window.memstoreClip) window.memstoreClip = v; };
		(navigator.clipboard && navigator.clipboard.readText ? navigator.clipboard.readText() : Promise.reject(new Error("no navigator.clipboard.readText")))
			.then(t => put({text: t, read: true}), e => put({error: String(e)}));
		setTimeout(() => put({error: "no answer within 5 s"}), 5000);
		return true`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var clip struct {
		Text, Error string
		Read        bool
	}
	for deadline := time.Now().Add(15 * time.Second); !clip.Read && clip.Error == ""; time.Sleep(100 * time.Millisecond) {
		if err := p.Eval(`return window.memstoreClip || {}`, &clip); err != nil || time.Now().After(deadline) {
			t.Fatalf("reading the clipboard: %+v %v", clip, err)
		}
	}
	switch {
	case clip.Read && clip.Text != page.Full:
		t.Errorf("the clipboard holds %q, want %q", clip.Text, page.Full)
	case !clip.Read && mustRead:
		t.Errorf("the page cannot read the clipboard: %s", clip.Error)
	case !clip.Read:
		t.Logf("the browser lets no page read the clipboard here (%s): checked the button's ID and the live region", clip.Error)
	default:
		t.Logf("the clipboard holds %s", clip.Text)
	}
}

// TestConsoleCopyInChromium: copyButtonIn, in Chromium, which lets the
// page read the clipboard once granted.
func TestConsoleCopyInChromium(t *testing.T) {
	newTab := chromiumTabs(t, 3*time.Minute)
	srv, _ := startConsoleServer(t)
	ctx, dialogs := newTab(t)
	err := chromedp.Do(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: browser.PermissionSettingGranted, Origin: srv.url})
		return chromedp.Void{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	copyButtonIn(t, srv, chromedpPage{ctx, dialogs}, true)
}

// TestConsoleCopyInFirefox is TestConsoleCopyInChromium in Firefox.
func TestConsoleCopyInFirefox(t *testing.T) {
	if webdriver.FirefoxPath() == "" {
		skipOrFailInCI(t, "no firefox-esr or firefox on PATH: the console's Firefox test needs one (apt-get install firefox-esr)")
	}
	srv, _ := startConsoleServer(t)
	p, err := webdriver.Firefox(t.TempDir(), webdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	copyButtonIn(t, srv, p, false)
}

// TestConsoleCopyInWebKit is TestConsoleCopyInChromium in WebKit.
func TestConsoleCopyInWebKit(t *testing.T) {
	if webdriver.WebKitDriverPath() == "" || webdriver.MiniBrowserPath() == "" || webdriver.XvfbPath() == "" {
		skipOrFailInCI(t, "no WebKitWebDriver, MiniBrowser or Xvfb: the console's WebKit test needs them (apt-get install webkit2gtk-driver xvfb)")
	}
	srv, _ := startConsoleServer(t)
	p, err := webdriver.WebKit(webdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	copyButtonIn(t, srv, p, false)
}

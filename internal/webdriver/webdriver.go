// Package webdriver is a small WebDriver client for tests: it drives
// Firefox and WebKit (the engine of Safari) through the few commands a
// test of a web page needs.
//
// It speaks two transports with one vocabulary, the command names of
// Firefox's Marionette protocol ("WebDriver:Navigate", ...), whose
// parameters are the W3C WebDriver ones:
//
//   - Marionette (length-prefixed JSON over TCP), built into Firefox, so
//     no geckodriver is needed; it needs nothing but a socket, where
//     WebDriver BiDi would need a WebSocket client and a protocol of
//     events;
//   - W3C WebDriver over HTTP, which WebKitWebDriver serves for
//     WebKitGTK.
package webdriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Timeout bounds each wait for an element, a condition or an answer.
const Timeout = 20 * time.Second

// pollInterval is how often a wait looks again.
const pollInterval = 50 * time.Millisecond

// elementKey is the W3C name of an element reference's field.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// Keys of the W3C key table, for SendKeys and Keys.
const (
	Tab   = "\uE004"
	Enter = "\uE007"
)

// transport sends one command with its parameters and returns its
// answer's value.
type transport interface {
	do(cmd string, params map[string]any) (json.RawMessage, error)
	close() error
}

// Error is a WebDriver error answer.
type Error struct {
	Command, Code, Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Command, e.Code, e.Message) }

// IsNoSuchElement reports whether err says no element matched.
func IsNoSuchElement(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "no such element"
}

// isUnloading reports whether err says the page went away under the
// command: WebKit's answer to a command sent while a click's navigation
// is under way, which a wait outlasts.
func isUnloading(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == "no such frame" || e.Code == "stale element reference")
}

// Session is one browser session.
type Session struct {
	t       transport
	stop    func() // ends the processes behind the session
	Browser string // the browser's name and version, as it reports them
}

// newSession opens a session on t with capabilities caps.
func newSession(t transport, caps map[string]any, stop func()) (*Session, error) {
	raw, err := t.do("WebDriver:NewSession", map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}})
	if err != nil {
		t.close()
		stop()
		return nil, err
	}
	var v struct {
		Capabilities struct{ BrowserName, BrowserVersion string }
	}
	json.Unmarshal(raw, &v)
	return &Session{t: t, stop: stop, Browser: v.Capabilities.BrowserName + " " + v.Capabilities.BrowserVersion}, nil
}

// Close ends the session and the browser.
func (s *Session) Close() {
	s.t.do("WebDriver:DeleteSession", nil)
	s.t.close()
	s.stop()
}

func (s *Session) call(cmd string, params map[string]any, out any) error {
	raw, err := s.t.do(cmd, params)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: answer %.200s: %w", cmd, raw, err)
	}
	return nil
}

// Navigate loads url and waits for the page to load.
func (s *Session) Navigate(url string) error {
	return s.call("WebDriver:Navigate", map[string]any{"url": url}, nil)
}

// URL is the current page's address.
func (s *Session) URL() (string, error) {
	var u string
	err := s.call("WebDriver:GetCurrentURL", nil, &u)
	return u, err
}

// Element is a reference to an element of the current page.
type Element struct {
	s  *Session
	id string
}

// Find returns the first element the CSS selector sel matches, now.
func (s *Session) Find(sel string) (Element, error) {
	return s.find("css selector", sel)
}

// FindLink returns the first link whose text is text, now.
func (s *Session) FindLink(text string) (Element, error) {
	return s.find("link text", text)
}

func (s *Session) find(using, value string) (Element, error) {
	var ref map[string]string
	if err := s.call("WebDriver:FindElement", map[string]any{"using": using, "value": value}, &ref); err != nil {
		return Element{}, err
	}
	return Element{s: s, id: ref[elementKey]}, nil
}

// Wait waits up to Timeout for an element sel matches to appear.
func (s *Session) Wait(sel string) error {
	_, err := s.wait(func() (Element, error) { return s.Find(sel) })
	return err
}

func (s *Session) wait(find func() (Element, error)) (Element, error) {
	deadline := time.Now().Add(Timeout)
	for {
		el, err := find()
		if !(IsNoSuchElement(err) || isUnloading(err)) || time.Now().After(deadline) {
			return el, err
		}
		time.Sleep(pollInterval)
	}
}

// Click waits for the element sel matches and clicks it.
func (s *Session) Click(sel string) error {
	el, err := s.wait(func() (Element, error) { return s.Find(sel) })
	if err != nil {
		return err
	}
	return el.Click()
}

// ClickLink waits for the link whose text is text and clicks it.
func (s *Session) ClickLink(text string) error {
	el, err := s.wait(func() (Element, error) { return s.FindLink(text) })
	if err != nil {
		return err
	}
	return el.Click()
}

// Type waits for the element sel matches, clears it and types text, each
// newline as the Enter key (WebKit types no "\n").
func (s *Session) Type(sel, text string) error {
	el, err := s.wait(func() (Element, error) { return s.Find(sel) })
	if err != nil {
		return err
	}
	if err := s.call("WebDriver:ElementClear", map[string]any{"id": el.id}, nil); err != nil {
		return err
	}
	return el.SendKeys(strings.ReplaceAll(text, "\n", Enter))
}

// Text is the rendered text of the first element sel matches, "" when
// none does.
func (s *Session) Text(sel string) string {
	el, err := s.Find(sel)
	if err != nil {
		return ""
	}
	var text string
	s.call("WebDriver:GetElementText", map[string]any{"id": el.id}, &text)
	return text
}

// Click clicks the element.
func (e Element) Click() error {
	return e.s.call("WebDriver:ElementClick", map[string]any{"id": e.id}, nil)
}

// SendKeys types text into the element.
func (e Element) SendKeys(text string) error {
	return e.s.call("WebDriver:ElementSendKeys", map[string]any{"id": e.id, "text": text}, nil)
}

// Eval runs the body of a JavaScript function in the page and decodes
// what it returns into out (nil to ignore it).
func (s *Session) Eval(script string, out any) error {
	return s.call("WebDriver:ExecuteScript", map[string]any{"script": script, "args": []any{}}, out)
}

// Keys presses and releases each key of keys in turn, on whatever has
// the focus.
func (s *Session) Keys(keys string) error {
	var acts []map[string]any
	for _, k := range keys {
		acts = append(acts, map[string]any{"type": "keyDown", "value": string(k)}, map[string]any{"type": "keyUp", "value": string(k)})
	}
	return s.call("WebDriver:PerformActions", map[string]any{"actions": []any{map[string]any{"type": "key", "id": "keyboard", "actions": acts}}}, nil)
}

// ResizeWindow asks for a window of width by height; the browser may
// keep a larger one, so the page's own measure is what counts.
func (s *Session) ResizeWindow(width, height int) error {
	return s.call("WebDriver:SetWindowRect", map[string]any{"width": width, "height": height}, nil)
}

// unwrap returns the value of an answer {"value": ...}, or the answer
// itself when it has other fields (Marionette's new session).
func unwrap(raw json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && len(obj) == 1 {
		if v, ok := obj["value"]; ok {
			return v
		}
	}
	return raw
}

// cut returns s without its suffix after max bytes, for error messages.
func cut(s string, max int) string {
	if len(s) > max {
		return s[:max] + "..."
	}
	return strings.TrimSpace(s)
}

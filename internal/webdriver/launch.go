package webdriver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore/internal/freeport"
)

// Options are what a test may ask of a browser it starts.
type Options struct {
	// Dark makes the browser prefer a dark colour scheme.
	Dark bool
}

// FirefoxPath is Firefox on PATH, "" when there is none.
func FirefoxPath() string { return lookPath("firefox-esr", "firefox") }

// WebKitDriverPath is WebKitWebDriver on PATH, "" when there is none.
func WebKitDriverPath() string { return lookPath("WebKitWebDriver") }

// XvfbPath is Xvfb on PATH, "" when there is none: WebKitGTK's browser
// has no headless mode, so it draws on a virtual display.
func XvfbPath() string { return lookPath("Xvfb") }

// MiniBrowserPath is WebKitGTK's MiniBrowser, "" when it is not
// installed.
func MiniBrowserPath() string {
	for _, pattern := range []string{"/usr/lib/*/webkit2gtk-4.*/MiniBrowser", "/usr/libexec/webkit2gtk-4.*/MiniBrowser"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return ""
}

func lookPath(names ...string) string {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// proc is a process started in a group of its own, so that ending it
// ends the processes it started (a browser's content processes).
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func start(cmd *exec.Cmd) (*proc, error) {
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *proc) kill() {
	killGroup(p.cmd.Process)
	<-p.exited
}

// Firefox starts a headless Firefox with a new profile in dir (which
// must be empty) and opens a session over Marionette.
func Firefox(dir string, o Options) (*Session, error) {
	bin := FirefoxPath()
	if bin == "" {
		return nil, fmt.Errorf("no firefox-esr or firefox on PATH")
	}
	prefs := map[string]any{
		"marionette.port":                            0, // any free port, written to MarionetteActivePort
		"browser.shell.checkDefaultBrowser":          false,
		"browser.startup.homepage_override.mstone":   "ignore",
		"datareporting.policy.dataSubmissionEnabled": false,
		"toolkit.telemetry.reportingpolicy.firstRun": false,
		"app.update.disabledForTesting":              true,
		"browser.aboutwelcome.enabled":               false,
	}
	if o.Dark {
		prefs["layout.css.prefers-color-scheme.content-override"] = 0
	}
	var js strings.Builder
	for k, v := range prefs {
		fmt.Fprintf(&js, "user_pref(%q, %#v);\n", k, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(js.String()), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--marionette", "--no-remote", "-profile", dir)
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1")
	p, err := start(cmd)
	if err != nil {
		return nil, err
	}
	portFile := filepath.Join(dir, "MarionetteActivePort")
	for deadline := time.Now().Add(Timeout); ; time.Sleep(pollInterval) {
		port, _ := os.ReadFile(portFile)
		if n, err := strconv.Atoi(strings.TrimSpace(string(port))); err == nil && n > 0 {
			m, err := dialMarionette(net.JoinHostPort("127.0.0.1", strconv.Itoa(n)))
			if err != nil {
				p.kill()
				return nil, err
			}
			return newSession(m, map[string]any{}, p.kill)
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s ended before listening for Marionette", bin)
		default:
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("%s did not listen for Marionette within %v", bin, Timeout)
		}
	}
}

// WebKit starts WebKitWebDriver, on a virtual display of its own, and
// opens a session in WebKitGTK's MiniBrowser.
func WebKit(o Options) (*Session, error) {
	driver, xvfb, mini := WebKitDriverPath(), XvfbPath(), MiniBrowserPath()
	if driver == "" || xvfb == "" || mini == "" {
		return nil, fmt.Errorf("WebKit needs WebKitWebDriver (%q), Xvfb (%q) and MiniBrowser (%q)", driver, xvfb, mini)
	}
	display, stopX, err := startXvfb(xvfb)
	if err != nil {
		return nil, err
	}
	port, err := freeport.Port()
	if err != nil {
		stopX()
		return nil, err
	}
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	d, err := start(cmd)
	if err != nil {
		stopX()
		return nil, err
	}
	stop := func() { d.kill(); stopX() }
	w := &w3c{base: "http://127.0.0.1:" + strconv.Itoa(port), client: http.Client{Timeout: Timeout}}
	for deadline := time.Now().Add(Timeout); ; time.Sleep(pollInterval) {
		resp, err := w.client.Get(w.base + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%s did not answer within %v: %v", driver, Timeout, err)
		}
	}
	args := []string{"--automation"}
	if o.Dark {
		args = append(args, "--dark-mode")
	}
	return newSession(w, map[string]any{"webkitgtk:browserOptions": map[string]any{"binary": mini, "args": args}}, stop)
}

// startXvfb starts a virtual X display on a free display number and
// returns its name.
func startXvfb(bin string) (string, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	cmd := exec.Command(bin, "-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "1280x1024x24")
	cmd.ExtraFiles = []*os.File{w}
	p, err := start(cmd)
	w.Close()
	if err != nil {
		return "", nil, err
	}
	// Xvfb writes the display's number once it serves it.
	r.SetReadDeadline(time.Now().Add(Timeout))
	line, err := bufio.NewReader(r).ReadString('\n')
	if _, convErr := strconv.Atoi(strings.TrimSpace(line)); err != nil || convErr != nil {
		p.kill()
		return "", nil, fmt.Errorf("%s gave no display: %q (%v)", bin, line, err)
	}
	return ":" + strings.TrimSpace(line), p.kill, nil
}

package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/claudeproxy"
	"github.com/memstore/memstore/internal/private"
)

const claudeHelp = `Usage: memstore claude [--url URL] [--store NAME_OR_ID[:ro]]... [--claude PATH] [-- CLAUDE ARGS]

Starts Claude Code with its team memory on a memstore server: each store
becomes a folder of Claude Code's memory directory (team/<store ID>/),
pulled when Claude Code starts and pushed as its files change.

For the run, it makes a session with exactly the stores given (read-only
with NAME_OR_ID:ro; without --store, the workspace's only store) and a
token that reaches them alone, gives Claude Code that token and the
stores (CLAUDE_CODE_SESSION_ACCESS_TOKEN, CLAUDE_MEMORY_STORES) and ends
the session when Claude Code exits. memstore's API key never reaches
Claude Code.

Claude Code 2.1.332 calls memory stores only at https://api.anthropic.com.
For it, memstore claude runs an HTTPS proxy on loopback for that process
alone (HTTPS_PROXY), with a certificate authority made once in memstore's
data directory, limited to api.anthropic.com and trusted by that process
alone (NODE_EXTRA_CA_CERTS). The proxy sends the routes of the run's
stores to memstore; every other request, model calls included, goes to
its real destination unchanged and is not logged or kept.

It refuses to start where sync could not work: with
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC or CLAUDE_CODE_DISABLE_AUTO_MEMORY
set, with HTTPS_PROXY already set, or with a Claude Code version it was
not tested with (--allow-untested-version to try one). Authorities already
in NODE_EXTRA_CA_CERTS stay trusted beside the proxy's.

What memstore claude says goes to standard error (standard output is
Claude Code's); --json says it as JSON lines. Claude Code's exit status is
memstore claude's. Ctrl-C reaches Claude Code from the terminal; SIGTERM
and SIGHUP sent to memstore claude are passed on to it.
`

// claudeRoute is how a Claude Code build reaches memstore's memory routes.
type claudeRoute string

const (
	// routeProxy: the build calls memory stores at api.anthropic.com only;
	// the loopback proxy answers for them.
	routeProxy claudeRoute = "proxy"
	// routeBaseURL: the build honours CLAUDE_CODE_MEMORY_API_BASE_URL,
	// which then names the memstore server, with no proxy.
	routeBaseURL claudeRoute = "base-url"
)

// testedClaudeVersions are the Claude Code builds memstore claude was
// tested with end to end, and how each reaches memstore. A build is
// reached through CLAUDE_CODE_MEMORY_API_BASE_URL only once it is listed
// here as routeBaseURL: the variable's name is in 2.1.332's binary although
// that build ignores it, so neither its presence nor the version number
// says that a build honours it; an end-to-end run does. An untested build
// (--allow-untested-version) goes through the proxy, which works whether
// or not the build honours the variable.
var testedClaudeVersions = map[string]claudeRoute{
	"2.1.332": routeProxy,
}

// claudeTestUpstream, set by tests only, stands a local server in for
// api.anthropic.com behind the proxy (claudeproxy.Config.Upstream).
var claudeTestUpstream struct {
	addr  string
	roots *x509.CertPool
}

// claudeTokenTTL bounds the run's token should memstore claude be killed
// before it can end the session.
const claudeTokenTTL = 24 * time.Hour

// claudeVersionTimeout bounds 'claude --version'.
const claudeVersionTimeout = 30 * time.Second

// claudeDisablers are the variables under which Claude Code does not sync
// its memory, and what each does.
var claudeDisablers = []struct{ name, does string }{
	{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "turns off the memory sync with the rest of Claude Code's nonessential traffic"},
	{"CLAUDE_CODE_DISABLE_AUTO_MEMORY", "turns off Claude Code's memory directory"},
}

// claudeStoreRef is a --store of memstore claude: a store's name or ID.
type claudeStoreRef struct {
	ref      string
	readOnly bool
}

func runClaude(ctx context.Context, e env, args []string) error {
	ours, claudeArgs := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		ours, claudeArgs = args[:i], args[i+1:]
	}
	fs := newFlags(e, "claude", claudeHelp)
	bf := addBackendFlags(fs, "claude", false)
	bf.kinds = withKey // a server, and a key that may make sessions
	var stores []claudeStoreRef
	fs.Var(flagFunc(func(s string) error {
		ref, mode, _ := strings.Cut(s, ":")
		r := claudeStoreRef{ref: ref}
		switch mode {
		case "", "rw":
		case "ro":
			r.readOnly = true
		default:
			return fmt.Errorf("want NAME_OR_ID or NAME_OR_ID:ro, not %q", s)
		}
		if ref == "" {
			return errors.New("a store name or ID is required")
		}
		stores = append(stores, r)
		return nil
	}), "store", "mount store `NAME_OR_ID`, read-only with NAME_OR_ID:ro (repeatable, at most 8; default: the workspace's only store)")
	claudePath := fs.String("claude", "claude", "Claude Code's executable `PATH`")
	anyVersion := fs.Bool("allow-untested-version", false, "run a Claude Code version memstore claude was not tested with, through the proxy")
	if slices.ContainsFunc(ours, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		writeHelp(e.stdout, "claude", fs, claudeHelp+backendHelp)
		return flag.ErrHelp
	}
	pos, err := parseArgs(fs, ours)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore claude: unexpected argument %q; give Claude Code's own arguments after --, as in 'memstore claude -- -p \"hello\"'", pos[0])
	}
	if len(stores) > memstore.MaxSessionStores {
		return usageError(e, "memstore claude: at most %d stores (--store) per run, as a session attaches", memstore.MaxSessionStores)
	}
	bin, version, route, err := claudeBuild(ctx, *claudePath, *anyVersion)
	if err != nil {
		return err
	}
	if err := claudeEnvReady(e, route); err != nil {
		return err
	}
	var ownCAs []byte // the user's own NODE_EXTRA_CA_CERTS, kept trusted
	if v := e.getenv("NODE_EXTRA_CA_CERTS"); v != "" && route == routeProxy {
		if ownCAs, err = os.ReadFile(v); err != nil {
			return fmt.Errorf("cannot read NODE_EXTRA_CA_CERTS, to add the proxy's authority to it: %w", err)
		}
	}
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	base, err := url.Parse(sel.url)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usageError(e, "memstore claude: --url must be the server's http:// or https:// address, not %q", sel.url)
	}
	c, err := sel.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	att, err := claudeAttachments(ctx, c, stores)
	if err != nil {
		return err
	}
	s, _, secret, err := c.CreateSession(ctx, c.caller, memstore.SessionCreate{
		Title: "Claude Code (memstore claude)", Stores: att, TokenTTL: claudeTokenTTL,
	})
	if err != nil {
		return fmt.Errorf("cannot make the run's session: %w", err)
	}
	r := &claudeRun{e: e, c: c, session: s.ID}
	defer r.end()

	vars := map[string]string{
		"CLAUDE_MEMORY_STORES":             claudeMemoryStores(att),
		"CLAUDE_CODE_SESSION_ACCESS_TOKEN": secret,
	}
	var proxyAddr string
	switch route {
	case routeBaseURL:
		vars["CLAUDE_CODE_MEMORY_API_BASE_URL"] = strings.TrimRight(sel.url, "/")
		vars["CLAUDE_CODE_MEMORY_API_TOKEN"] = secret
	default:
		dir := dataDir(e)
		if dir == "" {
			return errors.New("no home directory to keep the proxy's certificate authority in: set HOME or XDG_DATA_HOME")
		}
		ca, err := claudeproxy.LoadCA(dir)
		if err != nil {
			return fmt.Errorf("the proxy's certificate authority: %w", err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ids := make([]string, len(att))
		for i, a := range att {
			ids[i] = a.StoreID
		}
		p, err := claudeproxy.Start(l, claudeproxy.Config{CA: ca, Memstore: base, Stores: ids, Token: secret,
			Upstream: claudeTestUpstream.addr, UpstreamRoots: claudeTestUpstream.roots})
		if err != nil {
			l.Close()
			return err
		}
		r.proxy = p
		proxyAddr = l.Addr().String()
		vars["HTTPS_PROXY"] = "http://" + proxyAddr
		vars["NODE_EXTRA_CA_CERTS"] = ca.CertFile
		if ownCAs != nil {
			if vars["NODE_EXTRA_CA_CERTS"], err = r.caBundle(ownCAs, ca.CertFile); err != nil {
				return err
			}
		}
	}
	r.say(map[string]any{
		"event": "started", "session_id": s.ID, "claude": bin, "claude_version": version,
		"route": string(route), "proxy": proxyAddr, "stores": storesJSON(att),
	}, fmt.Sprintf("Claude Code %s with %s, through session %s%s.", version, describeAttachments(att), s.ID, viaProxy(proxyAddr)))

	cmd := exec.Command(bin, claudeArgs...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.raw(), e.rawErr()
	cmd.Env = claudeChildEnv(os.Environ(), vars, route)
	return r.run(cmd)
}

// claudeEnvReady refuses an environment in which the run's sync could not
// work, saying what to change.
func claudeEnvReady(e env, route claudeRoute) error {
	for _, d := range claudeDisablers {
		if v := e.getenv(d.name); v != "" && v != "0" && !strings.EqualFold(v, "false") {
			return usageError(e, "memstore claude: %s is set, which %s, so team memory would not sync; unset it for this command (env -u %s memstore claude ...)", d.name, d.does, d.name)
		}
	}
	for _, v := range []string{"HTTPS_PROXY", "https_proxy"} {
		if route == routeProxy && e.getenv(v) != "" {
			return usageError(e, "memstore claude: %s is set; memstore claude gives Claude Code its own HTTPS proxy and cannot chain it with yours: unset it for this command, or set up the bridge in your own proxy (see docs/claude-code.md)", v)
		}
	}
	return nil
}

// claudeVersionPattern finds the version in 'claude --version', which
// prints "2.1.332 (Claude Code)".
var claudeVersionPattern = regexp.MustCompile(`\b\d+\.\d+\.\d+\b`)

// claudeBuild finds Claude Code and decides how it reaches memstore.
func claudeBuild(ctx context.Context, path string, anyVersion bool) (bin, version string, route claudeRoute, err error) {
	bin, err = exec.LookPath(path)
	if err != nil {
		return "", "", "", fmt.Errorf("no Claude Code at %q: install it (npm install -g @anthropic-ai/claude-code@%s) or give its path with --claude PATH", path, newestTestedClaude())
	}
	vctx, cancel := context.WithTimeout(ctx, claudeVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(vctx, bin, "--version").Output()
	if err != nil {
		return "", "", "", fmt.Errorf("'%s --version' failed (%v); is it Claude Code?", bin, err)
	}
	version = claudeVersionPattern.FindString(string(out))
	if version == "" {
		return "", "", "", fmt.Errorf("'%s --version' printed no version (%q); is it Claude Code?", bin, strings.TrimSpace(string(out)))
	}
	route, tested := testedClaudeVersions[version]
	switch {
	case tested:
	case anyVersion:
		route = routeProxy
	default:
		return "", "", "", fmt.Errorf("version %s of Claude Code (%s) was not tested with memstore claude, which was tested with %s: install that one (npm install -g @anthropic-ai/claude-code@%s), or give --allow-untested-version to try this one through the proxy",
			version, bin, strings.Join(slices.Sorted(maps.Keys(testedClaudeVersions)), ", "), newestTestedClaude())
	}
	return bin, version, route, nil
}

func newestTestedClaude() string {
	vs := slices.Sorted(maps.Keys(testedClaudeVersions))
	return vs[len(vs)-1]
}

// claudeAttachments resolves each --store to a store of the workspace, by
// ID or by name; none means the workspace's only store.
func claudeAttachments(ctx context.Context, c *conn, refs []claudeStoreRef) ([]memstore.AttachmentCreate, error) {
	if len(refs) == 0 {
		id, err := c.storeID(ctx)
		if err != nil {
			return nil, err
		}
		return []memstore.AttachmentCreate{{StoreID: id, Access: memstore.AccessReadWrite}}, nil
	}
	var att []memstore.AttachmentCreate
	for _, r := range refs {
		id, err := c.resolveStore(ctx, r.ref, false)
		if err != nil {
			return nil, err
		}
		access := memstore.AccessReadWrite
		if r.readOnly {
			access = memstore.AccessReadOnly
		}
		if slices.ContainsFunc(att, func(a memstore.AttachmentCreate) bool { return a.StoreID == id }) {
			return nil, fmt.Errorf("store %s is given twice", id)
		}
		att = append(att, memstore.AttachmentCreate{StoreID: id, Access: access})
	}
	return att, nil
}

// claudeMemoryStores is CLAUDE_MEMORY_STORES: each store's API path, as
// an object with mode "ro" for a read-only one.
func claudeMemoryStores(att []memstore.AttachmentCreate) string {
	list := make([]any, len(att))
	for i, a := range att {
		p := strings.TrimSuffix(claudeproxy.MemoryRoute, "/") + "/" + a.StoreID
		if a.Access == memstore.AccessReadOnly {
			list[i] = map[string]string{"path": p, "mode": "ro"}
		} else {
			list[i] = p
		}
	}
	b, _ := json.Marshal(list)
	return string(b)
}

// claudeChildEnv is Claude Code's environment: memstore claude's own, less
// memstore's credentials and, through the proxy, any proxy exceptions
// (everything HTTPS goes through the run's proxy), with vars set.
func claudeChildEnv(base []string, vars map[string]string, route claudeRoute) []string {
	drop := []string{"MEMSTORE_API_KEY", "MEMSTORE_TOKEN"}
	if route == routeProxy {
		drop = append(drop, "NO_PROXY", "no_proxy", "https_proxy")
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := vars[k]; set || slices.Contains(drop, k) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// storesJSON is the run's stores for --json.
func storesJSON(att []memstore.AttachmentCreate) []map[string]string {
	out := make([]map[string]string, len(att))
	for i, a := range att {
		out[i] = map[string]string{"store_id": a.StoreID, "access": string(a.Access)}
	}
	return out
}

func describeAttachments(att []memstore.AttachmentCreate) string {
	parts := make([]string, len(att))
	for i, a := range att {
		parts[i] = a.StoreID
		if a.Access == memstore.AccessReadOnly {
			parts[i] += " (read-only)"
		}
	}
	if len(parts) == 1 {
		return "store " + parts[0]
	}
	return "stores " + strings.Join(parts, ", ")
}

func viaProxy(addr string) string {
	if addr == "" {
		return ", memory on the server directly"
	}
	return ", memory routes through the proxy at " + addr
}

// claudeRun is a run of Claude Code and what it holds until the end.
type claudeRun struct {
	e       env
	c       *conn
	session string
	proxy   *claudeproxy.Proxy
	exit    int    // Claude Code's exit status
	tmp     string // a directory of the run's files, removed at its end
}

// forwardedSignals are passed on to Claude Code. SIGINT is not: from a
// terminal, Ctrl-C reaches Claude Code directly, as it reaches every
// process of the foreground group, and a second copy would count as a
// second Ctrl-C.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// run runs cmd to its end and returns its exit status as an exitCode.
func (r *claudeRun) run(cmd *exec.Cmd) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, append([]os.Signal{os.Interrupt}, forwardedSignals...)...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start Claude Code: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			if sig != os.Interrupt {
				cmd.Process.Signal(sig)
			}
		case err := <-done:
			code := 0
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				code = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
			case err != nil:
				return fmt.Errorf("running Claude Code: %w", err)
			}
			r.exit = code
			return exitCode(code)
		}
	}
}

// caBundle writes the user's own extra authorities (NODE_EXTRA_CA_CERTS)
// and the proxy's into a file of the run, removed at its end, since the
// variable names one file.
func (r *claudeRun) caBundle(own []byte, ours string) (string, error) {
	b, err := os.ReadFile(ours)
	if err != nil {
		return "", err
	}
	if r.tmp, err = os.MkdirTemp("", "memstore-claude-"); err != nil {
		return "", err
	}
	name := filepath.Join(r.tmp, "ca.pem")
	return name, private.WriteFile(name, append(append(own, '\n'), b...))
}

// end stops the proxy and ends the run's session, so that its token stops
// working, even when the command was interrupted.
func (r *claudeRun) end() {
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := r.c.ArchiveSession(ctx, r.c.caller, r.session)
	if err != nil {
		r.say(map[string]any{"event": "ended", "session_id": r.session, "exit_code": r.exit, "session_ended": false, "error": err.Error()},
			fmt.Sprintf("could not end session %s (%v); end it with 'memstore sessions revoke %s' so that its token stops working.", r.session, err, r.session))
		return
	}
	r.say(map[string]any{"event": "ended", "session_id": r.session, "exit_code": r.exit, "session_ended": true},
		fmt.Sprintf("ended session %s: its token no longer works.", r.session))
}

// say reports on standard error: a line of text, or with --json the
// object as a JSON line.
func (r *claudeRun) say(obj map[string]any, text string) {
	if r.c.json {
		b, _ := json.Marshal(obj)
		fmt.Fprintf(r.e.rawErr(), "%s\n", b)
		return
	}
	fmt.Fprintf(r.e.stderr, "memstore claude: %s\n", text)
}

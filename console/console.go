// Package console is memstore's web console: server-rendered HTML pages,
// served by 'memstore serve', where people sign in as users of a
// workspace and browse its stores and memories.
//
// The console is a surface like the API: it authenticates (a user's
// sign-in session, kept by memstore.Users in the database, so that
// several servers on one database share sessions) and calls the core as
// the user's Caller. Every decision of what a user may see or do is the
// core's; the console adds no rule of its own.
//
// Security: every response forbids framing and carries a strict
// Content-Security-Policy (one script, the console's own, allowed by its
// hash, which only adds copy buttons; styles from the console's own
// stylesheet only); every POST must come from a page of the same
// host (Origin, else Referer) and, once signed in, carry the session's
// CSRF token; the session cookie is HttpOnly and SameSite=Lax, Secure
// with the __Host- prefix over HTTPS (see Config.SecureCookies); sign-in is rate limited per user
// name and per client address, counted in the database by memstore.Users
// (so that every server on one database counts the same attempts);
// memory content is shown as escaped text
// or as Markdown rendered without raw HTML and with unsafe links
// removed.
package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/clientaddr"
	"github.com/memstore/memstore/internal/httpstatus"
	"github.com/memstore/memstore/internal/netlimit"
	"github.com/memstore/memstore/memdir"
)

// Prefix is the path under which the console is served.
const Prefix = "/console/"

// pageSize is how many items a page of the console lists.
const pageSize = 50

// The cookie of a console session: __Host- when served over HTTPS, which
// the browser then keeps to this host, path / and Secure.
const (
	cookieName       = "memstore_console"
	secureCookieName = "__Host-memstore_console"
)

// securityHeaders are set on every response of the console. The
// policy allows one script, the console's own copy.js, by its hash
// (copyScript): every action is a plain form, and the script only adds
// copy buttons. docs/console.md quotes it (TestCSPDocumented).
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src '" + copyScript.Integrity + "'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Frame-Options":         "DENY",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"Cache-Control":           "no-store",
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the console serves from.
type Config struct {
	Stores   memstore.StoreService
	Memories memstore.MemoryService
	Versions memstore.VersionService
	Search   memstore.SearchService
	Users    *memstore.Users
	// Sessions, when set, serves the sessions pages and gives the
	// sessions' titles shown as who made a change.
	Sessions memstore.SessionService
	// Activity, when set, serves the workspace's activity page.
	Activity memstore.ActivityService
	// Keys, when set, serves the API keys page.
	Keys *memstore.Keys
	// Webhooks, when set, serves the webhooks pages (the endpoints, their
	// settings and their delivery logs) and shows on the home page the
	// endpoints failing: disabled by memstore after failures, or enabled
	// with their latest delivery attempt failed.
	Webhooks memstore.WebhookService
	// Dreams, when set, serves the dreams pages; Review, with it, shows a
	// dream's proposed changes and applies the chosen ones.
	Dreams memstore.DreamService
	Review memstore.DreamReviewService
	// SecureCookies says that browsers reach the console over HTTPS even
	// when requests arrive over plain HTTP, from a proxy in front that
	// ends TLS: the session cookie is then always Secure with the __Host-
	// prefix, and the addresses shown say https. Without it only a request
	// that came over TLS counts as HTTPS; a forwarded scheme header
	// (X-Forwarded-Proto) is never trusted, since any client may send one.
	SecureCookies bool
	// TrustedProxies are the proxies in front whose X-Forwarded-For (or
	// Forwarded) names the client, for the sign-in limits per client
	// address (memstore.Users.AttemptFrom); from any other peer these
	// headers are ignored (see clientaddr).
	TrustedProxies clientaddr.Proxies
	Logger         *slog.Logger
}

// Handler is the console: an http.Handler of the paths under Prefix.
type Handler struct {
	cfg     Config
	mux     *http.ServeMux
	pages   map[string]*template.Template
	handler http.Handler
	nav     []navLink
}

// New returns the console over cfg's services.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), pages: parsePages(), nav: mainNav(cfg)}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	h.mux.HandleFunc("GET "+Prefix+"static/", func(w http.ResponseWriter, r *http.Request) {
		// The file server keeps a Content-Type already set: let it say
		// text/css, without which nosniff makes the browser drop the
		// stylesheet.
		w.Header().Del("Content-Type")
		if r.URL.Path == Prefix+"static/copy.js" && r.URL.Query().Get("v") == copyScript.version {
			// This address names this content only (copyScript).
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		files.ServeHTTP(w, r)
	})
	// The server's root leads to the console, on its own address or
	// mounted beside the API (Root).
	h.mux.HandleFunc(Root, h.root)
	h.mux.HandleFunc("GET "+Prefix+"signin", h.signInPage)
	h.mux.HandleFunc("POST "+Prefix+"signin", h.signIn)
	h.mux.HandleFunc("GET "+Prefix+"link", h.linkPage)
	h.mux.HandleFunc("POST "+Prefix+"link", h.redeemLink)
	// The pages of a signed-in person: each behind h.auth.
	signedIn := map[string]authedFunc{
		"GET {$}":                                        h.homePage,
		"POST signout":                                   h.signOut,
		"GET password":                                   h.passwordPage,
		"POST password":                                  h.setPassword,
		"GET stores":                                     h.stores,
		"GET stores/{store}":                             h.tree,
		"GET stores/new":                                 h.newStorePage,
		"POST stores":                                    h.createStore,
		"GET stores/{store}/settings":                    h.storeSettings,
		"POST stores/{store}/settings":                   h.updateStore,
		"POST stores/{store}/archive":                    h.archiveStore,
		"POST stores/{store}/conversation":               h.storeConversation,
		"POST stores/{store}/delete":                     h.deleteStore,
		"GET stores/{store}/search":                      h.search,
		"GET stores/{store}/transfer":                    h.transferPage,
		"GET stores/{store}/export":                      h.export,
		"GET stores/{store}/new":                         h.newMemoryPage,
		"POST stores/{store}/memories":                   h.createMemory,
		"GET stores/{store}/memories/{memory}":           h.memory,
		"POST stores/{store}/memories/{memory}":          h.saveMemory,
		"GET stores/{store}/memories/{memory}/edit":      h.editPage,
		"GET stores/{store}/memories/{memory}/delete":    h.deletePage,
		"POST stores/{store}/memories/{memory}/delete":   h.deleteMemory,
		"GET stores/{store}/memories/{memory}/history":   h.history,
		"GET stores/{store}/memories/{memory}/diff":      h.diff,
		"GET stores/{store}/versions/{version}":          h.versionPage,
		"POST stores/{store}/versions/{version}/restore": h.restore,
		"GET stores/{store}/versions/{version}/redact":   h.redactPage,
		"POST stores/{store}/versions/{version}/redact":  h.redact,
		"GET users":                                      h.users,
		"GET users/new":                                  h.newUserPage,
		"POST users":                                     h.createUser,
		"POST users/{user}/role":                         h.setRole,
		"GET users/{user}/remove":                        h.removeUserPage,
		"POST users/{user}/remove":                       h.removeUser,
		"POST users/{user}/link":                         h.signInLink,
	}
	if cfg.Sessions != nil {
		maps.Copy(signedIn, map[string]authedFunc{
			"GET sessions":                                  h.sessions,
			"GET sessions/new":                              h.newSessionPage,
			"POST sessions":                                 h.createSession,
			"GET sessions/{session}":                        h.session,
			"POST sessions/{session}/tokens":                h.mintToken,
			"POST sessions/{session}/tokens/{token}/revoke": h.revokeToken,
			"POST sessions/{session}/archive":               h.archiveSession,
		})
	}
	if cfg.Activity != nil {
		signedIn["GET activity"] = h.activity
	}
	if cfg.Dreams != nil {
		maps.Copy(signedIn, map[string]authedFunc{
			"GET dreams":                  h.dreams,
			"GET dreams/{dream}":          h.dream,
			"POST dreams/{dream}/cancel":  h.cancelDream,
			"POST dreams/{dream}/archive": h.archiveDream,
		})
		if cfg.Review != nil {
			signedIn["POST dreams/{dream}/apply"] = h.applyDream
		}
	}
	if cfg.Keys != nil {
		maps.Copy(signedIn, map[string]authedFunc{
			"GET keys":               h.keys,
			"POST keys":              h.createKey,
			"POST keys/{key}/revoke": h.revokeKey,
		})
	}
	if cfg.Webhooks != nil {
		maps.Copy(signedIn, map[string]authedFunc{
			"GET webhooks":                   h.webhooks,
			"GET webhooks/new":               h.newWebhookPage,
			"POST webhooks":                  h.createWebhook,
			"GET webhooks/{webhook}":         h.webhook,
			"POST webhooks/{webhook}":        h.updateWebhook,
			"POST webhooks/{webhook}/state":  h.setWebhookState,
			"POST webhooks/{webhook}/secret": h.regenerateWebhookSecret,
			"GET webhooks/{webhook}/delete":  h.deleteWebhookPage,
			"POST webhooks/{webhook}/delete": h.deleteWebhook,
		})
	}
	for route, f := range signedIn {
		method, path, _ := strings.Cut(route, " ")
		h.mux.HandleFunc(method+" "+Prefix+path, h.auth(f))
	}
	h.mux.HandleFunc("POST "+Prefix+"stores/{store}/import", capBody(maxImportBytes+1<<20, h.auth(h.importMemories)))
	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, nil, http.StatusNotFound, "There is no such page in the console.")
	})
	h.handler = http.HandlerFunc(h.serve)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// serve sets the security headers on every response, and refuses a POST
// from another site before anything else sees it.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8") // the static files' handler unsets it
	if r.Method == http.MethodPost && !sameOrigin(r) {
		h.fail(w, r, nil, http.StatusForbidden, "This form was sent from another site, or without saying where from; the console accepts forms from its own pages only.")
		return
	}
	if r.Method == http.MethodPost {
		// A form may wait for a slot to hash a password: the server may
		// then cut its connection off to serve others.
		r = r.WithContext(memstore.WithWaitNotice(r.Context(), netlimit.Waiting))
	}
	h.mux.ServeHTTP(w, r)
}

// sameOrigin reports whether a request comes from a page of this host:
// its Origin header, else its Referer, names the host the request was
// sent to. A request with neither is refused: every current browser
// sends Origin with a POST. The scheme is not compared, since a proxy in
// front may end TLS.
func sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" || from == "null" {
		from = r.Header.Get("Referer")
	}
	u, err := url.Parse(from)
	return from != "" && err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// signedIn is a request's signed-in user.
type signedIn struct {
	caller *memstore.Caller
	user   *memstore.User
	secret string
}

// csrf is the session's CSRF token: derived from the session's secret,
// which only the cookie holds, so that it needs no storage and a page of
// another site can neither read nor make it.
func (s *signedIn) csrf() string {
	sum := sha256.Sum256([]byte("memstore console csrf\x00" + s.secret))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

type authedFunc func(w http.ResponseWriter, r *http.Request, s *signedIn)

// auth runs f for a signed-in user: without a working session, a GET goes
// to the sign-in page and anything else is refused; a POST must carry
// the session's CSRF token.
func (h *Handler) auth(f authedFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(h.cookieName(r))
		var s *signedIn
		if err == nil {
			c, u, aerr := h.cfg.Users.Authenticate(r.Context(), ck.Value)
			switch {
			case aerr == nil:
				s = &signedIn{caller: c, user: u, secret: ck.Value}
			case memstore.ErrorCode(aerr) != memstore.EUnauthenticated:
				h.fail(w, r, nil, http.StatusInternalServerError, h.internal(r, aerr))
				return
			}
		}
		if s == nil {
			if err == nil {
				h.clearCookie(w, r)
			}
			// A sign-out whose session has already ended has nothing
			// left to do, and goes where a sign-out would.
			if r.Method == http.MethodGet || r.URL.Path == Prefix+"signout" {
				q := url.Values{}
				if err == nil {
					q.Set("ended", "1")
				}
				http.Redirect(w, r, Prefix+"signin?"+q.Encode(), http.StatusSeeOther)
				return
			}
			h.fail(w, r, nil, http.StatusForbidden, "You are not signed in, or your session has ended; sign in again.")
			return
		}
		netlimit.Authenticated(r) // its form may take the server's time
		if r.Method == http.MethodPost {
			if !h.readForm(w, r, s) {
				return
			}
			got := r.PostFormValue("csrf")
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf())) != 1 {
				h.fail(w, r, s, http.StatusForbidden, "This form is missing its security token, or it is out of date; go back, reload the page and try again.")
				return
			}
		}
		f(w, r, s)
	}
}

// readForm reads a POST's form, the import's file held in memory up to
// maxImportBytes, or answers why it cannot: a form over the server's limit
// on a request's body would otherwise read as one without its CSRF token.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, s *signedIn) bool {
	err := r.ParseForm() // a multipart body is left to ParseMultipartForm
	if err == nil {
		err = r.ParseMultipartForm(maxImportBytes)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil || errors.Is(err, http.ErrNotMultipart):
		return true
	case errors.As(err, &tooLarge):
		h.fail(w, r, s, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than this server accepts (%d bytes), so nothing was changed. Send less, or ask the server's operator to raise its limit (--max-body-bytes).", tooLarge.Limit))
	default:
		h.fail(w, r, s, http.StatusBadRequest, "The form could not be read, so nothing was changed; go back, reload the page and try again.")
	}
	return false
}

// https reports whether the browser reached the console over HTTPS: the
// one place that decides the cookie's name, its Secure attribute and the
// scheme of the addresses shown.
func (h *Handler) https(r *http.Request) bool {
	return r.TLS != nil || h.cfg.SecureCookies
}

func (h *Handler) cookieName(r *http.Request) string {
	if h.https(r) {
		return secureCookieName
	}
	return cookieName
}

// setCookie gives the browser a session's secret. SameSite=Lax rather
// than Strict: a link into the console from elsewhere (a chat, a sign-in
// link) then opens signed in, and Lax still withholds the cookie from
// every cross-site POST, which the Origin check and the CSRF token refuse
// besides. The cookie lasts as long as the browser runs; the session's
// expiry is the database's.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, secret string) {
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(r), Value: secret, Path: "/", HttpOnly: true, Secure: h.https(r), SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.https(r), SameSite: http.SameSiteLaxMode})
}

// navLink is a link of the main navigation, to the page at Prefix+Path,
// with its keyboard shortcut (accesskey: the browser's modifier keys
// and Key). may is the core's check of the call that page makes first.
type navLink struct {
	Path, Label, Key string
	may              func(*memstore.Caller) error
}

// mainNav is the main navigation over cfg's services: a link to each page
// the console serves.
func mainNav(cfg Config) []navLink {
	readStores := func(c *memstore.Caller) error { return c.CanManageStores(false) }
	readAdmin := func(what memstore.Permission) func(*memstore.Caller) error {
		return func(c *memstore.Caller) error { return c.CanReadAdmin(what) }
	}
	var nav []navLink
	if cfg.Activity != nil {
		nav = append(nav, navLink{"", "Home", "h", readStores})
	}
	nav = append(nav, navLink{"stores", "Stores", "s", readStores})
	if cfg.Activity != nil {
		nav = append(nav, navLink{"activity", "Activity", "a", readStores})
	}
	if cfg.Sessions != nil {
		nav = append(nav, navLink{"sessions", "Sessions", "e", readAdmin(memstore.ManageSessions)})
	}
	if cfg.Dreams != nil {
		nav = append(nav, navLink{"dreams", "Dreams", "d", func(c *memstore.Caller) error { return c.CanDream(false) }})
	}
	if cfg.Keys != nil {
		nav = append(nav, navLink{"keys", "API keys", "k", readAdmin(memstore.ListKeys)})
	}
	if cfg.Webhooks != nil {
		nav = append(nav, navLink{"webhooks", "Webhooks", "w", func(c *memstore.Caller) error { return c.CanAdminister(memstore.ManageWebhooks) }})
	}
	return append(nav, navLink{"users", "Users", "u", readAdmin(memstore.ListUsers)})
}

// navFor is the main navigation that c sees: the links to the pages the
// core lets it read, so that none leads to a refusal.
func (h *Handler) navFor(c *memstore.Caller) []navLink {
	var out []navLink
	for _, l := range h.nav {
		if l.may(c) == nil {
			out = append(out, l)
		}
	}
	return out
}

// view is what every page's template gets.
type view struct {
	Path   string // the page's path, to mark its link in the navigation
	Title  string
	User   *memstore.User
	Nav    []navLink
	CSRF   string
	Error  string
	Notice string
	Data   any
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, s *signedIn, v view) {
	if s != nil {
		v.User, v.Nav, v.CSRF = s.user, h.navFor(s.caller), s.csrf()
	}
	v.Path = r.URL.Path
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := h.pages[page].ExecuteTemplate(w, "layout", v); err != nil {
		h.cfg.Logger.Warn("console: rendering a page failed", "page", page, "err", err)
	}
}

// fail answers with an error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string) {
	h.render(w, r, status, "error", s, view{Title: http.StatusText(status), Error: msg})
}

// internal logs an unexpected error and returns what the user is told.
// A request whose client has gone (a sign-in given up while it waited
// for hashing, under a flood) is no server failure: it is logged at
// debug level only.
func (h *Handler) internal(r *http.Request, err error) string {
	level := slog.LevelError
	if r.Context().Err() != nil {
		level = slog.LevelDebug
	}
	h.cfg.Logger.Log(r.Context(), level, "console: request failed", "path", r.URL.Path, "err", err)
	return "Something went wrong on the server; try again in a moment."
}

// failErr answers with the error page of a core error: its status and
// its message, which is written for people.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, s *signedIn, err error) {
	status := httpstatus.Page(memstore.ErrorCode(err))
	if status == 0 {
		h.fail(w, r, s, http.StatusInternalServerError, h.internal(r, err))
		return
	}
	httpstatus.RetryAfter(w.Header(), err)
	h.fail(w, r, s, status, memstore.ErrorMessage(err))
}

// finish ends a change: with the error page of the error that stopped
// it, or, when there is none, by sending the browser on to url.
func (h *Handler) finish(w http.ResponseWriter, r *http.Request, s *signedIn, err error, url string) {
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	http.Redirect(w, r, url, http.StatusSeeOther)
}

// Root is the pattern of the server's root, which the console answers
// with a redirect to itself: a server that mounts the console beside
// other routes mounts it at Prefix and at Root.
const Root = "GET /{$}"

func (h *Handler) root(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusFound)
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "Sign in", Data: h.signInData(r, memstore.DefaultWorkspace, "")}
	if r.URL.Query().Get("ended") != "" {
		v.Notice = "Your session has ended (it expired, was idle too long or was signed out). Sign in again."
	}
	h.render(w, r, http.StatusOK, "signin", nil, v)
}

// signInData is what the sign-in form shows: the workspace and name
// typed, and, while the database has no user at all, how to make the
// first one ("NoUsers").
func (h *Handler) signInData(r *http.Request, workspace, name string) map[string]string {
	data := map[string]string{"Workspace": workspace, "Name": name}
	if any, err := h.cfg.Users.AnyUsers(r.Context()); err == nil && !any {
		data["NoUsers"] = "yes"
	}
	return data
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	ws, name, pw := r.PostFormValue("workspace"), r.PostFormValue("name"), r.PostFormValue("password")
	data := h.signInData(r, ws, name)
	// The address first: a request refused for it takes nothing from the
	// name's allowance.
	err := h.cfg.Users.AttemptFrom(r.Context(), h.cfg.TrustedProxies.Key(r))
	var secret string
	if err == nil {
		secret, _, err = h.cfg.Users.SignIn(r.Context(), ws, name, pw)
	}
	if waitAndRetry(w, err, func(status int, msg string) {
		h.render(w, r, status, "signin", nil, view{Title: "Sign in", Data: data, Error: msg})
	}) {
		return
	}
	if err != nil {
		if memstore.ErrorCode(err) != memstore.EUnauthenticated {
			h.fail(w, r, nil, http.StatusInternalServerError, h.internal(r, err))
			return
		}
		h.render(w, r, http.StatusUnauthorized, "signin", nil, view{Title: "Sign in", Data: data, Error: memstore.ErrorMessage(err) + "."})
		return
	}
	h.setCookie(w, r, secret)
	http.Redirect(w, r, Prefix, http.StatusSeeOther) // the home page
}

// linkPage asks before redeeming a sign-in link, so that a program that
// merely fetches the link (a chat's preview) does not use it up.
func (h *Handler) linkPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "link", nil, view{Title: "Sign in with a link", Data: r.URL.Query().Get("t")})
}

func (h *Handler) redeemLink(w http.ResponseWriter, r *http.Request) {
	err := h.cfg.Users.AttemptFrom(r.Context(), h.cfg.TrustedProxies.Key(r))
	var secret string
	if err == nil {
		secret, _, err = h.cfg.Users.RedeemLink(r.Context(), r.PostFormValue("t"))
	}
	if waitAndRetry(w, err, func(status int, msg string) { h.fail(w, r, nil, status, msg) }) {
		return
	}
	if err != nil {
		h.failErr(w, r, nil, err)
		return
	}
	h.setCookie(w, r, secret)
	http.Redirect(w, r, Prefix, http.StatusSeeOther) // the home page
}

// waitAndRetry answers err when it asks the user to wait and try again
// (too many attempts, or a server too busy to check a password): with
// Retry-After, and page called with the console's status for it and the
// core's words as a sentence. It reports whether it answered.
func waitAndRetry(w http.ResponseWriter, err error, page func(status int, msg string)) bool {
	code := memstore.ErrorCode(err)
	if code != memstore.ERateLimited && code != memstore.EOverloaded {
		return false
	}
	httpstatus.RetryAfter(w.Header(), err)
	page(httpstatus.Page(code), sentence(memstore.ErrorMessage(err)))
	return true
}

// sentence is a message of the core as a sentence of a page: its first
// letter upper case, and a full stop.
func sentence(msg string) string {
	r, n := utf8.DecodeRuneInString(msg)
	return string(unicode.ToUpper(r)) + msg[n:] + "."
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := h.cfg.Users.SignOut(r.Context(), s.secret); err != nil {
		h.fail(w, r, s, http.StatusInternalServerError, h.internal(r, err))
		return
	}
	h.clearCookie(w, r)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}

// storeRow is a store in the list, with its last change; its count and
// size come with the store, kept by the backend.
type storeRow struct {
	Store memstore.Store
	Last  *memstore.Version
}

func (h *Handler) stores(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	p, err := h.cfg.Stores.Stores(ctx, s.caller, memstore.StoreFilter{Limit: pageSize, Page: r.URL.Query().Get("page"), IncludeArchived: true})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	rows := make([]storeRow, len(p.Items))
	var actors []memstore.Actor
	for i, st := range p.Items {
		rows[i].Store = st
		// One indexed read per store: the newest version.
		vs, err := h.cfg.Versions.Versions(ctx, s.caller, st.ID, memstore.VersionFilter{Limit: 1})
		if err != nil {
			h.failErr(w, r, s, err)
			return
		}
		if len(vs.Items) > 0 {
			rows[i].Last = &vs.Items[0]
			actors = append(actors, vs.Items[0].CreatedBy)
		}
	}
	h.render(w, r, http.StatusOK, "stores", s, view{Title: "Stores", Notice: notice(r), Data: map[string]any{
		"Rows": rows, "Next": p.Next, "Names": h.actorNames(ctx, s, actors...),
	}})
}

// crumb is one step of a path's breadcrumb.
type crumb struct{ Name, Prefix string }

func crumbs(prefix string) []crumb {
	out := []crumb{{"/", "/"}}
	acc := "/"
	for _, seg := range strings.Split(strings.Trim(prefix, "/"), "/") {
		if seg == "" {
			continue
		}
		acc += seg + "/"
		out = append(out, crumb{seg, acc})
	}
	return out
}

func (h *Handler) tree(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	id := r.PathValue("store")
	st, err := h.cfg.Stores.Store(ctx, s.caller, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	prefix := r.URL.Query().Get("path")
	if prefix == "" {
		prefix = "/"
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	p, err := h.cfg.Memories.Memories(ctx, s.caller, id, memstore.MemoryFilter{PathPrefix: prefix, Depth: 1, Limit: pageSize, Page: r.URL.Query().Get("page")})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "tree", s, view{Title: st.Name, Notice: notice(r), Data: map[string]any{
		"Store": st, "Prefix": prefix, "Crumbs": crumbs(prefix), "Items": p.Items, "Next": p.Next,
	}})
}

func (h *Handler) memory(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	storeID, id := r.PathValue("store"), r.PathValue("memory")
	m, err := h.cfg.Memories.Memory(ctx, s.caller, storeID, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	v, err := h.cfg.Versions.Version(ctx, s.caller, storeID, m.VersionID)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	st, err := h.cfg.Stores.Store(ctx, s.caller, storeID)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	tree, err := h.storeTree(ctx, s, storeID, m)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "memory", s, view{Title: m.Path, Notice: notice(r), Data: map[string]any{
		"Memory": m, "Version": v, "HTML": renderMarkdown(m.Content), "StoreID": storeID, "Store": st, "Crumbs": crumbs(dirOf(m.Path)),
		"By": h.actorNames(ctx, s, v.CreatedBy)[v.CreatedBy], "Tree": tree,
	}})
}

func (h *Handler) users(w http.ResponseWriter, r *http.Request, s *signedIn) {
	p, err := h.cfg.Users.Users(r.Context(), s.caller, memstore.UserFilter{Limit: pageSize, Page: r.URL.Query().Get("page")})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "users", s, view{Title: "Users", Notice: notice(r), Data: map[string]any{
		"Users": p.Items, "Next": p.Next, "Roles": memstore.Roles,
		"CanManage": s.caller.CanAdminister(memstore.ManageUsers) == nil, "Self": s.user.ID,
	}})
}

// newUserPage is the form of a new user, for those the core lets manage
// users.
func (h *Handler) newUserPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := s.caller.CanAdminister(memstore.ManageUsers); err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "usernew", s, view{Title: "New user", Data: map[string]any{"Roles": memstore.Roles}})
}

func (h *Handler) createUser(w http.ResponseWriter, r *http.Request, s *signedIn) {
	uc := memstore.UserCreate{Name: r.PostFormValue("name"), Role: memstore.Role(r.PostFormValue("role")), Password: r.PostFormValue("password")}
	_, err := h.cfg.Users.CreateUser(r.Context(), s.caller, uc)
	if memstore.ErrorCode(err) == memstore.EInvalid || memstore.ErrorCode(err) == memstore.EConflict {
		h.render(w, r, http.StatusBadRequest, "usernew", s, view{Title: "New user", Error: memstore.ErrorMessage(err),
			Data: map[string]any{"Roles": memstore.Roles, "Name": uc.Name}})
		return
	}
	h.finish(w, r, s, err, Prefix+"users")
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"prefix":  func() string { return Prefix },
	"time":    when, // the same as when, for templates that name it so
	"when":    when,
	"shortid": shortID,
	"actor":   actor,
	// copyscript is the console's script, for the layout's <script>.
	"copyscript": func() script { return copyScript },
	"inc":        func(n int) int { return n + 1 },
	// dict makes a partial's data of pairs of a name and a value.
	"dict": func(kv ...any) map[string]any {
		m := make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	// size is a count of bytes as a person reads it ("24.4KB").
	"size": func(n int64) string { return memdir.FormatSize(int(n)) },
	"base": baseName,
}

// formatTime is how the console shows a time.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// parsePages parses each page with the layout it fills.
func parsePages() map[string]*template.Template {
	layout := template.Must(template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html"))
	pages := map[string]*template.Template{}
	names, _ := fs.Glob(templateFS, "templates/*.html")
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		pages[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return pages
}

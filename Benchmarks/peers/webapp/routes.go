package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// The example app's settings (AuthKitServer's WebSignIn.Configuration
// defaults): cookie names, lifetimes, the route prefix.
const (
	sessionCookie   = "authkit_session"
	bindingCookie   = "authkit_signin"
	attemptLifetime = 600 * time.Second
	sessionLifetime = 7 * 24 * time.Hour
	pathPrefix      = "/auth/"
)

type appConfig struct {
	provider, publicURL, authorizeURL, tokenURL, meURL, clientID, clientSecret string
}

// app is the http.Handler: the sign-in routes and the home page.
type app struct {
	provider string
	name     string
	config   *oauth2.Config
	meURL    string
	stores   store
	// providerClient is the client for the token and who-am-I requests.
	providerClient *http.Client
	// secure: Secure cookies, except on a plain-http loopback site, where a
	// browser would drop them (WebSignIn.secureCookies).
	secure bool
}

func newApp(c appConfig, stores store) *app {
	public := strings.TrimRight(c.publicURL, "/")
	secure := !(strings.HasPrefix(public, "http://127.0.0.1") || strings.HasPrefix(public, "http://localhost") ||
		strings.HasPrefix(public, "http://[::1]"))
	// net/http's default transport keeps 2 idle connections per host, so
	// an app making its provider requests from many handlers at once would
	// open (and leave in TIME_WAIT) a connection for most of them; a server
	// app sizes its pool for its concurrency, and AuthKit's transport
	// reuses its connections, so this one keeps up to 100.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // the provider is on loopback; no proxy from the environment
	transport.MaxIdleConns = 100
	transport.MaxIdleConnsPerHost = 100
	return &app{
		provider: c.provider,
		name:     "Benchmark tokenserver",
		config: &oauth2.Config{
			ClientID:     c.clientID,
			ClientSecret: c.clientSecret,
			// AuthStyleInParams is client_secret_post, the descriptor's
			// "clientAuthentication": "post"; set, it also avoids
			// x/oauth2's auto-detection (Basic first, then a retry).
			Endpoint: oauth2.Endpoint{AuthURL: c.authorizeURL, TokenURL: c.tokenURL, AuthStyle: oauth2.AuthStyleInParams},
			// PUBLIC_URL/auth/{provider}/callback, as WebSignIn.redirectURI makes it.
			RedirectURL: public + pathPrefix + c.provider + "/callback",
			Scopes:      []string{"read", "write"},
		},
		meURL:          c.meURL,
		stores:         stores,
		providerClient: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		secure:         secure,
	}
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/" && r.Method == http.MethodGet:
		a.home(w, r)
	case strings.HasPrefix(path, pathPrefix) && r.Method == http.MethodGet:
		rest := path[len(pathPrefix):]
		if provider := strings.TrimSuffix(rest, "/callback"); provider != rest {
			a.callback(w, r, provider)
		} else if !strings.Contains(rest, "/") {
			a.start(w, r, rest)
		} else {
			http.NotFound(w, r)
		}
	default:
		http.NotFound(w, r)
	}
}

// refusal is an error answered with a status and a page that says it
// (AuthKitHummingbird's errorPage).
type refusal struct {
	status  int
	message string
}

func (e *refusal) Error() string { return e.message }

var (
	errUnknownProvider = &refusal{http.StatusNotFound, "No sign-in with this provider is configured here."}
	errReturnPath      = &refusal{http.StatusBadRequest, "The return address is not a path on this site; sign in from a link of this site."}
	errAttemptNotFound = &refusal{http.StatusBadRequest, "This sign-in is unknown here: it expired, was already finished, or was not started on this site. Start it again."}
	errBrowserMismatch = &refusal{http.StatusBadRequest, "This sign-in was started in another browser (or its cookies were cleared). Start it again in this one."}
)

// start is GET /auth/{provider}?return_to=/path: a new state, PKCE
// verifier and binding token; the attempt kept server-side under the
// state's SHA-256; 302 to the provider with the binding cookie set.
func (a *app) start(w http.ResponseWriter, r *http.Request, provider string) {
	err := func() error {
		if provider != a.provider {
			return errUnknownProvider
		}
		returnTo, ok := checkedReturnPath(r.URL.Query()["return_to"])
		if !ok {
			return errReturnPath
		}
		state, verifier, binding := randomToken(), randomToken(), randomToken()
		location := a.config.AuthCodeURL(state, challengeOptions(verifier)...)
		now := time.Now()
		attempt := &signInAttempt{
			ProviderID: provider, State: state, CodeVerifier: verifier, RedirectURI: a.config.RedirectURL,
			Scopes: a.config.Scopes, CreatedAt: now, ReturnTo: returnTo, BrowserBinding: digest(binding),
			ExpiresAt: now.Add(attemptLifetime),
		}
		if err := a.stores.insertAttempt(r.Context(), digest(state), attempt); err != nil {
			return err
		}
		redirect(w, location, a.cookie(bindingCookie, binding, attemptLifetime))
		return nil
	}()
	if err != nil {
		a.fail(w, err)
	}
}

// callback is GET /auth/{provider}/callback?code=…&state=…: the attempt
// taken once (a replay finds nothing), the binding cookie checked against
// it, the code exchanged (x/oauth2, with the PKCE verifier), the provider
// asked who signed in, the credential saved under the account's lock, a new
// session inserted; 302 to the return path with the session cookie.
func (a *app) callback(w http.ResponseWriter, r *http.Request, provider string) {
	err := func() error {
		if provider != a.provider {
			return errUnknownProvider
		}
		query := r.URL.Query()
		states := query["state"]
		if len(states) != 1 {
			return errAttemptNotFound
		}
		ctx := r.Context()
		// As WebSignIn.finish: the attempt is read in place and the
		// browser checked against it, then taken (a callback that fails the
		// checks removes nothing), its binding compared once more.
		id := digest(states[0])
		found, err := a.stores.readAttempt(ctx, id, time.Now())
		if err != nil {
			return err
		}
		if found == nil || found.ProviderID != provider {
			return errAttemptNotFound
		}
		cookie, err := r.Cookie(bindingCookie)
		if err != nil || !equal(digest(cookie.Value), found.BrowserBinding) {
			return errBrowserMismatch
		}
		attempt, err := a.stores.takeAttempt(ctx, id, time.Now())
		if err != nil {
			return err
		}
		if attempt == nil || !equal(attempt.BrowserBinding, found.BrowserBinding) {
			return errAttemptNotFound
		}
		// What AuthKit's OAuth2Client checks of the redirect before the exchange.
		if !equal(states[0], attempt.State) {
			return errAttemptNotFound
		}
		if query.Get("error") != "" {
			return &refusal{http.StatusForbidden, "The provider refused the sign-in: " + query.Get("error")}
		}
		code := query.Get("code")
		if code == "" {
			return &refusal{http.StatusBadRequest, "The provider's redirect carries no code."}
		}
		ctx = context.WithValue(ctx, oauth2.HTTPClient, a.providerClient)
		token, err := a.config.Exchange(ctx, code, verifierOption(attempt.CodeVerifier))
		if err != nil {
			return &refusal{http.StatusBadGateway, "The token request failed: " + err.Error()}
		}
		subject, name, err := a.whoAmI(ctx, token)
		if err != nil {
			return &refusal{http.StatusBadGateway, "The who-am-I request failed: " + err.Error()}
		}
		user := newSignedInUser(provider, subject, name)
		now := time.Now()
		cred := &credential{
			ProviderID: provider, Label: user.CredentialLabel, Kind: "oauth2", AccessToken: token.AccessToken,
			TokenType: token.Type(), RefreshToken: token.RefreshToken, ExpiresAt: token.Expiry,
			Scopes: attempt.Scopes, ObtainedAt: now, RawFields: map[string]string{},
		}
		if err := a.stores.saveSignIn(ctx, cred); err != nil {
			return err
		}
		sessionID := randomToken()
		session := &webSession{User: user, CSRFToken: randomToken(), CreatedAt: now, ExpiresAt: now.Add(sessionLifetime)}
		if err := a.stores.insertSession(ctx, digest(sessionID), session); err != nil {
			return err
		}
		redirect(w, attempt.ReturnTo, a.cookie(sessionCookie, sessionID, sessionLifetime), a.cookie(bindingCookie, "", 0))
		return nil
	}()
	if err != nil {
		a.fail(w, err)
	}
}

// whoAmI is the descriptor's who-am-I call: GET with the access token,
// the subject from "sub" (a number taken as its text) and the name from "name".
func (a *app) whoAmI(ctx context.Context, token *oauth2.Token) (string, string, error) {
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, a.meURL, nil)
	if err != nil {
		return "", "", err
	}
	token.SetAuthHeader(request)
	request.Header.Set("Accept", "application/json")
	response, err := a.providerClient.Do(request)
	if err != nil {
		return "", "", err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(io.LimitReader(response.Body, 1<<20))
	if err != nil {
		return "", "", err
	}
	if response.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%s answered %d", a.meURL, response.StatusCode)
	}
	var answer struct {
		Sub  json.RawMessage `json:"sub"`
		Name string          `json:"name"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return "", "", err
	}
	var subject string
	if err := json.Unmarshal(answer.Sub, &subject); err != nil || subject == "" {
		var number json.Number
		if json.Unmarshal(answer.Sub, &number) != nil {
			return "", "", errors.New("the answer has no subject (sub)")
		}
		subject = number.String()
	}
	return subject, answer.Name, nil
}

// home is GET /: the session the cookie names, looked up, and a page that
// says who is signed in (or offers the sign-in), as the example app's.
func (a *app) home(w http.ResponseWriter, r *http.Request) {
	var session *webSession
	if cookie, err := r.Cookie(sessionCookie); err == nil && cookie.Value != "" && len(cookie.Value) <= 256 {
		// As the example app's `try?`: a store error shows the signed-out page.
		session, _ = a.stores.session(r.Context(), digest(cookie.Value), time.Now())
	}
	var body strings.Builder
	if session != nil {
		shown := session.User.DisplayName
		if shown == "" {
			shown = session.User.Subject
		}
		fmt.Fprintf(&body, "<p>Signed in to %s as %s.</p><p><a href=\"/me\">/me</a></p>",
			html.EscapeString(session.User.ProviderID), html.EscapeString(shown))
		fmt.Fprintf(&body, "<form method=\"post\" action=\"/auth/logout\"><input type=\"hidden\" name=\"csrf\" value=\"%s\"><button>Sign out</button></form>",
			html.EscapeString(session.CSRFToken))
	} else {
		fmt.Fprintf(&body, "<p><a href=\"/auth/%s\">Sign in with %s</a></p>", html.EscapeString(a.provider),
			html.EscapeString(a.name))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>AuthKit web example</title></head><body>"+
		body.String()+"</body></html>")
}

// cookie is the Set-Cookie value AuthKit's WebCookie writes: HttpOnly,
// SameSite=Lax, Path=/, Secure unless the site is plain-http loopback.
func (a *app) cookie(name, value string, maxAge time.Duration) string {
	text := name + "=" + value + "; Path=/; Max-Age=" + fmt.Sprint(int(maxAge.Seconds())) + "; HttpOnly; SameSite=Lax"
	if a.secure {
		text += "; Secure"
	}
	return text
}

// redirect answers 302 to location, not to be cached, setting the cookies.
func redirect(w http.ResponseWriter, location string, cookies ...string) {
	h := w.Header()
	h["Location"] = []string{location}
	h["Cache-Control"] = []string{"no-store"}
	h["Set-Cookie"] = cookies
	w.WriteHeader(http.StatusFound)
}

// fail answers a refusal with its status, and a store error with 503 (the
// database away: the next request tries again), with a short page.
func (a *app) fail(w http.ResponseWriter, err error) {
	status, message := http.StatusServiceUnavailable, "The sign-in could not be stored: "+err.Error()
	var r *refusal
	if errors.As(err, &r) {
		status, message = r.status, r.message
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; form-action *; frame-ancestors 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign-in</title></head>\n<body><p>%s</p><p><a href=\"/\">Back</a></p></body></html>",
		html.EscapeString(message))
}

// checkedReturnPath is AuthKitServer's ReturnPath: absent is "/"; else a
// path on this site only (no scheme-relative "//", no backslash, no control
// character or space), at most 1024 bytes: no open redirector.
func checkedReturnPath(values []string) (string, bool) {
	if len(values) == 0 || values[0] == "" {
		return "/", true
	}
	text := values[0]
	if len(text) > 1024 || !strings.HasPrefix(text, "/") || strings.HasPrefix(text, "//") {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
	}
	return text, true
}

// equal compares in constant time, as AuthKit's ConstantTime.equals.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

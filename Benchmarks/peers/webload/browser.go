package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The cookies the example app sets (AuthKitServer's WebSignIn defaults).
const (
	sessionCookie = "authkit_session"
	bindingCookie = "authkit_signin"
)

// newClient is a keep-alive client with an idle connection for every
// concurrent client, so each keeps its connection, against either app
// alike; it does not follow redirects (the Location is read instead) and
// uses no proxy from the environment.
func newClient(concurrency int) *http.Client {
	transport := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        concurrency * 2,
		MaxIdleConnsPerHost: concurrency * 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{
		Transport:     transport,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// browser is what one sign-in needs of a browser: the app, the provider,
// and a client (shared: its pool holds every client's connection).
type browser struct {
	base, provider string
	client         *http.Client
}

// get sends GET path with the cookie, if any, reads the whole body (so the
// connection is reused) and returns the answer.
func (b browser) get(path string, cookie *http.Cookie) (*http.Response, []byte, error) {
	request, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		return nil, nil, err
	}
	if cookie != nil {
		request.AddCookie(cookie)
	}
	response, err := b.client.Do(request)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(response.Body)
	response.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %v", path, err)
	}
	return response, body, nil
}

// nextUser numbers the users signing in.
var nextUser atomic.Uint64

// signIn runs one sign-in and returns the session cookie it ends with.
func (b browser) signIn() (*http.Cookie, error) {
	startPath := "/auth/" + b.provider
	response, body, err := b.get(startPath, nil)
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusFound {
		return nil, unexpected(startPath, response, body, "302 to the provider")
	}
	location, err := url.Parse(response.Header.Get("Location"))
	if err != nil {
		return nil, unexpected(startPath, response, body, "a Location that is a URL")
	}
	query := location.Query()
	state := query.Get("state")
	if state == "" || query.Get("code_challenge_method") != "S256" || query.Get("code_challenge") == "" {
		return nil, unexpected(startPath, response, body, "a Location with state and a PKCE S256 challenge")
	}
	binding := cookieNamed(response, bindingCookie)
	if binding == nil || binding.Value == "" {
		return nil, unexpected(startPath, response, body, "a "+bindingCookie+" cookie")
	}

	// What the provider's redirect back would carry: a code and the state.
	// Each sign-in is another user's (the tokenserver gives code
	// bench-code-N its own token, and its /me names user N), as on a site
	// many people use; one account signing in over and over would measure
	// that account's lock instead.
	callbackPath := "/auth/" + b.provider + "/callback?code=bench-code-" + strconv.FormatUint(nextUser.Add(1), 10) +
		"&state=" + url.QueryEscape(state)
	response, body, err = b.get(callbackPath, &http.Cookie{Name: bindingCookie, Value: binding.Value})
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusFound || response.Header.Get("Location") != "/" {
		return nil, unexpected(callbackPath, response, body, "302 to /")
	}
	session := cookieNamed(response, sessionCookie)
	if session == nil || session.Value == "" {
		return nil, unexpected(callbackPath, response, body, "a "+sessionCookie+" cookie")
	}
	return &http.Cookie{Name: sessionCookie, Value: session.Value}, nil
}

// page requests / with a session and checks that it shows the user.
func (b browser) page(session *http.Cookie) error {
	response, body, err := b.get("/", session)
	if err != nil {
		return err
	}
	if response.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in to "+b.provider) {
		return unexpected("/", response, body, "200 with the signed-in page")
	}
	return nil
}

func cookieNamed(response *http.Response, name string) *http.Cookie {
	for _, c := range response.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// unexpected describes an answer that is not what a sign-in expects.
func unexpected(path string, response *http.Response, body []byte, wanted string) error {
	text := string(body)
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	return fmt.Errorf("GET %s answered %s (Location %q), not %s: %s", path, response.Status,
		response.Header.Get("Location"), wanted, text)
}

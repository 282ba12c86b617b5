package main

import (
	"net/http"
	"net/url"
	"strings"
)

// The fixed values of the benchmark's provider; both clients are configured
// with the same ones.
const (
	clientID     = "bench-client"
	clientSecret = "bench-secret"
	code         = "bench-code"
	refreshToken = "bench-refresh"
)

// tokenAnswer is byte for byte the answer the in-memory transports of both
// sides return, so the library rows and the network rows parse the same JSON.
var tokenAnswer = []byte(`{"access_token":"bench-access","token_type":"Bearer","expires_in":3600,"refresh_token":"bench-refresh","scope":"read write"}`)

// Header values allocated once: the handlers should cost as little as
// possible, since their time is subtracted but their allocations are not.
var (
	jsonType = []string{"application/json"}
	noStore  = []string{"no-store"} // RFC 6749 §5.1: token answers must not be cached
)

// authorize stands in for the consent screen: a request that is a valid
// PKCE (S256) authorization request for bench-client is approved at once.
//
//	GET /authorize?response_type=code&client_id=…&redirect_uri=R&state=S&code_challenge=…&code_challenge_method=S256
//	→ 302 Location: R?code=bench-code&state=S
func authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	switch {
	case r.Method != http.MethodGet:
		fail(w, http.StatusMethodNotAllowed, "invalid_request")
	case q.Get("response_type") != "code":
		fail(w, http.StatusBadRequest, "unsupported_response_type")
	case q.Get("client_id") != clientID:
		fail(w, http.StatusBadRequest, "unauthorized_client")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail(w, http.StatusBadRequest, "invalid_request")
	case redirect == "":
		fail(w, http.StatusBadRequest, "invalid_request")
	default:
		// Append to whatever query the redirect URI already has (RFC 6749 §4.1.2).
		sep := "?"
		if strings.Contains(redirect, "?") {
			sep = "&"
		}
		location := redirect + sep + "code=" + code
		if state := q.Get("state"); state != "" {
			location += "&state=" + url.QueryEscape(state)
		}
		w.Header()["Location"] = []string{location}
		w.WriteHeader(http.StatusFound)
	}
}

// token is the token endpoint (RFC 6749 §4.1.3, §6) with client_secret_post:
// the client's id and secret are in the form body.
func token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		fail(w, http.StatusMethodNotAllowed, "invalid_request")
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "invalid_request")
		return
	}
	f := r.PostForm
	if f.Get("client_id") != clientID || f.Get("client_secret") != clientSecret {
		fail(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		// The server keeps no state, so the verifier cannot be checked
		// against the challenge; its presence (and the redirect URI's) is.
		if f.Get("code_verifier") == "" || f.Get("redirect_uri") == "" {
			fail(w, http.StatusBadRequest, "invalid_request")
			return
		}
		if user, ok := userOfCode(f.Get("code")); !ok {
			fail(w, http.StatusBadRequest, "invalid_grant")
			return
		} else if user != "" {
			// A code of one of many users (the web rows): its own token.
			h := w.Header()
			h["Content-Type"] = jsonType
			h["Cache-Control"] = noStore
			w.Write([]byte(`{"access_token":"bench-access-` + user + `","token_type":"Bearer","expires_in":3600,"refresh_token":"bench-refresh","scope":"read write"}`))
			return
		}
	case "refresh_token":
		if f.Get("refresh_token") != refreshToken {
			fail(w, http.StatusBadRequest, "invalid_grant")
			return
		}
	default:
		fail(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	w.Write(tokenAnswer)
}

// fail answers with an RFC 6749 §5.2 error body.
func fail(w http.ResponseWriter, status int, code string) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write([]byte(`{"error":"` + code + `"}`))
}

// me is a resource the access token opens: the web sign-ins ask it who
// signed in (a descriptor's whoAmI: subject "sub", name "name"), and the
// TLS rows GET it 200 times per batch.
//
//	GET /me  Authorization: Bearer bench-access  →  {"sub":"bench-user","name":"Bench User"}
func me(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		fail(w, http.StatusMethodNotAllowed, "invalid_request")
		return
	}
	given := r.Header.Get("Authorization")
	if given == "Bearer bench-access" {
		w.Header()["Content-Type"] = jsonType
		w.Write(meAnswer)
		return
	}
	user, ok := "", false
	if strings.HasPrefix(given, "Bearer bench-access-") {
		user, ok = userOfCode("bench-code-" + strings.TrimPrefix(given, "Bearer bench-access-"))
	}
	if !ok || user == "" {
		w.Header()["WWW-Authenticate"] = []string{`Bearer error="invalid_token"`}
		fail(w, http.StatusUnauthorized, "invalid_token")
		return
	}
	w.Header()["Content-Type"] = jsonType
	w.Write([]byte(`{"sub":"bench-user-` + user + `","name":"Bench User ` + user + `"}`))
}

// userOfCode reads a code the provider accepts: "bench-code" (the one user
// of every other row: user ""), or "bench-code-N" for user N (1 to 32
// letters and digits), which the web rows send so that each sign-in is
// another person's, as on a real site, and no two wait on one account's lock.
func userOfCode(given string) (string, bool) {
	if given == code {
		return "", true
	}
	user := strings.TrimPrefix(given, code+"-")
	if user == given || len(user) == 0 || len(user) > 32 {
		return "", false
	}
	for _, c := range user {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", false
		}
	}
	return user, true
}

var meAnswer = []byte(`{"sub":"bench-user","name":"Bench User"}`)

package main

import (
	"crypto/subtle"
	"net/http"
	"sync"
)

// callback is what the redirect to the loopback listener carried.
type callback struct {
	code string
	err  string // the provider's "error" parameter, if it refused
}

// page is the small page the browser shows after the redirect.
const page = "<!doctype html><meta charset=utf-8><title>Signed in</title><p>Signed in. You can close this tab.</p>\n"

// callbackHandler accepts the first request to /callback whose state is
// this sign-in's (compared in constant time, as it guards against CSRF,
// RFC 6749 §10.12), answers the browser, and hands the result over. Other
// requests (a favicon, a stale tab) get an error and the wait goes on.
func callbackHandler(state string, results chan<- callback) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "This is not the answer to the sign-in in progress.", http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Connection", "close") // the listener is about to shut: no keep-alive
		w.Write([]byte(page))
		// Send the page before handing over, so shutting the listener
		// does not wait on it.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		once.Do(func() { results <- callback{code: q.Get("code"), err: q.Get("error")} })
	})
}

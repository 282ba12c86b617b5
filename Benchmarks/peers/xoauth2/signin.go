package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
)

// signInTimeout bounds the wait for the redirect; the scripted browser
// answers within milliseconds, so hitting it means something is broken.
const signInTimeout = 30 * time.Second

// signIn is a whole command-line sign-in as an x/oauth2 app writes it
// (RFC 8252 loopback redirect): listen, open the browser, catch the
// redirect, exchange the code, store the token. The orchestrator times the
// whole process, so the order of the steps matches `authkit authorize`.
func signIn(authorizeURL, tokenURL, out string) error {
	if authorizeURL == "" || tokenURL == "" || out == "" {
		return errors.New("signin needs -authorize-url, -token-url and -out")
	}
	// Any free port on loopback only (RFC 8252 §7.3, §8.3).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	config := newConfig(authorizeURL, tokenURL, redirect)

	state, err := randomToken()
	if err != nil {
		return err
	}
	verifier, err := randomToken()
	if err != nil {
		return err
	}
	authURL := config.AuthCodeURL(state, challengeOptions(verifier)...)

	results := make(chan callback, 1)
	server := &http.Server{Handler: callbackHandler(state, results)}
	go server.Serve(ln)

	browser, err := openBrowser(authURL)
	if err != nil {
		return err
	}

	var result callback
	select {
	case result = <-results:
	case err := <-browser.failed:
		return err
	case <-time.After(signInTimeout):
		return errors.New("timed out waiting for the redirect")
	}
	if result.err != "" {
		return fmt.Errorf("the provider refused: %s", result.err)
	}

	// Stop accepting at once. Shutdown then waits for the page being sent
	// to finish, which needs no waiting here: it runs beside the exchange.
	stopped := make(chan struct{})
	go func() {
		server.Shutdown(context.Background())
		close(stopped)
	}()

	token, err := config.Exchange(context.Background(), result.code, verifierOption(verifier))
	if err != nil {
		return err
	}
	if err := checkToken(token); err != nil {
		return err
	}
	if err := writeToken(out, token); err != nil {
		return err
	}
	<-stopped
	browser.reap()
	return nil
}

// writeToken stores the token as AuthKit's credential store does, so both
// sides pay for the same durability: a temporary file written and fsync'd,
// renamed over the old one, and the directory fsync'd so the rename survives
// a crash.
func writeToken(path string, token *oauth2.Token) error {
	temporary := path + ".tmp"
	f, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(token); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(temporary, path); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

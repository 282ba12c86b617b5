package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// memoryContext makes x/oauth2 use the in-memory transport: the library's
// documented way to give it an HTTP client is this context value.
func memoryContext() context.Context {
	client := &http.Client{Transport: memoryTransport{}}
	return context.WithValue(context.Background(), oauth2.HTTPClient, client)
}

// exchangeOnce is one sign-in's library work: a fresh state and PKCE pair,
// the authorization URL, then the code exchange. The URL is built and
// dropped because an app builds it for every sign-in too.
func exchangeOnce(ctx context.Context, config *oauth2.Config) (*oauth2.Token, error) {
	state, err := randomToken()
	if err != nil {
		return nil, err
	}
	verifier, err := randomToken()
	if err != nil {
		return nil, err
	}
	_ = config.AuthCodeURL(state, challengeOptions(verifier)...)
	return config.Exchange(ctx, "bench-code", verifierOption(verifier))
}

// checkToken is the correctness check done before any timing.
func checkToken(t *oauth2.Token) error {
	if t.AccessToken != "bench-access" || t.RefreshToken != "bench-refresh" {
		return fmt.Errorf("unexpected token: access %q, refresh %q", t.AccessToken, t.RefreshToken)
	}
	return nil
}

func libraryExchange(seconds float64) error {
	ctx := memoryContext()
	config := newConfig("http://127.0.0.1:9/authorize", "http://127.0.0.1:9/token", "http://127.0.0.1:8765/callback")
	first, err := exchangeOnce(ctx, config)
	if err != nil {
		return err
	}
	if err := checkToken(first); err != nil {
		return err
	}
	return measure(seconds, 100, func() error {
		_, err := exchangeOnce(ctx, config)
		return err
	})
}

// refreshOnce is an expired token refreshed the way x/oauth2 apps do it:
// a TokenSource over the stale token, asked for a valid one.
func refreshOnce(ctx context.Context, config *oauth2.Config) (*oauth2.Token, error) {
	stale := &oauth2.Token{AccessToken: "old", RefreshToken: "bench-refresh", Expiry: time.Now().Add(-time.Hour)}
	return config.TokenSource(ctx, stale).Token()
}

func libraryRefresh(seconds float64) error {
	ctx := memoryContext()
	config := newConfig("http://127.0.0.1:9/authorize", "http://127.0.0.1:9/token", "")
	first, err := refreshOnce(ctx, config)
	if err != nil {
		return err
	}
	if err := checkToken(first); err != nil {
		return err
	}
	return measure(seconds, 100, func() error {
		_, err := refreshOnce(ctx, config)
		return err
	})
}

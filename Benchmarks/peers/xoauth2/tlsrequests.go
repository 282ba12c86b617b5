package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// tlsBatch is the number of GETs in one op of the TLS rows.
const tlsBatch = 200

// tlsRequests GETs base+"/me" in batches of 200 through x/oauth2's Client
// (an oauth2.Transport adding the Bearer token), one at a time or
// `concurrency` at once, as TLSRequestBenchmark does. The server's authority
// is trusted through SSL_CERT_FILE, which Go's crypto/x509 reads on Linux.
//
// The base transport is net/http's default with one change: it keeps as
// many idle connections per host as requests run at once (the default keeps
// 2), which is what a program that sends 16 at once configures so that its
// connections are reused; AuthKit's transport keeps its own without setting.
func tlsRequests(base string, seconds float64, concurrency int) error {
	if base == "" || concurrency < 1 {
		return fmt.Errorf("tls-requests needs -base URL and -concurrency >= 1")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if concurrency > transport.MaxIdleConnsPerHost {
		transport.MaxIdleConnsPerHost = concurrency
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: transport})
	config := newConfig(base+"/authorize", base+"/token", "http://127.0.0.1:8765/callback")
	token := &oauth2.Token{AccessToken: "bench-access", TokenType: "Bearer", RefreshToken: "bench-refresh",
		Expiry: time.Now().Add(24 * time.Hour)}
	client := config.Client(ctx, token)
	url := base + "/me"

	get := func() error {
		answer, err := client.Get(url)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, answer.Body)
		answer.Body.Close()
		if err != nil {
			return err
		}
		if answer.StatusCode != http.StatusOK || n == 0 {
			return fmt.Errorf("GET /me answered %d with %d bytes", answer.StatusCode, n)
		}
		return nil
	}
	batch := func() error {
		if concurrency == 1 {
			for i := 0; i < tlsBatch; i++ {
				if err := get(); err != nil {
					return err
				}
			}
			return nil
		}
		var next atomic.Int64
		errs := make(chan error, concurrency)
		for w := 0; w < concurrency; w++ {
			go func() {
				for next.Add(1) <= tlsBatch {
					if err := get(); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		var first error
		for w := 0; w < concurrency; w++ {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	if err := get(); err != nil {
		return err
	}
	return measure(seconds, 1, batch)
}

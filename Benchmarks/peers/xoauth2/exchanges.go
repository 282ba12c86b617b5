package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// networkExchanges runs the same op as library-exchange, but through the
// default net/http client to the real tokenserver over loopback, with
// `concurrency` goroutines each exchanging one code after another.
//
// The transport is net/http's default with one change, as in the TLS rows:
// it keeps as many idle connections per host as exchanges run at once. The
// default keeps 2, so at 16 at once most exchanges opened and closed a
// connection, work AuthKit's side (which keeps its own) did not do, and
// x/oauth2's rate was understated.
func networkExchanges(tokenURL string, seconds float64, concurrency int) error {
	if tokenURL == "" || concurrency < 1 {
		return fmt.Errorf("exchanges needs -token-url URL and -concurrency >= 1")
	}
	authURL := strings.TrimSuffix(tokenURL, "/token") + "/authorize"
	config := newConfig(authURL, tokenURL, "http://127.0.0.1:8765/callback")
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if concurrency > transport.MaxIdleConnsPerHost {
		transport.MaxIdleConnsPerHost = concurrency
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: transport})

	first, err := exchangeOnce(ctx, config)
	if err != nil {
		return err
	}
	if err := checkToken(first); err != nil {
		return err
	}
	if _, _, err := runConcurrently(ctx, warmUp.Seconds(), concurrency, config); err != nil {
		return err
	}
	cpu := processCPUSeconds()
	ops, elapsed, err := runConcurrently(ctx, seconds, concurrency, config)
	if err != nil {
		return err
	}
	report(ops, elapsed, processCPUSeconds()-cpu)
	return nil
}

// runConcurrently starts the goroutines together and stops them at the
// deadline; the time is until the last one finished its last exchange, so
// every counted exchange is inside it.
func runConcurrently(ctx context.Context, seconds float64, concurrency int, config *oauth2.Config) (int, float64, error) {
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		total    int
		firstErr error
	)
	for i := 0; i < concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := 0
			var err error
			// A network exchange takes tens of µs, so reading the clock
			// after each one costs nothing measurable.
			for time.Now().Before(deadline) {
				if _, err = exchangeOnce(ctx, config); err != nil {
					break
				}
				done++
			}
			mu.Lock()
			total += done
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, time.Since(start).Seconds(), firstErr
}

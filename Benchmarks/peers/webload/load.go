package main

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// warmUp is run (and thrown away) before the timed sign-ins, so the app's
// lazy initialisation, its first connections (to the app, the provider and
// the database) and the first GC cycles are not measured.
const warmUp = 500 * time.Millisecond

// signIns warms up, then runs sign-ins for `seconds` and reports them.
func signIns(b browser, seconds float64, concurrency int) error {
	if _, err := b.signIn(); err != nil { // one alone first: a broken setup fails with one clear message
		return err
	}
	if _, _, err := run(warmUp.Seconds(), concurrency, func(int) error { _, err := b.signIn(); return err }); err != nil {
		return err
	}
	ops, elapsed, err := run(seconds, concurrency, func(int) error { _, err := b.signIn(); return err })
	if err != nil {
		return err
	}
	report(ops, elapsed)
	return nil
}

// memory signs in n times (concurrency at a time), keeping the sessions,
// then has `concurrency` clients request / with them, in turn, for
// `seconds`, and reports those requests.
func memory(b browser, n int, seconds float64, concurrency int) error {
	sessions := make([]*http.Cookie, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for i := 0; i < concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= n {
					return
				}
				cookie, err := b.signIn()
				if err != nil {
					errs <- err
					return
				}
				sessions[j] = cookie
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	var turn atomic.Int64
	ops, elapsed, err := run(seconds, concurrency, func(int) error {
		return b.page(sessions[int(turn.Add(1)-1)%n])
	})
	if err != nil {
		return err
	}
	report(ops, elapsed)
	return nil
}

// run starts `concurrency` goroutines together, each doing op until the
// deadline, and returns the ops done and the time until the last one
// finished (so every counted op is inside it). The first error stops all.
func run(seconds float64, concurrency int, op func(int) error) (int, float64, error) {
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	var (
		wg       sync.WaitGroup
		total    atomic.Int64
		failed   atomic.Bool
		mu       sync.Mutex
		firstErr error
	)
	for i := 0; i < concurrency; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			done := int64(0)
			// A request takes tens of µs or more, so reading the clock
			// after each one costs nothing measurable.
			for !failed.Load() && time.Now().Before(deadline) {
				if err := op(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					failed.Store(true)
					break
				}
				done++
			}
			total.Add(done)
		}(i)
	}
	wg.Wait()
	return int(total.Load()), time.Since(start).Seconds(), firstErr
}

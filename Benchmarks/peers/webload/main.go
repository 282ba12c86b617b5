// webload: the load generator of the web rows of Benchmarks/run-benchmarks,
// used alike against AuthKit's example web app and the Go peer
// (peers/webapp): it plays the browsers.
//
//	webload signin -base URL -provider bench -seconds S -concurrency C
//	webload memory -base URL -provider bench -sessions N -concurrency C -seconds S
//
// signin: C clients each sign in one after another for S seconds (after a
// warm-up): GET /auth/{provider} (not following its redirect) gives the
// state in the provider URL and the binding cookie; GET
// /auth/{provider}/callback?code=bench-code-N&state=… with that cookie must
// answer 302 with a session cookie. The loopback provider approves every
// request with such a code (user N's), so the browser's visit to it is skipped.
// It counts completed sign-ins.
//
// memory: N sign-ins (C at a time), their session cookies kept; then C
// clients GET / with those sessions for S seconds; it counts those pages.
// The harness reads the app's resident memory after it.
//
// Both print one JSON line {"ops": N, "seconds": S} on stdout; anything
// unexpected (a status, a missing cookie, a page without the signed-in
// user) exits 1 with a message on stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		die(fmt.Errorf("usage: webload signin|memory -base URL [flags]"))
	}
	mode, args := os.Args[1], os.Args[2:]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	base := flags.String("base", "", "the app's address, http://127.0.0.1:PORT")
	provider := flags.String("provider", "bench", "the provider id in the app's routes")
	seconds := flags.Float64("seconds", 2, "length of the timed phase")
	concurrency := flags.Int("concurrency", 16, "clients at once")
	sessions := flags.Int("sessions", 1000, "memory: sign-ins whose sessions the page requests use")
	flags.Parse(args)
	if *base == "" || *concurrency < 1 || *seconds <= 0 {
		die(fmt.Errorf("%s needs -base URL, -concurrency >= 1 and -seconds > 0", mode))
	}
	b := browser{base: strings.TrimRight(*base, "/"), provider: *provider, client: newClient(*concurrency)}

	var err error
	switch mode {
	case "signin":
		err = signIns(b, *seconds, *concurrency)
	case "memory":
		if *sessions < 1 {
			err = fmt.Errorf("memory needs -sessions >= 1")
		} else {
			err = memory(b, *sessions, *seconds, *concurrency)
		}
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		die(err)
	}
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "webload:", err)
	os.Exit(1)
}

// report prints the one line on stdout the orchestrator reads.
func report(ops int, seconds float64) {
	fmt.Printf("{\"ops\": %d, \"seconds\": %.6f}\n", ops, seconds)
}

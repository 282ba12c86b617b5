// xoauth2peer: golang.org/x/oauth2 doing the work AuthKitBenchmark and
// `authkit authorize` do, for Benchmarks/run-benchmarks to compare.
//
//	xoauth2peer library-exchange -seconds S
//	xoauth2peer library-refresh  -seconds S
//	xoauth2peer exchanges -token-url URL -seconds S -concurrency C
//	xoauth2peer signin -authorize-url URL -token-url URL -out FILE
//	xoauth2peer tls-requests -base URL -seconds S -concurrency C   (batches of 200 GETs)
//	xoauth2peer floor      (does nothing: the process start-up floor)
//
// The measuring modes print one JSON line {"ops": N, "seconds": S} on
// stdout; everything else goes to stderr. Any failure exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		die(fmt.Errorf("usage: xoauth2peer library-exchange|library-refresh|exchanges|signin|tls-requests|floor [flags]"))
	}
	mode, args := os.Args[1], os.Args[2:]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	seconds := flags.Float64("seconds", 2, "length of the timed loop")
	tokenURL := flags.String("token-url", "", "the tokenserver's /token")
	authorizeURL := flags.String("authorize-url", "", "the tokenserver's /authorize")
	concurrency := flags.Int("concurrency", 1, "goroutines exchanging at once")
	out := flags.String("out", "", "signin: where the token is written")
	base := flags.String("base", "", "tls-requests: the TLS server's https://127.0.0.1:PORT")
	flags.Parse(args)

	var err error
	switch mode {
	case "library-exchange":
		err = libraryExchange(*seconds)
	case "library-refresh":
		err = libraryRefresh(*seconds)
	case "exchanges":
		err = networkExchanges(*tokenURL, *seconds, *concurrency)
	case "tls-requests":
		err = tlsRequests(*base, *seconds, *concurrency)
	case "signin":
		err = signIn(*authorizeURL, *tokenURL, *out)
	case "floor":
		// Same binary, same linked packages and runtime start-up, no work:
		// what any Go program of this size costs before it does anything.
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		die(err)
	}
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "xoauth2peer:", err)
	os.Exit(1)
}

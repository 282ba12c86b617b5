// webapp: a Go web app with "Sign in with …" doing the work of AuthKit's
// example web app (Examples/WebApp, authkit-web-example), for the web rows
// of Benchmarks/run-benchmarks to compare: net/http, golang.org/x/oauth2
// (Debian's 0.3.0) and, with -database-url, database/sql with
// github.com/lib/pq (Debian's golang-github-lib-pq-dev).
//
//	webapp -port N [-public-url URL] [-database-url postgres://…]
//	       -authorize-url URL -token-url URL -me-url URL
//
// The routes, cookies and stored values are the example app's (see
// routes.go): GET /auth/bench starts a sign-in, GET /auth/bench/callback
// finishes it (code exchange, who-am-I, credential and session saved),
// GET / looks the session up. Without -database-url everything is kept in
// memory; with it, in PostgreSQL, sealed with AES-256-GCM under the keys in
// AUTHKIT_WEB_KEYS (id:BASE64[,id:BASE64…], as the example app reads them).
//
// It listens on 127.0.0.1 (port 0: any free one) and prints {"port": N} as
// its first line on stdout once it accepts connections; the harness gives
// both apps a port, and waits until GET / answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	port := flag.Int("port", 8080, "port to listen on, on 127.0.0.1 (0: any free port)")
	publicURL := flag.String("public-url", "", "the address users reach the app at (default http://127.0.0.1:PORT)")
	databaseURL := flag.String("database-url", "", "PostgreSQL for every store (empty: in memory)")
	authorizeURL := flag.String("authorize-url", "", "the provider's authorization endpoint")
	tokenURL := flag.String("token-url", "", "the provider's token endpoint")
	meURL := flag.String("me-url", "", "the provider's who-am-I endpoint (GET with the access token)")
	provider := flag.String("provider", "bench", "the provider id in the routes")
	clientID := flag.String("client-id", "bench-client", "the OAuth client id")
	clientSecret := flag.String("client-secret", "bench-secret", "the OAuth client secret (client_secret_post)")
	flag.Parse()
	log.SetPrefix("webapp: ")
	log.SetFlags(0)
	if *authorizeURL == "" || *tokenURL == "" || *meURL == "" {
		log.Fatal("give -authorize-url, -token-url and -me-url")
	}

	// Listen first: with -port 0 the public URL needs the port.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	listening := ln.Addr().(*net.TCPAddr).Port
	if *publicURL == "" {
		*publicURL = fmt.Sprintf("http://127.0.0.1:%d", listening)
	}

	var stores store
	if *databaseURL == "" {
		stores = newMemoryStore()
	} else {
		keys, err := parseKeys(os.Getenv("AUTHKIT_WEB_KEYS"))
		if err != nil {
			log.Fatal("AUTHKIT_WEB_KEYS: ", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		stores, err = openPostgres(ctx, *databaseURL, keys)
		cancel()
		if err != nil {
			log.Fatal(err)
		}
	}

	app := newApp(appConfig{
		provider:     *provider,
		publicURL:    *publicURL,
		authorizeURL: *authorizeURL,
		tokenURL:     *tokenURL,
		meURL:        *meURL,
		clientID:     *clientID,
		clientSecret: *clientSecret,
	}, stores)
	fmt.Fprintf(os.Stdout, "{\"port\": %d}\n", listening)
	log.Fatal(http.Serve(ln, app))
}

// tokenserver: the loopback OAuth 2.0 provider both sides of the benchmark
// talk to (Benchmarks/run-benchmarks starts one for the whole run).
//
//	tokenserver [-port N] [-tls-ca FILE]
//
// It listens on 127.0.0.1 (port 0: any free one), prints {"port": N} as its
// first line on stdout so the orchestrator learns where it is, and serves
// until killed. With -tls-ca it also serves the same endpoints over TLS on a
// second port, with a certificate from a throwaway authority whose
// certificate it writes to FILE, and announces {"port": N, "tls_port": M}.
// The endpoints are in handlers.go; /stats in stats.go; TLS in tls.go.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	caPath := flag.String("tls-ca", "", "also serve TLS; write its authority's certificate (PEM) here")
	flag.Parse()
	log.SetPrefix("tokenserver: ")
	log.SetFlags(0)

	// Listen before announcing the port, so a client that reads the line
	// can connect at once.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	var stats handlerStats
	mux := http.NewServeMux()
	mux.Handle("/authorize", stats.timed(authorize))
	mux.Handle("/token", stats.timed(token))
	mux.Handle("/me", stats.timed(me))
	mux.HandleFunc("/stats", stats.serve) // not timed: it is not part of any sign-in

	if *caPath == "" {
		fmt.Fprintf(os.Stdout, "{\"port\": %d}\n", ln.Addr().(*net.TCPAddr).Port)
		log.Fatal(http.Serve(ln, mux))
	}
	config, err := testTLS(*caPath)
	if err != nil {
		log.Fatal(err)
	}
	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	stats.tls = &connectionCounter{}
	fmt.Fprintf(os.Stdout, "{\"port\": %d, \"tls_port\": %d}\n", ln.Addr().(*net.TCPAddr).Port,
		tlsLn.Addr().(*net.TCPAddr).Port)
	go func() { log.Fatal(serveTLS(tlsLn, config, mux, stats.tls)) }()
	log.Fatal(http.Serve(ln, mux))
}

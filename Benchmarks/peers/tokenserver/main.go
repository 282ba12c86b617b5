// tokenserver: the loopback OAuth 2.0 provider both sides of the benchmark
// talk to (Benchmarks/run-benchmarks starts one for the whole run).
//
//	tokenserver [-port N]
//
// It listens on 127.0.0.1 (port 0: any free one), prints {"port": N} as its
// first line on stdout so the orchestrator learns where it is, and serves
// until killed. The endpoints are in handlers.go; /stats in stats.go.
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
	flag.Parse()
	log.SetPrefix("tokenserver: ")
	log.SetFlags(0)

	// Listen before announcing the port, so a client that reads the line
	// can connect at once.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "{\"port\": %d}\n", ln.Addr().(*net.TCPAddr).Port)

	var stats handlerStats
	mux := http.NewServeMux()
	mux.Handle("/authorize", stats.timed(authorize))
	mux.Handle("/token", stats.timed(token))
	mux.HandleFunc("/stats", stats.serve) // not timed: it is not part of any sign-in
	log.Fatal(http.Serve(ln, mux))
}

package main

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// handlerStats adds up the time spent inside the /authorize and /token
// handlers. The orchestrator reads it before and after a sign-in and
// subtracts the difference from the sign-in's wall time, so the number it
// reports is the client's overhead, not this server's.
//
// It covers the handler body only: net/http's reading of the request line
// and headers and its flushing of the buffered answer after the handler
// returns are not in it (they cost both sides the same).
type handlerStats struct {
	requests  atomic.Int64
	handlerNS atomic.Int64
	tls       *connectionCounter // the TLS listener's accepted connections, when it serves TLS
}

// timed wraps a handler so its duration is counted. Atomics rather than a
// mutex: the 16-at-once exchange benchmark hits the server concurrently.
func (s *handlerStats) timed(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h(w, r)
		s.handlerNS.Add(int64(time.Since(start)))
		s.requests.Add(1)
	})
}

// serve answers GET /stats with the running totals.
func (s *handlerStats) serve(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = jsonType
	var connections int64
	if s.tls != nil {
		connections = s.tls.accepted.Load()
	}
	fmt.Fprintf(w, "{\"requests\": %d, \"handler_ns\": %d, \"tls_connections\": %d}", s.requests.Load(),
		s.handlerNS.Load(), connections)
}

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// testTLS makes a throwaway certificate authority and a certificate for
// 127.0.0.1 signed by it (both P-256, valid for a day), and writes the
// authority's certificate to caPath so that each client trusts it alone.
// Nothing is kept: every run has new keys.
func testTLS(caPath string) (*tls.Config, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "AuthKit benchmark test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(caPath, pemCA, 0o644); err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}},
		// HTTP/1.1 with keep-alive for both sides: what is compared is
		// connection reuse, not one side's HTTP/2 against the other's 1.1.
		NextProtos: []string{"http/1.1"},
	}, nil
}

// connectionCounter counts the connections a server accepted, so the
// report can show whether a client reused its connections.
type connectionCounter struct{ accepted atomic.Int64 }

func (c *connectionCounter) track(_ net.Conn, state http.ConnState) {
	if state == http.StateNew {
		c.accepted.Add(1)
	}
}

// serveTLS serves handler over TLS on ln until the process ends. An empty
// TLSNextProto turns HTTP/2 off (net/http would offer it through ALPN).
func serveTLS(ln net.Listener, config *tls.Config, handler http.Handler, counter *connectionCounter) error {
	server := &http.Server{
		Handler:      handler,
		TLSConfig:    config,
		ConnState:    counter.track,
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	return server.Serve(tls.NewListener(ln, config))
}

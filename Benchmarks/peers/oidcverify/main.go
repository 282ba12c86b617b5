// oidcverify: coreos/go-oidc's IDTokenVerifier beside AuthKit's ID token
// verification (Benchmarks/run-benchmarks, rows id-token-rs256 and
// id-token-es256).
//
//	oidcverify make rs256|es256 FILE   writes a signing key's public JWKS and
//	                                   an ID token it signed, as JSON, to FILE
//	oidcverify verify FILE -seconds S  verifies FILE's token in a timed loop
//
// Both sides verify the same token against the same key set, the keys parsed
// once (go-oidc's remote key set caches its parsed keys; here a static set
// does the same without a server), and print {"ops": N, "seconds": S}.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	oidc "github.com/coreos/go-oidc"
	jose "gopkg.in/square/go-jose.v2"
)

// Fixture is what `make` writes and both sides read.
type Fixture struct {
	Algorithm string             `json:"algorithm"`
	Issuer    string             `json:"issuer"`
	ClientID  string             `json:"clientID"`
	Nonce     string             `json:"nonce"`
	Subject   string             `json:"subject"`
	Token     string             `json:"token"`
	JWKS      jose.JSONWebKeySet `json:"jwks"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "oidcverify:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "make":
		return makeFixture(args[1], args[2])
	case len(args) == 4 && args[0] == "verify" && args[2] == "-seconds":
		seconds, err := strconv.ParseFloat(args[3], 64)
		if err != nil {
			return err
		}
		return verify(args[1], seconds)
	}
	return errors.New("usage: oidcverify make rs256|es256 FILE | verify FILE -seconds S")
}

func makeFixture(algorithm, path string) error {
	var key interface{}
	var public interface{}
	var alg jose.SignatureAlgorithm
	switch algorithm {
	case "rs256":
		private, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		key, public, alg = private, &private.PublicKey, jose.RS256
	case "es256":
		private, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		key, public, alg = private, &private.PublicKey, jose.ES256
	default:
		return fmt.Errorf("unknown algorithm %q", algorithm)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: "bench-1"}}, nil)
	if err != nil {
		return err
	}
	now := time.Now()
	fixture := Fixture{Algorithm: string(alg), Issuer: "https://issuer.bench.example", ClientID: "bench-client",
		Nonce: "bench-nonce-0123456789", Subject: "bench-user-248289761001"}
	claims, err := json.Marshal(map[string]interface{}{
		"iss": fixture.Issuer, "sub": fixture.Subject, "aud": fixture.ClientID, "nonce": fixture.Nonce,
		"iat": now.Unix(), "exp": now.Add(365 * 24 * time.Hour).Unix(), "email": "bench@bench.example",
		"name": "Bench User",
	})
	if err != nil {
		return err
	}
	signed, err := signer.Sign(claims)
	if err != nil {
		return err
	}
	if fixture.Token, err = signed.CompactSerialize(); err != nil {
		return err
	}
	fixture.JWKS = jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: public, KeyID: "bench-1", Algorithm: string(alg), Use: "sig"}}}
	out, err := json.Marshal(fixture)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// staticKeys verifies with keys parsed once, as go-oidc's remote key set does
// once its cache is filled.
type staticKeys struct{ keys []jose.JSONWebKey }

func (s staticKeys) VerifySignature(_ context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt)
	if err != nil {
		return nil, err
	}
	for _, key := range s.keys {
		if payload, err := jws.Verify(&key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("no key verified the signature")
}

func verify(path string, seconds float64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fixture Fixture
	if err := json.Unmarshal(data, &fixture); err != nil {
		return err
	}
	verifier := oidc.NewVerifier(fixture.Issuer, staticKeys{fixture.JWKS.Keys},
		&oidc.Config{ClientID: fixture.ClientID, SupportedSigningAlgs: []string{fixture.Algorithm}})
	ctx := context.Background()
	// go-oidc leaves the nonce to its caller (v2's Config has no nonce check).
	op := func() error {
		token, err := verifier.Verify(ctx, fixture.Token)
		if err != nil {
			return err
		}
		if token.Nonce != fixture.Nonce || token.Subject != fixture.Subject {
			return errors.New("the token's nonce or subject is not the fixture's")
		}
		return nil
	}
	if err := op(); err != nil {
		return err
	}
	return measure(seconds, 50, op)
}

package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"golang.org/x/oauth2"
)

// x/oauth2 0.3.0 (Debian 12's) has no GenerateVerifier or
// S256ChallengeOption (they came in 0.13.0), so an app on this version
// writes PKCE (RFC 7636) itself, as here.

// randomToken is 32 bytes from the system CSPRNG, base64url without
// padding (43 characters): used for both state and the code verifier.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// challengeOptions are the authorization request's PKCE parameters for a
// verifier: code_challenge = BASE64URL(SHA256(verifier)), method S256.
func challengeOptions(verifier string) []oauth2.AuthCodeOption {
	sum := sha256.Sum256([]byte(verifier))
	return []oauth2.AuthCodeOption{
		oauth2.SetAuthURLParam("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:])),
		oauth2.SetAuthURLParam("code_challenge_method", "S256"),
	}
}

// verifierOption sends the verifier with the code exchange.
func verifierOption(verifier string) oauth2.AuthCodeOption {
	return oauth2.SetAuthURLParam("code_verifier", verifier)
}

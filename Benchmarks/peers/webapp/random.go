package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"golang.org/x/oauth2"
)

// randomToken is 32 bytes from the system CSPRNG, base64url without
// padding (43 characters), as AuthKit's SecureRandom.token: the state, the
// PKCE verifier, the binding, session and CSRF tokens.
func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // no randomness: nothing here can be made safely
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// digest is SHA-256 in lowercase hex: what the stores key on instead of
// the values browsers hold (WebSignIn.digest).
func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// x/oauth2 0.3.0 (Debian 12's) has no GenerateVerifier or
// S256ChallengeOption (they came in 0.13.0), so an app on this version
// writes PKCE (RFC 7636) itself, as the xoauth2 peer does.

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

// newSignedInUser names the user and where their credential is stored:
// "user-" and 128 bits of SHA-256 over issuer (the provider id when no ID
// token names one) and subject, as AuthKit's SignedInUser.label.
func newSignedInUser(provider, subject, name string) signedInUser {
	sum := sha256.Sum256([]byte(provider + "\x00" + subject))
	return signedInUser{
		ProviderID: provider, Subject: subject, DisplayName: name,
		CredentialLabel: "user-" + hex.EncodeToString(sum[:16]),
	}
}

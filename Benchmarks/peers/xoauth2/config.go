package main

import "golang.org/x/oauth2"

// tokenAnswer is what the provider answers to every token request; the
// tokenserver sends the same bytes.
const tokenAnswer = `{"access_token":"bench-access","token_type":"Bearer","expires_in":3600,"refresh_token":"bench-refresh","scope":"read write"}`

// newConfig is the client as an app would configure x/oauth2 for the
// benchmark's provider. AuthStyleInParams is client_secret_post (the
// descriptor's "clientAuthentication": "post"); setting it also avoids
// x/oauth2's auto-detection, which would try Basic first and retry.
func newConfig(authURL, tokenURL, redirectURL string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     "bench-client",
		ClientSecret: "bench-secret",
		Endpoint: oauth2.Endpoint{
			AuthURL:   authURL,
			TokenURL:  tokenURL,
			AuthStyle: oauth2.AuthStyleInParams,
		},
		RedirectURL: redirectURL,
		Scopes:      []string{"read", "write"},
	}
}

package testenv_test

import (
	"crypto/rand"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// The redirect URI is never requested: Login stops at the redirect to it,
// where a browser would hand the code to the application.
const dexRedirectURI = "http://127.0.0.1:1/auth/callback"

var dexUsers = []testenv.DexUser{
	{Email: "ada@example.com", Username: "ada", Password: "ada-secret", Groups: []string{"queuewatch-admins", "platform"}},
	{Email: "bob@example.com", Username: "bob", Password: "bob-secret", Groups: []string{"queuewatch-viewers"}},
}

// TestDexAuthorizationCode runs the authorization-code flow with PKCE
// S256, state and nonce against a real Dex, as queuewatch's login will:
// golang.org/x/oauth2 builds the request and exchanges the code, go-oidc
// verifies the ID token, and Dex.Login plays the browser.
func TestDexAuthorizationCode(t *testing.T) {
	dex := testenv.StartDex(t, []testenv.DexClient{
		{ID: "queuewatch", Secret: "queuewatch-secret", RedirectURIs: []string{dexRedirectURI}},
		{ID: "queuewatch-spa", RedirectURIs: []string{dexRedirectURI}, Public: true},
	}, dexUsers)
	provider, err := oidc.NewProvider(t.Context(), dex.Issuer)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	for _, tc := range []struct {
		client, secret string
		user           testenv.DexUser
	}{
		{"queuewatch", "queuewatch-secret", dexUsers[0]},
		{"queuewatch", "queuewatch-secret", dexUsers[1]},
		{"queuewatch-spa", "", dexUsers[1]},
	} {
		t.Run(tc.client+"/"+tc.user.Username, func(t *testing.T) {
			conf := &oauth2.Config{
				ClientID: tc.client, ClientSecret: tc.secret, Endpoint: provider.Endpoint(), RedirectURL: dexRedirectURI,
				Scopes: []string{oidc.ScopeOpenID, "email", "profile", "groups"},
			}
			verifier, state, nonce := oauth2.GenerateVerifier(), rand.Text(), rand.Text()
			authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce))

			code := dexCode(t, dex.Login(t, authURL, tc.user.Email, tc.user.Password), state)
			tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("exchange: %v; dex log tail:\n%s", err, dex.LogTail())
			}
			raw, ok := tok.Extra("id_token").(string)
			if !ok {
				t.Fatal("no id_token in the token response")
			}
			idToken, err := provider.Verifier(&oidc.Config{ClientID: tc.client}).Verify(t.Context(), raw)
			if err != nil {
				t.Fatalf("verify the ID token: %v", err)
			}
			if idToken.Nonce != nonce {
				t.Errorf("nonce = %q, want %q", idToken.Nonce, nonce)
			}
			var claims struct {
				Email             string   `json:"email"`
				EmailVerified     bool     `json:"email_verified"`
				Name              string   `json:"name"`
				PreferredUsername string   `json:"preferred_username"`
				Groups            []string `json:"groups"`
			}
			if err := idToken.Claims(&claims); err != nil {
				t.Fatal(err)
			}
			if claims.Email != tc.user.Email || !claims.EmailVerified {
				t.Errorf("email = %q (verified %t), want %q verified", claims.Email, claims.EmailVerified, tc.user.Email)
			}
			if claims.Name != tc.user.Username || claims.PreferredUsername != tc.user.Username {
				t.Errorf("name = %q, preferred_username = %q, want %q for both", claims.Name, claims.PreferredUsername, tc.user.Username)
			}
			if !slices.Equal(claims.Groups, tc.user.Groups) {
				t.Errorf("groups = %q, want %q", claims.Groups, tc.user.Groups)
			}
		})
	}

	conf := &oauth2.Config{
		ClientID: "queuewatch", ClientSecret: "queuewatch-secret", Endpoint: provider.Endpoint(), RedirectURL: dexRedirectURI,
		Scopes: []string{oidc.ScopeOpenID, "email", "groups"},
	}
	t.Run("PKCE verifier checked", func(t *testing.T) {
		verifier, state := oauth2.GenerateVerifier(), rand.Text()
		authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
		code := dexCode(t, dex.Login(t, authURL, dexUsers[0].Email, dexUsers[0].Password), state)
		_, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
		var rerr *oauth2.RetrieveError
		if !errors.As(err, &rerr) || rerr.ErrorCode != "invalid_grant" {
			t.Fatalf("exchange with the wrong PKCE verifier = %v, want invalid_grant", err)
		}
	})
	t.Run("groups only with the groups scope", func(t *testing.T) {
		conf := *conf
		conf.Scopes = []string{oidc.ScopeOpenID, "email"}
		verifier, state := oauth2.GenerateVerifier(), rand.Text()
		authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
		code := dexCode(t, dex.Login(t, authURL, dexUsers[0].Email, dexUsers[0].Password), state)
		tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		idToken, err := provider.Verifier(&oidc.Config{ClientID: conf.ClientID}).Verify(t.Context(), tok.Extra("id_token").(string))
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := idToken.Claims(&claims); err != nil {
			t.Fatal(err)
		}
		if g, ok := claims["groups"]; ok {
			t.Errorf("groups = %v without the groups scope", g)
		}
	})
	for _, tc := range []struct{ name, user, password string }{
		{"wrong password", dexUsers[0].Email, dexUsers[1].Password},
		{"unknown user", "eve@example.com", "eve-secret"},
		{"username instead of email", dexUsers[0].Username, dexUsers[0].Password},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authURL := conf.AuthCodeURL(rand.Text(), oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
			u, err := dex.TryLogin(t.Context(), authURL, tc.user, tc.password)
			if !errors.Is(err, testenv.ErrDexLoginRefused) {
				t.Fatalf("login = %v, %v; want ErrDexLoginRefused", u, err)
			}
		})
	}
}

// dexCode checks that Dex redirected to the redirect URI with state and
// returns the code.
func dexCode(t *testing.T, redirectedTo *url.URL, state string) string {
	t.Helper()
	if !strings.HasPrefix(redirectedTo.String(), dexRedirectURI+"?") {
		t.Fatalf("redirected to %s, want %s", redirectedTo, dexRedirectURI)
	}
	q := redirectedTo.Query()
	if q.Get("error") != "" {
		t.Fatalf("dex answered %s: %s", q.Get("error"), q.Get("error_description"))
	}
	if q.Get("state") != state {
		t.Fatalf("state = %q, want %q", q.Get("state"), state)
	}
	if q.Get("code") == "" {
		t.Fatalf("no code in %s", redirectedTo)
	}
	return q.Get("code")
}

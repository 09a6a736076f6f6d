package web

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/web/auth"
)

// dexSite is a real Dex and queuewatch replicas that sign in through it:
// a and b share one session key, other has its own.
type dexSite struct {
	dex      *testenv.Dex
	a, b     string // base URLs
	other    string
	aAuth    config.Auth
	aService *fakeDLQ
}

var dexUsers = []testenv.DexUser{
	{Email: "ann@example.com", Username: "ann", Password: "ann-pw-1", Groups: []string{"platform", "staff"}},
	{Email: "bob@example.com", Username: "bob", Password: "bob-pw-1", Groups: []string{"team-a"}},
	{Email: "carol@example.com", Username: "carol", Password: "carol-pw-1", Groups: []string{"marketing"}},
}

func newDexSite(t *testing.T) *dexSite {
	t.Helper()
	testenv.Slow(t, "a real Dex")
	listeners := make([]net.Listener, 3)
	var redirects []string
	for i := range listeners {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners[i] = l
		redirects = append(redirects, "http://"+l.Addr().String()+"/auth/callback")
	}
	d := testenv.StartDex(t, []testenv.DexClient{
		{ID: "queuewatch", Secret: "qw-secret", RedirectURIs: redirects},
		{ID: "other-app", Secret: "other-secret", RedirectURIs: []string{"http://127.0.0.1:9/cb"}},
	}, dexUsers)
	site := &dexSite{dex: d, aService: newFakeDLQ()}
	key := strings.Repeat("ab", 32)
	for i, l := range listeners {
		auth := config.Default().Auth
		auth.Mode = config.AuthOIDC
		auth.Session = config.Session{Key: key, TTL: time.Hour}
		if i == 2 {
			auth.Session.Key = hex.EncodeToString([]byte(strings.Repeat("k", 32)))
		}
		auth.OIDC = config.OIDC{
			Issuer: d.Issuer, ClientID: "queuewatch", ClientSecret: "qw-secret",
			Scopes: []string{"openid", "email", "profile", "groups"}, GroupsClaim: "groups",
			GroupRoles: map[string]config.Grant{
				"platform": {Role: config.RoleAdmin},
				// team-a operates one DLQ and sees nothing else.
				"team-a": {Role: config.RoleOperator, Scope: &config.Scope{DLQs: []string{regexp.QuoteMeta(testDLQ)}}},
			},
		}
		cfg := config.Default()
		cfg.Auth = auth
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		auth = cfg.Auth
		svc := newFakeDLQ()
		if i == 0 {
			svc, site.aAuth = site.aService, auth
		}
		ts := httptest.NewUnstartedServer(dlqServerAuth(auth, svc))
		ts.Listener.Close()
		ts.Listener = l
		ts.Start()
		t.Cleanup(ts.Close)
		switch i {
		case 0:
			site.a = ts.URL
		case 1:
			site.b = ts.URL
		default:
			site.other = ts.URL
		}
	}
	return site
}

// browserless is an HTTP client with a cookie jar that does not follow
// redirects, so each step of the login is seen.
func browserless(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func fetch(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// signIn logs user in at replica base through Dex's real login form and
// returns the client holding the session, and the session cookie.
func (s *dexSite) signIn(t *testing.T, base, email, password string) (*http.Client, *http.Cookie) {
	t.Helper()
	c := browserless(t)
	resp, _ := fetch(t, c, base+"/auth/start?next="+url.QueryEscape("/replays?job=x"))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("start = %d", resp.StatusCode)
	}
	authURL := resp.Header.Get("Location")
	if q, _ := url.Parse(authURL); q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("nonce") == "" || q.Query().Get("state") == "" {
		t.Fatalf("authorization request without PKCE S256, nonce or state: %s", authURL)
	}
	back := s.dex.Login(t, authURL, email, password)
	resp, body := fetch(t, c, back.String())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/replays?job=x" {
		t.Fatalf("callback = %d → %q: %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.SessionCookie && ck.Value != "" {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
				t.Errorf("session cookie %+v: want HttpOnly, SameSite=Lax", ck)
			}
			return c, ck
		}
	}
	t.Fatal("no session cookie")
	return nil, nil
}

// TestOIDCWithDex: users sign in through a real Dex (PKCE, state, nonce);
// the session works on a second replica with the same key and not on one
// with another, nor tampered; groups give roles (admin, operator, none);
// the audit's who is the email; sign-out ends the session.
func TestOIDCWithDex(t *testing.T) {
	s := newDexSite(t)

	ann, annCookie := s.signIn(t, s.a, "ann@example.com", "ann-pw-1")
	resp, body := fetch(t, ann, s.a+"/replays")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<span class="user">ann@example.com</span> <span class="muted">(admin)</span>`) || !strings.Contains(body, `action="/auth/logout"`) {
		t.Fatalf("ann's replays page = %d", resp.StatusCode)
	}

	withCookie := func(base string, ck *http.Cookie) (*http.Response, string) {
		c := browserless(t)
		u, _ := url.Parse(base)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value}})
		return fetch(t, c, base+"/api/v1/sources")
	}
	if resp, _ := withCookie(s.b, annCookie); resp.StatusCode != http.StatusOK {
		t.Errorf("replica b refused a session replica a issued: %d", resp.StatusCode)
	}
	if resp, _ := withCookie(s.other, annCookie); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a replica with another key accepted the session: %d", resp.StatusCode)
	}
	tampered := *annCookie
	tampered.Value = tampered.Value[:len(tampered.Value)-2] + "AA"
	if resp, _ := withCookie(s.a, &tampered); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a tampered session was accepted: %d", resp.StatusCode)
	}

	bob, _ := s.signIn(t, s.a, "bob@example.com", "bob-pw-1")
	restore, _ := http.NewRequest(http.MethodPost, s.a+"/api/v1/archive/restore", strings.NewReader(`{"archive_ids":[1],"target":"rabbitmq:main:/:orders"}`))
	restore.Header.Set("Content-Type", "application/json")
	if resp, err := bob.Do(restore); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("operator bob restoring (admin only): %v %v", resp.StatusCode, err)
	}
	dry, _ := http.NewRequest(http.MethodPost, s.a+"/api/v1/dlqs/"+url.PathEscape(testDLQ)+"/replay", strings.NewReader(`{"action":"replay","dry_run":true,"selection":{"all":true}}`))
	dry.Header.Set("Content-Type", "application/json")
	if resp, err := bob.Do(dry); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's dry run: %v %v", resp.StatusCode, err)
	}
	if got := s.aService.started; len(got) != 1 || got[0].Who != "bob@example.com" {
		t.Errorf("the audit's who: %+v", got)
	}
	// bob's group is scoped to one DLQ: the other is nowhere for him.
	if resp, body := fetch(t, bob, s.a+"/api/v1/dlqs"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"orders.dlq"`) || strings.Contains(body, "script") {
		t.Errorf("bob's DLQ list = %d %s", resp.StatusCode, body)
	}
	if resp, body := fetch(t, bob, s.a+"/api/v1/dlqs/"+url.PathEscape(hostileDLQ)+"/messages"); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "script") {
		t.Errorf("bob reading the other DLQ = %d %s", resp.StatusCode, body)
	}

	carol := browserless(t)
	resp, _ = fetch(t, carol, s.a+"/auth/start")
	resp, body = fetch(t, carol, s.dex.Login(t, resp.Header.Get("Location"), "carol@example.com", "carol-pw-1").String())
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "carol@example.com is signed in at the provider but has no role here") {
		t.Errorf("carol (no mapped group) = %d", resp.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodPost, s.a+"/auth/logout", nil)
	resp, err := ann.Do(req)
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %v %v", resp, err)
	}
	if resp, _ := fetch(t, ann, s.a+"/replays"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/auth/login") {
		t.Errorf("after sign-out the page = %d → %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestOIDCRefusesForeignTokens: an ID token Dex issued to another client
// (wrong audience) and one whose nonce is another login's are refused.
func TestOIDCRefusesForeignTokens(t *testing.T) {
	s := newDexSite(t)
	ctx := context.Background()
	p, err := oidc.NewProvider(ctx, s.dex.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	token := func(client, secret, redirect, nonce string) string {
		cfg := &oauth2.Config{ClientID: client, ClientSecret: secret, Endpoint: p.Endpoint(), RedirectURL: redirect, Scopes: []string{"openid", "email", "groups"}}
		verifier := oauth2.GenerateVerifier()
		back := s.dex.Login(t, cfg.AuthCodeURL("st", oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), "ann@example.com", "ann-pw-1")
		tok, err := cfg.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		return tok.Extra("id_token").(string)
	}
	o := auth.NewOIDCAuth(s.aAuth)
	ours := token("queuewatch", "qw-secret", s.a+"/auth/callback", "nonce-1")
	if sess, err := o.Verify(ctx, p, ours, "nonce-1"); err != nil || sess.Name != "ann@example.com" || len(sess.Groups) != 1 || sess.Groups[0] != "platform" {
		t.Fatalf("our own token: %+v, %v", sess, err)
	}
	if _, err := o.Verify(ctx, p, ours, "nonce-2"); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("another login's nonce: %v", err)
	}
	foreign := token("other-app", "other-secret", "http://127.0.0.1:9/cb", "nonce-1")
	if _, err := o.Verify(ctx, p, foreign, "nonce-1"); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("a token for another client: %v", err)
	}
	o.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	if _, err := o.Verify(ctx, p, ours, "nonce-1"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token: %v", err)
	}
}

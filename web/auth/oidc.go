package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/components"
)

// Login through an OpenID Connect provider (auth mode oidc): the
// authorization code flow with PKCE (S256), state and nonce; the ID token
// verified by go-oidc (signature, issuer, audience, expiry) and its nonce
// by us; the user's groups mapped to a role; and a sealed session cookie
// (session.go) that any replica with the same key accepts.

const (
	// SessionCookie holds the sealed session.
	SessionCookie = "qw_session"
	loginCookie   = "qw_login"
	// loginTTL bounds the round trip through the provider's login page.
	loginTTL = 10 * time.Minute
	// discoveryTimeout bounds one fetch of the provider's discovery
	// document and keys; a provider that is down fails the login, not
	// the server's start.
	discoveryTimeout = 10 * time.Second
)

// MethodOIDC is Principal.Method for a session from an OIDC login.
const MethodOIDC = "oidc"

// OIDC signs people in at an OpenID Connect provider and keeps their
// session in a sealed cookie.
type OIDC struct {
	cfg  config.Auth
	seal *sealer // nil when the key is unusable: every login fails
	Now  func() time.Time

	mu         sync.Mutex
	provider   *oidc.Provider
	endSession string
}

// NewOIDCAuth is the OIDC sign-in of cfg (mode oidc).
func NewOIDCAuth(cfg config.Auth) *OIDC {
	o := &OIDC{cfg: cfg, Now: time.Now}
	o.seal, _ = newSealer(cfg.Session.KeyBytes()) // config validated the key's length
	return o
}

// discover returns the provider, reading its discovery document on first
// use and again after a failure.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.OIDC.Issuer)
	if err != nil {
		return nil, fmt.Errorf("the identity provider %s does not answer: %w", o.cfg.OIDC.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&extra) // optional: logout then only clears the cookie
	o.provider, o.endSession = p, extra.EndSession
	return p, nil
}

// oauth2Config is the client for one request: the redirect URL is the
// configured one, or this server's /auth/callback as the request reached it.
func (o *OIDC) oauth2Config(r *http.Request, p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: o.cfg.OIDC.ClientID, ClientSecret: o.cfg.OIDC.ClientSecret,
		Endpoint: p.Endpoint(), RedirectURL: o.redirectURL(r), Scopes: o.cfg.OIDC.Scopes,
	}
}

func (o *OIDC) redirectURL(r *http.Request) string {
	if o.cfg.OIDC.RedirectURL != "" {
		return o.cfg.OIDC.RedirectURL
	}
	return origin(r) + "/auth/callback"
}

// origin is the scheme and host the browser used. X-Forwarded-Proto is
// trusted for the scheme alone: a forged one only makes a redirect URL
// the provider refuses, as it must be registered there.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Principal reads the session cookie of a request.
func (o *OIDC) Principal(r *http.Request) (Principal, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || o.seal == nil {
		return Principal{}, ErrUnauthenticated
	}
	var s Session
	if o.seal.open(purposeSession, c.Value, &s) != nil || s.expired(o.Now()) {
		return Principal{}, ErrUnauthenticated
	}
	p := NewPrincipal(s.Name, MethodOIDC, o.grants(s.Groups))
	if RoleRank(p.Role) == 0 {
		return Principal{}, echo.NewHTTPError(http.StatusForbidden, s.Name+" has no role here: no group of theirs is in auth.oidc.group_roles")
	}
	return p, nil
}

// grants are what the groups (and default_role) give.
func (o *OIDC) grants(groups []string) []config.Grant {
	return groupGrants(groups, o.cfg.OIDC.GroupRoles, o.cfg.OIDC.DefaultRole)
}

// LoginPage is the sign-in page, with problem when the last try failed.
func (o *OIDC) LoginPage(c echo.Context, assetVersion string, status int, problem string) error {
	host := o.cfg.OIDC.Issuer
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Host
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return components.Login(components.LoginData{
		Provider: host, Next: safeNext(c.QueryParam("next")), Problem: problem,
		SignedOut: c.QueryParam("bye") != "", AssetVersion: assetVersion,
	}).Render(c.Request().Context(), c.Response())
}

// Start sends the browser to the provider, with a fresh state, nonce and
// PKCE verifier kept in the sealed login cookie.
func (o *OIDC) Start(c echo.Context) error {
	r := c.Request()
	p, err := o.discover(r.Context())
	if err != nil {
		return echo.NewHTTPError(http.StatusBadGateway, err.Error())
	}
	if o.seal == nil {
		return echo.NewHTTPError(http.StatusInternalServerError, "auth.session.key is not usable")
	}
	ls := loginState{
		State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Next: safeNext(c.QueryParam("next")), Expires: o.Now().Add(loginTTL).Unix(),
	}
	sealed, err := o.seal.seal(purposeLogin, ls)
	if err != nil {
		return err
	}
	o.setCookie(c, loginCookie, sealed, "/auth/", loginTTL)
	return c.Redirect(http.StatusFound, o.oauth2Config(r, p).AuthCodeURL(ls.State, oidc.Nonce(ls.Nonce), oauth2.S256ChallengeOption(ls.Verifier)))
}

// Callback finishes a login: the state must be the login cookie's, the
// code is exchanged with the PKCE verifier, the ID token verified and its
// nonce compared; then the session cookie is set.
func (o *OIDC) Callback(c echo.Context, assetVersion string) error {
	r := c.Request()
	fail := func(status int, why string) error {
		clearCookie(c, loginCookie, "/auth/")
		return o.LoginPage(c, assetVersion, status, why)
	}
	var ls loginState
	lc, err := r.Cookie(loginCookie)
	if err != nil || o.seal == nil || o.seal.open(purposeLogin, lc.Value, &ls) != nil || o.Now().Unix() >= ls.Expires {
		return fail(http.StatusBadRequest, "The login expired or was started elsewhere: sign in again.")
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(ls.State)) != 1 {
		return fail(http.StatusBadRequest, "The provider's answer does not belong to this login (state mismatch): sign in again.")
	}
	if e := q.Get("error"); e != "" {
		return fail(http.StatusForbidden, "The identity provider refused the login: "+e+" "+q.Get("error_description"))
	}
	p, err := o.discover(r.Context())
	if err != nil {
		return fail(http.StatusBadGateway, err.Error())
	}
	sess, err := o.exchange(r, p, q.Get("code"), ls)
	if err != nil {
		return fail(http.StatusForbidden, "Login refused: "+err.Error())
	}
	if RoleRank(NewPrincipal("", MethodOIDC, o.grants(sess.Groups)).Role) == 0 {
		return fail(http.StatusForbidden, sess.Name+" is signed in at the provider but has no role here: none of their groups is in auth.oidc.group_roles.")
	}
	sealed, err := o.seal.seal(purposeSession, sess)
	if err != nil {
		return err
	}
	clearCookie(c, loginCookie, "/auth/")
	o.setCookie(c, SessionCookie, sealed, "/", time.Until(time.Unix(sess.Expires, 0)))
	return c.Redirect(http.StatusSeeOther, ls.Next)
}

// exchange trades the code for tokens and turns the verified ID token into
// a session.
func (o *OIDC) exchange(r *http.Request, p *oidc.Provider, code string, ls loginState) (Session, error) {
	ctx, cancel := context.WithTimeout(r.Context(), discoveryTimeout)
	defer cancel()
	tok, err := o.oauth2Config(r, p).Exchange(ctx, code, oauth2.VerifierOption(ls.Verifier))
	if err != nil {
		return Session{}, fmt.Errorf("code exchange: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Session{}, errors.New("the provider sent no ID token")
	}
	return o.Verify(ctx, p, raw, ls.Nonce)
}

// Verify checks a raw ID token (signature, issuer, audience, expiry, and
// the login's nonce) and turns it into a session.
func (o *OIDC) Verify(ctx context.Context, p *oidc.Provider, raw, nonce string) (Session, error) {
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.OIDC.ClientID, Now: o.Now}).Verify(ctx, raw)
	if err != nil {
		return Session{}, fmt.Errorf("ID token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return Session{}, errors.New("ID token: nonce does not match this login")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return Session{}, fmt.Errorf("ID token claims: %w", err)
	}
	exp := o.Now().Add(o.cfg.Session.TTL)
	return Session{
		Name: identity(claims, idt.Subject), Subject: idt.Subject,
		Groups: o.mappedGroups(claims[o.cfg.OIDC.GroupsClaim]), Expires: exp.Unix(),
	}, nil
}

// identity is the readable name the audit records: the email (unless the
// provider says it is not verified: anyone could claim it), else the
// preferred username, else the name, else the opaque subject.
func identity(claims map[string]any, subject string) string {
	keys := []string{"email", "preferred_username", "name"}
	if v, ok := claims["email_verified"].(bool); ok && !v {
		keys = keys[1:]
	}
	for _, k := range keys {
		if v, ok := claims[k].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	return subject
}

// mappedGroups keeps the user's groups that group_roles names: the cookie
// stays small whatever the directory holds.
func (o *OIDC) mappedGroups(claim any) []string {
	var groups []string
	switch v := claim.(type) {
	case string:
		groups = []string{v}
	case []any:
		for _, g := range v {
			if s, ok := g.(string); ok {
				groups = append(groups, s)
			}
		}
	}
	out := []string{}
	for _, g := range groups {
		if _, ok := o.cfg.OIDC.GroupRoles[g]; ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// Logout clears the session and, when the provider has an
// end_session_endpoint, ends the provider's session too.
func (o *OIDC) Logout(c echo.Context) error {
	clearCookie(c, SessionCookie, "/")
	back := origin(c.Request()) + "/auth/login?bye=1"
	o.mu.Lock()
	end := o.endSession
	o.mu.Unlock()
	if end == "" {
		return c.Redirect(http.StatusSeeOther, "/auth/login?bye=1")
	}
	u, err := url.Parse(end)
	if err != nil {
		return c.Redirect(http.StatusSeeOther, "/auth/login?bye=1")
	}
	q := u.Query()
	q.Set("client_id", o.cfg.OIDC.ClientID)
	q.Set("post_logout_redirect_uri", back)
	u.RawQuery = q.Encode()
	return c.Redirect(http.StatusSeeOther, u.String())
}

// safeNext keeps a post-login destination on this server: a path, never
// another host (//evil.example, /\evil.example, a scheme), and no
// control character or backslash anywhere, since browsers drop tabs and
// newlines from URLs and read \ as / (/<TAB>/evil.example is //evil.example).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return "/"
	}
	return next
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return base64.RawURLEncoding.EncodeToString(b)
}

func (o *OIDC) setCookie(c echo.Context, name, value, path string, ttl time.Duration) {
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: int(ttl.Seconds()), HttpOnly: true,
		Secure: o.secure(c.Request()), SameSite: http.SameSiteLaxMode,
	})
}

// secure says whether cookies need https: the browser used it, or the
// configured redirect URL says it does (a TLS proxy that tells nothing).
func (o *OIDC) secure(r *http.Request) bool {
	return strings.HasPrefix(origin(r), "https:") || strings.HasPrefix(o.cfg.OIDC.RedirectURL, "https:")
}

func clearCookie(c echo.Context, name, path string) {
	c.SetCookie(&http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

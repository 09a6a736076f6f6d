package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
)

// Principal is who made a request and what they may do.
type Principal struct {
	Name string
	// Role is the highest role of Grants, for display and coarse checks;
	// what may be done to an object is may's answer.
	Role   config.Role
	Grants []config.Grant
	// Method is how the request was authenticated: "none", "basic",
	// "token" or "proxy".
	Method string
}

// Authentication methods recorded in Principal.Method.
const (
	MethodNone  = "none"
	MethodBasic = "basic"
	methodToken = "token"
	methodProxy = "proxy"
)

type principalKey struct{}

// PrincipalFrom returns the authenticated principal of a request context.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

func withPrincipal(c echo.Context, p Principal) {
	r := c.Request()
	c.SetRequest(r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
}

// RoleRank orders roles: a role may do everything a lower rank may.
func RoleRank(r config.Role) int {
	switch r {
	case config.RoleViewer:
		return 1
	case config.RoleOperator:
		return 2
	case config.RoleAdmin:
		return 3
	}
	return 0
}

// ErrUnauthenticated answers requests without valid credentials; the
// challenge header depends on the mode.
var ErrUnauthenticated = echo.NewHTTPError(http.StatusUnauthorized, "authentication required")

// Authenticator checks credentials for auth.mode and puts the Principal in
// the request context.
type Authenticator struct {
	cfg config.Auth
	// verified caches successful bcrypt checks by a hash of user and
	// password: bcrypt costs ~50 ms by design, and a browser sends the
	// credentials with every request and every 5 s refresh.
	mu       sync.Mutex
	verified map[[32]byte]config.User
	dummy    []byte
	// Oidc is set in mode oidc.
	Oidc *OIDC
}

// maxVerified bounds the bcrypt cache; it is reset when full, which only
// costs a re-check.
const maxVerified = 1024

// NewAuthenticator authenticates requests as cfg says.
func NewAuthenticator(cfg config.Auth) *Authenticator {
	a := &Authenticator{cfg: cfg, verified: map[[32]byte]config.User{}}
	if cfg.Mode == config.AuthOIDC {
		a.Oidc = NewOIDCAuth(cfg)
	}
	if cfg.Mode == config.AuthBasic {
		// A hash to compare against for unknown users, so a login attempt
		// takes as long whether or not the user exists.
		a.dummy, _ = bcrypt.GenerateFromPassword([]byte("queuewatch-dummy"), bcrypt.DefaultCost)
	}
	return a
}

// Middleware authenticates every request to a route that public does not
// report as declared public.
func (a *Authenticator) Middleware(public func(echo.Context) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if public(c) {
				return next(c)
			}
			p, err := a.authenticate(c)
			if err != nil {
				if errors.Is(err, ErrUnauthenticated) {
					if r := c.Request(); a.Oidc != nil && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
						// A page: to the sign-in page, and back here after.
						return c.Redirect(http.StatusSeeOther, "/auth/login?next="+url.QueryEscape(r.URL.RequestURI()))
					}
					a.challenge(c)
				}
				return err
			}
			withPrincipal(c, p)
			return next(c)
		}
	}
}

func (a *Authenticator) authenticate(c echo.Context) (Principal, error) {
	r := c.Request()
	// Bearer tokens work in every mode that has tokens, so API clients
	// can sit next to browser users logged in by basic auth or a proxy.
	if tok, ok := bearer(r); ok && a.cfg.Mode != config.AuthNone {
		return a.token(tok)
	}
	switch a.cfg.Mode {
	case config.AuthNone, "":
		return NewPrincipal("anonymous", MethodNone, []config.Grant{{Role: config.RoleAdmin}}), nil
	case config.AuthBasic:
		return a.basic(r)
	case config.AuthProxy:
		return a.proxy(r)
	case config.AuthOIDC:
		return a.Oidc.Principal(r)
	}
	return Principal{}, ErrUnauthenticated
}

func (a *Authenticator) challenge(c echo.Context) {
	switch a.cfg.Mode {
	case config.AuthBasic:
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Basic realm="queuewatch", charset="UTF-8"`)
	case config.AuthTokens:
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="queuewatch"`)
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get(echo.HeaderAuthorization)
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// token finds the configured token whose hash matches. Every configured
// hash is compared in constant time, so timing reveals nothing about which
// prefix matched.
func (a *Authenticator) token(tok string) (Principal, error) {
	sum := sha256.Sum256([]byte(tok))
	got := []byte(hex.EncodeToString(sum[:]))
	found := -1
	for i, t := range a.cfg.Tokens {
		want := []byte(strings.ToLower(strings.TrimPrefix(t.TokenHash, "sha256:")))
		if subtle.ConstantTimeCompare(got, want) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, ErrUnauthenticated
	}
	t := a.cfg.Tokens[found]
	return NewPrincipal(t.Name, methodToken, config.AccountGrants(t.Role, t.Grants)), nil
}

func (a *Authenticator) basic(r *http.Request) (Principal, error) {
	name, pass, ok := r.BasicAuth()
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	key := sha256.Sum256([]byte(name + "\x00" + pass))
	a.mu.Lock()
	u, hit := a.verified[key]
	a.mu.Unlock()
	if hit {
		return NewPrincipal(u.Name, MethodBasic, config.AccountGrants(u.Role, u.Grants)), nil
	}
	var user *config.User
	for i := range a.cfg.Users {
		if a.cfg.Users[i].Name == name {
			user = &a.cfg.Users[i]
		}
	}
	if user == nil {
		_ = bcrypt.CompareHashAndPassword(a.dummy, []byte(pass))
		return Principal{}, ErrUnauthenticated
	}
	if bcrypt.CompareHashAndPassword([]byte(user.PasswordHash), []byte(pass)) != nil {
		return Principal{}, ErrUnauthenticated
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		clear(a.verified)
	}
	a.verified[key] = *user
	a.mu.Unlock()
	return NewPrincipal(user.Name, MethodBasic, config.AccountGrants(user.Role, user.Grants)), nil
}

// proxy trusts the identity headers only from a configured proxy address.
// The peer is the TCP peer (RemoteAddr), never X-Forwarded-For, which the
// client controls.
func (a *Authenticator) proxy(r *http.Request) (Principal, error) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !a.cfg.Proxy.Trusts(peer.Addr()) {
		return Principal{}, echo.NewHTTPError(http.StatusForbidden, "requests must come through the authenticating proxy")
	}
	user := strings.TrimSpace(r.Header.Get(a.cfg.Proxy.UserHeader))
	if user == "" {
		return Principal{}, ErrUnauthenticated
	}
	var groups []string
	if a.cfg.Proxy.GroupsHeader != "" {
		for g := range strings.SplitSeq(r.Header.Get(a.cfg.Proxy.GroupsHeader), ",") {
			groups = append(groups, strings.TrimSpace(g))
		}
	}
	p := NewPrincipal(user, methodProxy, groupGrants(groups, a.cfg.Proxy.GroupRoles, a.cfg.Proxy.DefaultRole))
	if RoleRank(p.Role) == 0 {
		return Principal{}, echo.NewHTTPError(http.StatusForbidden, "no role for this user")
	}
	return p, nil
}

// CheckListenAuth refuses auth mode none on an address other people can
// reach: with no login, anyone who can connect may replay and delete dead
// letters. insecureNoAuth (the --insecure-no-auth flag) overrides it.
func CheckListenAuth(listen string, auth config.Auth, insecureNoAuth bool) error {
	if (auth.Mode != config.AuthNone && auth.Mode != "") || insecureNoAuth {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", listen, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("auth.mode is none but listen address %s is not a loopback address: anyone who can reach it could replay and delete messages; configure auth (basic, tokens or proxy) or pass --insecure-no-auth", listen)
}

// CrossOrigin refuses state-changing requests that a browser sends from
// another origin (CSRF): a page elsewhere can make the browser send the
// basic-auth credentials or proxy session it holds for queuewatch, but
// the browser also marks the request with Sec-Fetch-Site, or, in browsers
// from before 2023, with an Origin that does not match the Host.
// Requests with neither header come from scripts and CLIs, which carry no
// ambient credentials; they are let through to authentication.
func CrossOrigin() echo.MiddlewareFunc {
	cop := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := cop.Check(c.Request()); err != nil {
				return echo.NewHTTPError(http.StatusForbidden, "cross-origin request refused: "+err.Error())
			}
			return next(c)
		}
	}
}

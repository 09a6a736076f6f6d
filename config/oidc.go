package config

import (
	"encoding/hex"
	"net/url"
	"slices"
	"time"
)

// Session configures the signed, encrypted session cookie of auth mode
// oidc: any replica with the same key accepts a session another issued.
type Session struct {
	// Key is 32 bytes as 64 hex digits (keep it in ${ENV}); the same on
	// every replica.
	Key string `yaml:"key"`
	// TTL is how long a login lasts; 8h by default.
	TTL time.Duration `yaml:"ttl"`
}

// DefaultSessionTTL is auth.session.ttl's default.
const DefaultSessionTTL = 8 * time.Hour

// KeyBytes returns the decoded session key (valid after validation).
func (s Session) KeyBytes() []byte {
	b, _ := hex.DecodeString(s.Key)
	return b
}

// OIDC configures login through an OpenID Connect provider (auth mode
// oidc): authorization code with PKCE, the ID token's groups mapped to roles.
type OIDC struct {
	Issuer       string `yaml:"issuer"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"` // empty for a public client
	// Scopes requested; openid is always among them. Default: openid,
	// email, profile, groups.
	Scopes []string `yaml:"scopes"`
	// GroupsClaim is the ID token claim holding the user's groups.
	GroupsClaim string `yaml:"groups_claim"`
	// RedirectURL is where the provider sends the browser back
	// (…/auth/callback); empty derives it from the request.
	RedirectURL string `yaml:"redirect_url"`
	// DefaultRole is every logged-in user's role when no group gives
	// one; empty means none: such a user is refused.
	DefaultRole Role `yaml:"default_role"`
	// GroupRoles maps a group to a grant: a role, or a role in a scope.
	// A user's groups' grants add up.
	GroupRoles map[string]Grant `yaml:"group_roles"`
}

func (a *Auth) validateOIDC(p *problems) {
	if a.Session.TTL == 0 {
		a.Session.TTL = DefaultSessionTTL
	}
	active := a.Mode == AuthOIDC
	o := &a.OIDC
	if len(o.Scopes) == 0 {
		o.Scopes = []string{"openid", "email", "profile", "groups"}
	} else if !slices.Contains(o.Scopes, "openid") {
		o.Scopes = append([]string{"openid"}, o.Scopes...)
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	if !active {
		return
	}
	if b, err := hex.DecodeString(a.Session.Key); err != nil || len(b) != 32 {
		p.add("auth.session.key", "must be 32 bytes as 64 hex digits (openssl rand -hex 32), the same on every replica")
	}
	if a.Session.TTL < time.Minute {
		p.add("auth.session.ttl", "must be at least 1m, got %s", a.Session.TTL)
	}
	if o.Issuer == "" {
		p.add("auth.oidc.issuer", "required when mode is oidc (the provider's issuer URL, such as https://idp.example.com/dex)")
	} else {
		checkURL(p, "auth.oidc.issuer", o.Issuer, "http", "https")
	}
	if o.ClientID == "" {
		p.add("auth.oidc.client_id", "required when mode is oidc")
	}
	if o.RedirectURL != "" {
		if u, err := url.Parse(o.RedirectURL); err != nil || !u.IsAbs() || u.Path != "/auth/callback" {
			p.add("auth.oidc.redirect_url", "must be this queuewatch's absolute URL ending in /auth/callback, got %s", quoteScalar(o.RedirectURL))
		}
	}
	validateGroupGrants(p, "auth.oidc.group_roles", o.GroupRoles)
	if o.DefaultRole != "" {
		checkRole(p, "auth.oidc.default_role", o.DefaultRole)
	}
	if len(o.GroupRoles) == 0 && o.DefaultRole == "" {
		p.add("auth.oidc.group_roles", "map at least one group to a role, or set default_role: otherwise no one can log in")
	}
}

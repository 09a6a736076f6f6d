package config

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

func (r Role) valid() bool {
	return r == RoleViewer || r == RoleOperator || r == RoleAdmin
}

func checkRole(p *problems, path string, r Role) {
	switch {
	case r == "":
		p.add(path, "required (viewer, operator or admin)")
	case !r.valid():
		p.add(path, "must be viewer, operator or admin, got %s", quoteScalar(string(r)))
	}
}

func (a *Auth) validate(p *problems) {
	switch a.Mode {
	case AuthNone, AuthBasic, AuthTokens, AuthProxy, AuthOIDC:
	default:
		p.add("auth.mode", "must be none, basic, tokens, proxy or oidc, got %s", quoteScalar(a.Mode))
	}
	a.validateOIDC(p)
	a.validateUsers(p)
	a.validateTokens(p)
	checkRole(p, "auth.unmask_role", a.UnmaskRole)
	a.Proxy.validate(p, a.Mode == AuthProxy)
	switch {
	case a.Mode == AuthBasic && len(a.Users) == 0:
		p.add("auth.users", "at least one user is required when mode is basic")
	case a.Mode == AuthTokens && len(a.Tokens) == 0:
		p.add("auth.tokens", "at least one token is required when mode is tokens")
	case a.Mode == AuthNone && (len(a.Users) > 0 || len(a.Tokens) > 0 || len(a.Proxy.TrustedCIDRs) > 0):
		// Credentials with mode none mean the operator believes the UI is
		// protected while it is open to anyone.
		p.add("auth.mode", "is none, so the configured users, tokens or proxy are ignored and the UI is open: set mode to basic, tokens, proxy or oidc")
	}
}

func (a *Auth) validateUsers(p *problems) {
	seen := map[string]int{}
	for i, u := range a.Users {
		path := fmt.Sprintf("auth.users[%d]", i)
		checkAccountName(p, seen, path, u.Name, "auth.users", i)
		switch {
		case u.PasswordHash == "":
			p.add(path+".password_hash", "required (a bcrypt hash, such as from htpasswd -nbB)")
		case !isBcrypt(u.PasswordHash):
			p.add(path+".password_hash", "not a bcrypt hash (want $2a$, $2b$ or $2y$ followed by cost and salt)")
		}
		checkAccountGrants(p, path, u.Role, u.Grants)
	}
}

func isBcrypt(h string) bool {
	if !strings.HasPrefix(h, "$2a$") && !strings.HasPrefix(h, "$2b$") && !strings.HasPrefix(h, "$2y$") {
		return false
	}
	_, err := bcrypt.Cost([]byte(h))
	return err == nil
}

func (a *Auth) validateTokens(p *problems) {
	seen := map[string]int{}
	for i, t := range a.Tokens {
		path := fmt.Sprintf("auth.tokens[%d]", i)
		checkAccountName(p, seen, path, t.Name, "auth.tokens", i)
		hexPart, ok := strings.CutPrefix(t.TokenHash, "sha256:")
		if b, err := hex.DecodeString(hexPart); !ok || err != nil || len(b) != 32 {
			p.add(path+".token_hash", "must be sha256:<64 hex digits> (the SHA-256 of the token)")
		}
		checkAccountGrants(p, path, t.Role, t.Grants)
	}
}

func checkAccountName(p *problems, seen map[string]int, path, name, section string, i int) {
	if name == "" {
		p.add(path+".name", "required")
		return
	}
	if first, dup := seen[name]; dup {
		p.add(path+".name", "duplicate name %s (also %s[%d])", quoteScalar(name), section, first)
		return
	}
	seen[name] = i
}

func (x *Proxy) validate(p *problems, active bool) {
	x.trusted = nil
	for i, s := range x.TrustedCIDRs {
		pfx, err := parseCIDR(s)
		if err != nil {
			p.add(fmt.Sprintf("auth.proxy.trusted_cidrs[%d]", i), "invalid CIDR %s (want an address or prefix such as 10.0.0.0/8)", quoteScalar(s))
			continue
		}
		x.trusted = append(x.trusted, pfx)
	}
	if active && len(x.TrustedCIDRs) == 0 {
		p.add("auth.proxy.trusted_cidrs", "at least one CIDR is required when mode is proxy")
	}
	if active && x.UserHeader == "" {
		p.add("auth.proxy.user_header", "required when mode is proxy")
	}
	validateGroupGrants(p, "auth.proxy.group_roles", x.GroupRoles)
	checkRole(p, "auth.proxy.default_role", x.DefaultRole)
}

// parseCIDR parses a prefix, or a single address as a host prefix.
func parseCIDR(s string) (netip.Prefix, error) {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		return pfx.Masked(), nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

// Trusts reports whether addr, the peer address of a request, is one of the
// trusted proxies.
func (x Proxy) Trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	prefixes := x.trusted
	if len(prefixes) != len(x.TrustedCIDRs) {
		prefixes = nil
		for _, s := range x.TrustedCIDRs {
			if pfx, err := parseCIDR(s); err == nil {
				prefixes = append(prefixes, pfx)
			}
		}
	}
	for _, pfx := range prefixes {
		if pfx.Contains(addr) {
			return true
		}
	}
	return false
}

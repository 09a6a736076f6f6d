package config

import (
	"net/netip"
	"testing"
)

func TestAuthModes(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		err  string
	}{
		{name: "tokens", yaml: `auth:
  mode: tokens
  tokens:
    - {name: ci, token_hash: "sha256:7c2fe931351fca72b643d87bbc38a66c115d9cd83b0840c3c26fbda5525432b4", role: operator}
`},
		{name: "duplicate token name", yaml: `auth:
  mode: tokens
  tokens:
    - {name: ci, token_hash: "sha256:7c2fe931351fca72b643d87bbc38a66c115d9cd83b0840c3c26fbda5525432b4", role: operator}
    - {name: ci, token_hash: "sha256:7c2fe931351fca72b643d87bbc38a66c115d9cd83b0840c3c26fbda5525432b4", role: viewer}
`, err: `q.yml:5: auth.tokens[1].name: duplicate name "ci" (also auth.tokens[0])`},
		{name: "tokens without tokens", yaml: "auth: {mode: tokens}", err: "q.yml:1: auth.tokens: at least one token is required when mode is tokens"},
		{name: "proxy", yaml: `auth:
  mode: proxy
  proxy:
    trusted_cidrs: [10.0.0.0/8, 192.168.1.7, "fd00::/8"]
    group_roles: {sre: admin, dev: viewer}
    default_role: viewer
`},
		{name: "proxy bad group role", yaml: `auth:
  mode: proxy
  proxy:
    trusted_cidrs: [10.0.0.0/8]
    group_roles:
      sre: admin
      dev: superuser
`, err: `q.yml:7: auth.proxy.group_roles.dev: must be viewer, operator or admin, got "superuser"`},
		{name: "user without role", yaml: `auth:
  mode: basic
  users:
    - name: alice
      password_hash: $2b$10$EHbHmQ8LDZJC/hOvwSz4LOlFpbDkJy0h7K4xEq24dY5uB7lOcT3.e
`, err: "q.yml:4: auth.users[0].role: required (viewer, operator or admin), or grants"},
		{name: "truncated bcrypt hash", yaml: `auth:
  mode: basic
  users:
    - {name: alice, password_hash: $2y$10$short, role: admin}
`, err: "q.yml:4: auth.users[0].password_hash: not a bcrypt hash (want $2a$, $2b$ or $2y$ followed by cost and salt)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "q.yml")
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.err != "" && (err == nil || err.Error() != tt.err):
				t.Fatalf("err = %v, want %s", err, tt.err)
			}
		})
	}
}

func TestProxyTrusts(t *testing.T) {
	p := Default().Auth.Proxy
	p.TrustedCIDRs = []string{"10.0.0.0/8", "192.168.1.7", "fd00::/8"}
	tests := map[string]bool{
		"10.1.2.3": true, "::ffff:10.1.2.3": true, "192.168.1.7": true, "192.168.1.8": false,
		"fd00::1": true, "127.0.0.1": false,
	}
	check := func(p Proxy, label string) {
		for addr, want := range tests {
			if got := p.Trusts(netip.MustParseAddr(addr)); got != want {
				t.Errorf("%s: Trusts(%s) = %v, want %v", label, addr, got, want)
			}
		}
	}
	check(p, "unvalidated")
	var probs problems
	p.validate(&probs, true)
	if len(probs) > 0 {
		t.Fatal(probs[0])
	}
	check(p, "validated")
}

func TestManagementCredentials(t *testing.T) {
	tests := []struct {
		r          RabbitMQ
		user, pass string
	}{
		{RabbitMQ{URL: "amqp://guest:guest@localhost:5672/"}, "guest", "guest"},
		{RabbitMQ{URL: "amqp://app:s%40cret@localhost/", ManagementUsername: "mon"}, "mon", "s@cret"},
		{RabbitMQ{URL: "amqp://localhost/", ManagementUsername: "mon", ManagementPassword: "pw"}, "mon", "pw"},
		{RabbitMQ{URL: "amqp://localhost/"}, "", ""},
	}
	for _, tt := range tests {
		user, pass := tt.r.ManagementCredentials()
		if user != tt.user || pass != tt.pass {
			t.Errorf("ManagementCredentials(%s) = %q, %q; want %q, %q", tt.r.URL, user, pass, tt.user, tt.pass)
		}
	}
}

// TestGrants: a group's grant is a plain role or {role, scope}; a user's
// or token's role and grants add up; a scope covers by cluster, DLQ ID or
// reader ID, whole names only.
func TestGrants(t *testing.T) {
	cfg, err := Parse([]byte(`
auth:
  mode: proxy
  proxy:
    trusted_cidrs: [10.0.0.0/8]
    group_roles:
      platform: admin
      team-a: {role: operator, scope: {dlqs: ['kafka:prod::team-a\..*'], readers: ['kafka:prod::team-a-.*'], clusters: [dev-.*]}}
  tokens:
    - name: ci
      token_hash: sha256:0000000000000000000000000000000000000000000000000000000000000000
      role: viewer
      grants: [{role: operator, scope: {clusters: [staging]}}]
`), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Auth.Proxy.GroupRoles["platform"]; g.Role != RoleAdmin || g.Scope != nil {
		t.Errorf("platform: %+v", g)
	}
	a := cfg.Auth.Proxy.GroupRoles["team-a"]
	if a.Role != RoleOperator || a.Scope == nil {
		t.Fatalf("team-a: %+v", a)
	}
	for _, tt := range []struct {
		cluster, dlq, reader string
		want                 bool
	}{
		{"prod", "kafka:prod::team-a.orders.DLT", "", true},
		{"prod", "kafka:prod::team-b.orders.DLT", "", false},
		{"prod", "", "kafka:prod::team-a-billing", true},
		{"prod", "", "kafka:prod::team-a-billing-x", true},
		{"prod", "", "kafka:prod::xteam-a-billing", false},
		{"dev-eu", "kafka:dev-eu::anything.DLT", "", true},
		{"dev-eu", "", "", true},
		{"prod", "", "", false},
	} {
		if got := a.Scope.Covers(tt.cluster, tt.dlq, tt.reader); got != tt.want {
			t.Errorf("Covers(%q, %q, %q) = %v", tt.cluster, tt.dlq, tt.reader, got)
		}
	}
	tok := cfg.Auth.Tokens[0]
	if gs := AccountGrants(tok.Role, tok.Grants); len(gs) != 2 || gs[0].Role != RoleViewer || gs[0].Scope != nil || gs[1].Scope == nil {
		t.Errorf("token grants %+v", gs)
	}
}

package config

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// Grant is what an account or group may do: a role everywhere (written as
// the plain role name, "operator"), or a role within a scope
// ({role: operator, scope: {dlqs: ['kafka:prod::team-a\..*']}}).
// Several grants add up.
type Grant struct {
	Role  Role   `yaml:"role"`
	Scope *Scope `yaml:"scope"`
}

// Scope limits a grant to clusters, DLQs and readers, by regexes matching
// whole names. Each list grants what it matches: clusters every object in
// the matching clusters, dlqs the matching DLQ IDs
// (broker:cluster:vhost:name), readers the matching reader IDs
// (broker:cluster:scope:name: kafka:prod::billing,
// nats:main:ORDERS:shipper, rabbitmq:main:/:orders).
type Scope struct {
	Clusters []string `yaml:"clusters"`
	DLQs     []string `yaml:"dlqs"`
	Readers  []string `yaml:"readers"`

	clusters, dlqs, readers []*regexp.Regexp
}

// Covers reports whether the scope covers an object of cluster: a DLQ
// (dlq set), a reader (reader set), or the cluster itself (both empty:
// its health, its account-wide facts).
func (s *Scope) Covers(cluster, dlq, reader string) bool {
	match := func(res []*regexp.Regexp, v string) bool {
		return v != "" && slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(v) })
	}
	return match(s.clusters, cluster) || match(s.dlqs, dlq) || match(s.readers, reader)
}

func (g *Grant) validate(p *problems, path string) {
	if g.Scope == nil {
		checkRole(p, path, g.Role) // usually the plain role name
		return
	}
	checkRole(p, path+".role", g.Role)
	s := g.Scope
	s.clusters = compileList(p, path+".scope.clusters", s.Clusters)
	s.dlqs = compileList(p, path+".scope.dlqs", s.DLQs)
	s.readers = compileList(p, path+".scope.readers", s.Readers)
	if len(s.Clusters)+len(s.DLQs)+len(s.Readers) == 0 {
		p.add(path+".scope", "grants nothing: list clusters, dlqs or readers (or leave scope out for everything)")
	}
}

// validateGroupGrants checks a group→grant map in a stable order.
func validateGroupGrants(p *problems, path string, m map[string]Grant) {
	groups := make([]string, 0, len(m))
	for g := range m {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		gr := m[g]
		gr.validate(p, path+"."+g)
		m[g] = gr
	}
}

// AccountGrants is what a user or token may do: its role (everywhere),
// then its grants.
func AccountGrants(role Role, grants []Grant) []Grant {
	out := slices.Clone(grants)
	if role != "" {
		out = append([]Grant{{Role: role}}, out...)
	}
	return out
}

// checkAccountGrants requires role or grants, and checks the grants.
func checkAccountGrants(p *problems, path string, role Role, grants []Grant) {
	if role != "" {
		checkRole(p, path+".role", role)
	} else if len(grants) == 0 {
		p.add(path+".role", "required (viewer, operator or admin), or grants")
	}
	for i := range grants {
		grants[i].validate(p, fmt.Sprintf("%s.grants[%d]", path, i))
	}
}

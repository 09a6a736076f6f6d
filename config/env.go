package config

import (
	"fmt"
	"regexp"
	"strings"
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces ${VAR} and ${VAR:-default} in s using lookup and turns $$
// into $. Any other $ is kept, so bcrypt hashes and regexes ending in $ need
// no escaping. The default applies when VAR is unset or empty, as in the
// shell.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ (write $$ for a literal $)")
			}
			val, err := lookupVar(s[i+2:i+2+end], lookup)
			if err != nil {
				return "", err
			}
			b.WriteString(val)
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), nil
}

// lookupVar resolves the inside of ${...}: "VAR" or "VAR:-default".
func lookupVar(expr string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDefault := strings.Cut(expr, ":-")
	if !envNameRE.MatchString(name) {
		return "", fmt.Errorf("invalid environment variable name %q in ${%s}", name, expr)
	}
	val, ok := lookup(name)
	if hasDefault && val == "" {
		return def, nil
	}
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set (use ${%s:-default} for a default)", name, name)
	}
	return val, nil
}

package config

import (
	"fmt"

	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
)

// MaskRule hides values of the dead letters of the DLQs it covers, on
// every surface (pages, API, downloads, archive, CLI), for everyone
// without the unmask permission (see Auth.UnmaskRole).
type MaskRule struct {
	// DLQs are regexes on DLQ IDs (kafka:prod::orders.DLT); none means
	// every DLQ.
	DLQs []string `yaml:"dlqs"`
	// Fields are paths into the JSON or schema-decoded body: $.card.number,
	// $..email, $.items[*].iban.
	Fields []string `yaml:"fields"`
	// ShowOnly masks every value of the body that none of these paths
	// covers: an allow-list.
	ShowOnly []string `yaml:"show_only"`
	// Headers are header (and AMQP property) names.
	Headers []string `yaml:"headers"`
	// Mode is redact (the default), hash or last4.
	Mode string `yaml:"mode"`

	compiled masking.Rule
}

// Masker returns the masker of the rules; key keys the hash mode.
func (c *Config) Masker() *masking.Masker {
	rules := make([]masking.Rule, len(c.Masking))
	for i := range c.Masking {
		rules[i] = c.Masking[i].compiled
	}
	return masking.New(rules, []byte(c.MaskingKey))
}

func (r *MaskRule) validate(p *problems, path string) {
	if r.Mode == "" {
		r.Mode = string(masking.Redact)
	}
	switch masking.Mode(r.Mode) {
	case masking.Redact, masking.Hash, masking.Last4:
	default:
		p.add(path+".mode", "must be redact, hash or last4, got %s", quoteScalar(r.Mode))
	}
	if len(r.Fields) == 0 && len(r.ShowOnly) == 0 && len(r.Headers) == 0 {
		p.add(path, "masks nothing: set fields, show_only or headers")
	}
	r.compiled = masking.Rule{
		DLQs: compileList(p, path+".dlqs", r.DLQs), Headers: r.Headers, Mode: masking.Mode(r.Mode),
		Fields: parsePaths(p, path+".fields", r.Fields), ShowOnly: parsePaths(p, path+".show_only", r.ShowOnly),
	}
	for i, h := range r.Headers {
		if h == "" {
			p.add(fmt.Sprintf("%s.headers[%d]", path, i), "empty header name")
		}
	}
}

func parsePaths(p *problems, path string, raw []string) []jsonpath.Path {
	var out []jsonpath.Path
	for i, s := range raw {
		mp, err := jsonpath.Parse(s)
		if err != nil {
			p.add(fmt.Sprintf("%s[%d]", path, i), "%v", err)
			continue
		}
		out = append(out, mp)
	}
	return out
}

// validateMasking checks the rules and the hash key.
func (c *Config) validateMasking(p *problems) {
	for i := range c.Masking {
		c.Masking[i].validate(p, fmt.Sprintf("masking[%d]", i))
	}
	hashes := false
	for _, r := range c.Masking {
		hashes = hashes || r.Mode == string(masking.Hash)
	}
	if hashes && len(c.MaskingKey) < 16 {
		// Without a secret key, a hash of a card number is reversed by
		// hashing every card number.
		p.add("masking_key", "at least 16 characters are required when a rule's mode is hash (keep it in ${ENV}; the same on every replica)")
	}
}

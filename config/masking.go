package config

import (
	"fmt"
	"regexp"

	"github.com/queuewatch/queuewatch/jsonpath"
)

// Masking modes (see MaskRule.Mode).
const (
	MaskRedact = "redact"
	MaskHash   = "hash"
	MaskLast4  = "last4"
)

// MaskRule hides values of the dead letters of the DLQs it covers, on
// every surface (pages, API, downloads, archive), for everyone without
// the unmask permission (see Auth.UnmaskRole).
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

	dlqs             []*regexp.Regexp
	fields, showOnly []jsonpath.Path
}

// Compiled returns the rule's DLQ regexes and parsed paths; valid once
// the config was validated (Parse, Load).
func (r *MaskRule) Compiled() (dlqs []*regexp.Regexp, fields, showOnly []jsonpath.Path) {
	return r.dlqs, r.fields, r.showOnly
}

func (r *MaskRule) validate(p *problems, path string) {
	if r.Mode == "" {
		r.Mode = MaskRedact
	}
	switch r.Mode {
	case MaskRedact, MaskHash, MaskLast4:
	default:
		p.add(path+".mode", "must be redact, hash or last4, got %s", quoteScalar(r.Mode))
	}
	if len(r.Fields) == 0 && len(r.ShowOnly) == 0 && len(r.Headers) == 0 {
		p.add(path, "masks nothing: set fields, show_only or headers")
	}
	r.dlqs = compileList(p, path+".dlqs", r.DLQs)
	r.fields = parsePaths(p, path+".fields", r.Fields)
	r.showOnly = parsePaths(p, path+".show_only", r.ShowOnly)
	for i, h := range r.Headers {
		if h == "" {
			p.add(fmt.Sprintf("%s.headers[%d]", path, i), "empty header name")
		}
	}
}

func parsePaths(p *problems, path string, raw []string) []jsonpath.Path {
	var out []jsonpath.Path
	for i, s := range raw {
		jp, err := jsonpath.Parse(s)
		if err != nil {
			p.add(fmt.Sprintf("%s[%d]", path, i), "%v", err)
			continue
		}
		out = append(out, jp)
	}
	return out
}

// validateMasking checks the rules and the hash key.
func (c *Config) validateMasking(p *problems) {
	hashes := false
	for i := range c.Masking {
		c.Masking[i].validate(p, fmt.Sprintf("masking[%d]", i))
		hashes = hashes || c.Masking[i].Mode == MaskHash
	}
	if hashes && len(c.MaskingKey) < 16 {
		// Without a secret key, a hash of a card number is reversed by
		// hashing every card number.
		p.add("masking_key", "at least 16 characters are required when a rule's mode is hash (keep it in ${ENV}; the same on every replica)")
	}
}

package masking

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/queue"
)

// Mode is how a masked value is shown.
type Mode string

// Modes, from the least to the most revealing.
const (
	// Redact shows [masked].
	Redact Mode = "redact"
	// Hash shows a keyed hash, so equal values group together without
	// being readable (and without a dictionary attack: the key is secret).
	Hash Mode = "hash"
	// Last4 keeps the last four characters behind a fixed ****.
	Last4 Mode = "last4"
)

// Redacted is what a redacted value reads.
const Redacted = "[masked]"

// strictness orders modes: where two rules mask one value, the one that
// reveals less wins.
func (m Mode) strictness() int {
	switch m {
	case Last4:
		return 1
	case Hash:
		return 2
	}
	return 3
}

// Rule is one masking rule: which DLQs it covers and what it masks.
type Rule struct {
	// DLQs are anchored regexes on DLQ IDs; none means every DLQ.
	DLQs []*regexp.Regexp
	// Fields are paths into the JSON or decoded body (and key).
	Fields []jsonpath.Path
	// ShowOnly, when set, masks every value of the body (and of a JSON or
	// decoded key) that none of these paths covers.
	ShowOnly []jsonpath.Path
	// Headers are header (and AMQP property) names, compared without case.
	Headers []string
	Mode    Mode
}

// Masker holds the rules and the key of the hash mode.
type Masker struct {
	rules []Rule
	key   []byte
}

// New returns a masker; key keys the hash mode (the same key on every
// replica makes the same hashes).
func New(rules []Rule, key []byte) *Masker {
	return &Masker{rules: rules, key: key}
}

// For returns the policy of one DLQ, or nil when no rule covers it.
func (m *Masker) For(dlqID string) *Policy {
	if m == nil {
		return nil
	}
	var p *Policy
	for i := range m.rules {
		r := &m.rules[i]
		if len(r.DLQs) > 0 && !slices.ContainsFunc(r.DLQs, func(re *regexp.Regexp) bool { return re.MatchString(dlqID) }) {
			continue
		}
		if p == nil {
			p = &Policy{key: m.key, headers: map[string]Mode{}}
		}
		p.rules = append(p.rules, r)
		for _, h := range r.Headers {
			h = strings.ToLower(h)
			if old, ok := p.headers[h]; !ok || r.Mode.strictness() > old.strictness() {
				p.headers[h] = r.Mode
			}
		}
	}
	return p
}

// Policy is the masking of one DLQ.
type Policy struct {
	rules   []*Rule
	headers map[string]Mode
	key     []byte
}

// MasksHeader reports whether the named header or property is masked:
// a selection by its value would be a way to test guesses.
func (p *Policy) MasksHeader(name string) bool {
	if p == nil {
		return false
	}
	_, ok := p.headers[strings.ToLower(name)]
	return ok
}

// MasksSelection reports whether selecting messages whose header name has
// exactly value would test a masked value: the header is masked, or value
// is the text of a table or array (AMQP nests tables: {"wrap":
// {"x-card": …}}) holding a masked header's value at any depth. A header
// is matched by its whole text, masked parts included, so a dry run's
// count would confirm a guessed card number inside a table. A table too
// deep to walk counts as masked, as the message shows it masked whole; a
// value that is no JSON table or array cannot be a table's text.
func (p *Policy) MasksSelection(name, value string) bool {
	if p == nil || len(p.headers) == 0 {
		return false
	}
	if p.MasksHeader(name) {
		return true
	}
	if t := strings.TrimSpace(value); t == "" || (t[0] != '{' && t[0] != '[') || !json.Valid([]byte(t)) {
		return false
	}
	_, n := p.maskNested(queue.Header{Key: name, Kind: "table", Value: []byte(value)})
	return n > 0
}

// MasksAnyHeader reports whether any header or property is masked.
func (p *Policy) MasksAnyHeader() bool { return p != nil && len(p.headers) > 0 }

// MasksBody reports whether any rule looks into bodies (and JSON keys).
func (p *Policy) MasksBody() bool { return p != nil && p.masksBody() }

// MasksValueAt reports whether reading the body's value at `at` whole
// reads a masked value: a field path names it, a place above it or one
// inside it, or show_only leaves it uncovered.
func (p *Policy) MasksValueAt(at []jsonpath.Step) bool {
	if p == nil {
		return false
	}
	for _, r := range p.rules {
		if slices.ContainsFunc(r.Fields, func(f jsonpath.Path) bool { return f.Overlaps(at) }) {
			return true
		}
		if len(r.ShowOnly) > 0 && !slices.ContainsFunc(r.ShowOnly, func(f jsonpath.Path) bool { return f.Covers(at) }) {
			return true
		}
	}
	return false
}

// masksBody reports whether any rule looks into bodies.
func (p *Policy) masksBody() bool {
	return slices.ContainsFunc(p.rules, func(r *Rule) bool { return len(r.Fields) > 0 || len(r.ShowOnly) > 0 })
}

// Message returns m as it may be shown: a copy whose masked values are
// replaced. m is not changed (its slices may be a cache's). A body the
// rules look into that is neither JSON nor decoded is masked whole:
// where the fields are cannot be known.
func (p *Policy) Message(m queue.Message) queue.Message {
	if p == nil {
		return m
	}
	p.maskHeaders(&m)
	p.maskBody(&m)
	p.maskKey(&m)
	return m
}

func (p *Policy) maskHeaders(m *queue.Message) {
	hs, masked := make([]queue.Header, len(m.Headers)), false
	for i, h := range m.Headers {
		hs[i] = h
		if mode, ok := p.headers[strings.ToLower(h.Key)]; ok {
			hs[i].Value = []byte(p.maskText(mode, string(h.Value)))
			m.Masked++
			masked = true
		} else if v, n := p.maskNested(h); n > 0 {
			hs[i].Value = v
			m.Masked += n
			masked = true
		}
	}
	m.Headers = hs
	if len(m.Properties) > 0 {
		props := maps.Clone(m.Properties)
		for k, v := range props {
			if mode, ok := p.headers[strings.ToLower(k)]; ok {
				props[k] = p.maskText(mode, v)
				m.Masked++
			}
		}
		m.Properties = props
	}
	if masked {
		maskDeath(&m.Death, queue.DecodeDeath(hs, m.Death.Deaths))
	}
}

// maskNested masks, inside a header whose value is a table or an array
// (AMQP nests tables: {"wrap": {"x-card": …}}), every value under a key
// that names a masked header, at any depth; n is how many.
func (p *Policy) maskNested(h queue.Header) ([]byte, int) {
	if h.Kind != "table" && h.Kind != "array" {
		return nil, 0
	}
	v, err := jsonpath.Decode(h.Value)
	if err != nil {
		// A table too deep to walk: nothing of it is shown.
		return []byte(`"` + Redacted + `"`), 1
	}
	n := 0
	v = jsonpath.Rewrite(v, func(at []jsonpath.Step, scalar any) any {
		for _, st := range at {
			if mode, ok := p.headers[strings.ToLower(st.Key)]; ok && st.IsKey && scalar != nil {
				n++
				return p.maskScalar(mode, scalar)
			}
		}
		return scalar
	})
	if n == 0 {
		return nil, 0
	}
	var buf bytes.Buffer
	jsonpath.Encode(&buf, v)
	return buf.Bytes(), n
}

// maskDeath takes, from the failure facts decoded again from the masked
// headers, every text that a masked header changed: the failure panel
// and the API's failure fields read them out of headers (an exception
// message, an original routing key or topic, a consumer group).
func maskDeath(d *queue.DeathInfo, re queue.DeathInfo) {
	for _, f := range [][2]*string{
		{&d.ExceptionMessage, &re.ExceptionMessage},
		{&d.StackTrace, &re.StackTrace},
		{&d.ExceptionClass, &re.ExceptionClass},
		{&d.CauseClass, &re.CauseClass},
		{&d.WrapperClass, &re.WrapperClass},
		{&d.OriginalExchange, &re.OriginalExchange},
		{&d.OriginalRoutingKey, &re.OriginalRoutingKey},
		{&d.OriginalTopic, &re.OriginalTopic},
		{&d.ConsumerGroup, &re.ConsumerGroup},
		{&d.FirstQueue, &re.FirstQueue},
		{&d.FirstReason, &re.FirstReason},
		{&d.FirstExchange, &re.FirstExchange},
		{&d.Connector, &re.Connector},
		{&d.Stage, &re.Stage},
		{&d.ExecutingClass, &re.ExecutingClass},
	} {
		if *f[1] != "" && *f[1] != *f[0] {
			*f[0] = *f[1]
		}
	}
}

func (p *Policy) maskBody(m *queue.Message) {
	if !p.masksBody() || len(m.Body) == 0 {
		return
	}
	if d := m.Decoded; d != nil && d.Value != nil {
		v, n := p.maskJSON(d.Value)
		if n > 0 {
			c := *d
			c.Value = v
			m.Decoded, m.Body, m.Masked = &c, v, m.Masked+n
		}
		return
	}
	if json.Valid(m.Body) {
		if v, n := p.maskJSON(m.Body); n > 0 {
			m.Body, m.Masked = v, m.Masked+n
		}
		return
	}
	m.Body, m.Masked = p.whole(m.Body), m.Masked+1
	if m.Decoded != nil {
		c := *m.Decoded
		m.Decoded = &c // keeps its error; there is no value to mask
	}
}

// maskKey masks a JSON or decoded key by the paths; a plain key (an
// order id, a partition key) is masked only where show_only hides all.
func (p *Policy) maskKey(m *queue.Message) {
	if !p.masksBody() || len(m.Key) == 0 {
		return
	}
	if d := m.KeyDecoded; d != nil && d.Value != nil {
		if v, n := p.maskJSON(d.Value); n > 0 {
			c := *d
			c.Value = v
			m.KeyDecoded, m.Key, m.Masked = &c, v, m.Masked+n
		}
		return
	}
	if json.Valid(m.Key) {
		if v, n := p.maskJSON(m.Key); n > 0 {
			m.Key, m.Masked = v, m.Masked+n
		}
		return
	}
	if slices.ContainsFunc(p.rules, func(r *Rule) bool { return len(r.ShowOnly) > 0 }) {
		m.Key, m.Masked = p.whole(m.Key), m.Masked+1
	}
}

// whole is what a body or key masked whole reads.
func (p *Policy) whole(b []byte) []byte {
	var mode Mode
	found := false
	for _, r := range p.rules {
		if len(r.Fields) > 0 || len(r.ShowOnly) > 0 {
			mode, found = strictest(mode, r.Mode, found), true
		}
	}
	if mode == Hash {
		return []byte(p.maskText(Hash, string(b)))
	}
	return fmt.Appendf(nil, "[masked: %d bytes that are not JSON]", len(b))
}

// maskJSON masks a JSON document; it returns the masked JSON and how
// many values it masked (0: b as it was).
func (p *Policy) maskJSON(b []byte) (json.RawMessage, int) {
	v, err := jsonpath.Decode(b)
	if err != nil {
		// Valid JSON too deep to walk: nothing of it is shown.
		return json.RawMessage(`"` + Redacted + `"`), 1
	}
	n := 0
	v = jsonpath.Rewrite(v, func(at []jsonpath.Step, scalar any) any {
		mode, ok := p.modeAt(at)
		if !ok || scalar == nil { // absent stays absent: a null reveals nothing
			return scalar
		}
		n++
		return p.maskScalar(mode, scalar)
	})
	if n == 0 {
		return b, 0
	}
	var buf bytes.Buffer
	jsonpath.Encode(&buf, v)
	return buf.Bytes(), n
}

// maskScalar masks a string, number or bool.
func (p *Policy) maskScalar(mode Mode, v any) any {
	switch t := v.(type) {
	case string:
		return p.maskText(mode, t)
	case json.Number:
		return p.maskText(mode, t.String())
	case bool:
		return p.maskText(mode, fmt.Sprint(t))
	}
	return Redacted
}

// modeAt returns how the value at a location is masked, if it is.
func (p *Policy) modeAt(at []jsonpath.Step) (Mode, bool) {
	var mode Mode
	found := false
	for _, r := range p.rules {
		hit := slices.ContainsFunc(r.Fields, func(f jsonpath.Path) bool { return f.Covers(at) })
		if len(r.ShowOnly) > 0 && !slices.ContainsFunc(r.ShowOnly, func(f jsonpath.Path) bool { return f.Covers(at) }) {
			hit = true
		}
		if hit {
			mode, found = strictest(mode, r.Mode, found), true
		}
	}
	return mode, found
}

func strictest(a, b Mode, haveA bool) Mode {
	if haveA && a.strictness() >= b.strictness() {
		return a
	}
	return b
}

// maskText masks one value shown as text.
func (p *Policy) maskText(mode Mode, s string) string {
	switch mode {
	case Hash:
		h := hmac.New(sha256.New, p.key)
		h.Write([]byte(s))
		return "hash:" + hex.EncodeToString(h.Sum(nil)[:8])
	case Last4:
		if n := utf8.RuneCountInString(s); n > 4 {
			r := []rune(s)
			return "****" + string(r[n-4:])
		}
	}
	return Redacted
}

package config

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Filter selects names (consumer groups, queues) by anchored regexes. The
// zero Filter matches everything.
type Filter struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`

	include, exclude []*regexp.Regexp
}

// Match reports whether name is included: Include is empty or one of its
// patterns matches, and no Exclude pattern matches. Patterns are anchored, so
// "orders" matches only "orders"; write "orders-.*" for a prefix.
func (f Filter) Match(name string) bool {
	inc := compiled(f.Include, f.include)
	if len(f.Include) > 0 && !matchAny(inc, name) {
		return false
	}
	return !matchAny(compiled(f.Exclude, f.exclude), name)
}

// compile compiles f's patterns, reporting bad ones under path.
func (f *Filter) compile(p *problems, path string) {
	f.include = compileList(p, path+".include", f.Include)
	f.exclude = compileList(p, path+".exclude", f.Exclude)
}

// IsDLQTopic reports whether topic matches one of the cluster's dlq_topics.
func (k Kafka) IsDLQTopic(topic string) bool {
	return matchAny(compiled(k.DLQTopics, k.dlqTopics), topic)
}

// IsDLQQueue reports whether queue is named by one of the cluster's
// dlq_queues: equal to a name, or matching a "re:" regex.
func (r RabbitMQ) IsDLQQueue(queue string) bool {
	pre := r.dlqQueues
	if len(pre) != len(r.DLQQueues) {
		pre = make([]*regexp.Regexp, 0, len(r.DLQQueues))
		for _, e := range r.DLQQueues {
			if re, err := compileDLQQueue(e); err == nil {
				pre = append(pre, re)
			}
		}
	}
	return matchAny(pre, queue)
}

// RegexPrefix marks a dlq_queues entry as a regex rather than a name.
const RegexPrefix = "re:"

// DLQQueueNames returns the dlq_queues entries that name one queue: those
// without the "re:" prefix, less the legacy patterns. They are the queues
// that must exist, and the only ones measurable without a management API.
func (r RabbitMQ) DLQQueueNames() []string {
	var names []string
	for _, e := range r.DLQQueues {
		if !strings.HasPrefix(e, RegexPrefix) && !isLegacyPattern(e) && e != "" {
			names = append(names, e)
		}
	}
	return names
}

// LegacyDLQPatterns returns the dlq_queues entries still read as regexes
// without the "re:" prefix, as every entry was before the prefix existed:
// those with regex syntax other than '.', such as `.*\.failed`. A dot
// alone is common in queue names, so "payments.failed" is a name. Callers
// warn about these so that configs move to "re:".
func (r RabbitMQ) LegacyDLQPatterns() []string {
	var pats []string
	for _, e := range r.DLQQueues {
		if !strings.HasPrefix(e, RegexPrefix) && isLegacyPattern(e) {
			pats = append(pats, e)
		}
	}
	return pats
}

// isLegacyPattern reports whether an unprefixed entry has regex syntax
// other than '.'.
func isLegacyPattern(e string) bool {
	noDots := strings.ReplaceAll(e, ".", "")
	return regexp.QuoteMeta(noDots) != noDots
}

// compileDLQQueue compiles one dlq_queues entry to match whole names: a
// "re:" regex, a legacy pattern, or a name taken literally.
func compileDLQQueue(e string) (*regexp.Regexp, error) {
	switch {
	case strings.HasPrefix(e, RegexPrefix):
		pat := strings.TrimPrefix(e, RegexPrefix)
		if pat == "" {
			return nil, errors.New(`empty regex after "re:"`)
		}
		return compileAnchored(pat)
	case isLegacyPattern(e):
		return compileAnchored(e)
	}
	return regexp.Compile("^" + regexp.QuoteMeta(e) + "$")
}

// compileDLQQueues compiles the dlq_queues entries, reporting each bad one
// at path[i].
func compileDLQQueues(p *problems, path string, entries []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(entries))
	for i, e := range entries {
		at := fmt.Sprintf("%s[%d]", path, i)
		if e == "" {
			p.add(at, "empty queue name")
			continue
		}
		re, err := compileDLQQueue(e)
		if err != nil {
			p.add(at, "%v", err)
			continue
		}
		out = append(out, re)
	}
	return out
}

// IsDLQName reports whether name looks like a DLQ by dlq.name_pattern, which
// is unanchored. An empty pattern matches nothing.
func (d DLQ) IsDLQName(name string) bool {
	if d.NamePattern == "" {
		return false
	}
	re := d.namePattern
	if re == nil {
		var err error
		if re, err = regexp.Compile(d.NamePattern); err != nil {
			return false
		}
	}
	return re.MatchString(name)
}

// compiled returns pre, the patterns compiled by Validate, or compiles pats
// now for a Config that was never validated. A bad pattern then matches
// nothing, so a filter fails closed.
func compiled(pats []string, pre []*regexp.Regexp) []*regexp.Regexp {
	if len(pre) == len(pats) {
		return pre
	}
	out := make([]*regexp.Regexp, 0, len(pats))
	for _, p := range pats {
		if re, err := compileAnchored(p); err == nil {
			out = append(out, re)
		}
	}
	return out
}

func matchAny(res []*regexp.Regexp, name string) bool {
	for _, re := range res {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// compileList compiles anchored patterns, reporting each bad one at
// path[i].
func compileList(p *problems, path string, pats []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(pats))
	for i, pat := range pats {
		at := fmt.Sprintf("%s[%d]", path, i)
		if pat == "" {
			p.add(at, "empty pattern")
			continue
		}
		re, err := compileAnchored(pat)
		if err != nil {
			p.add(at, "%v", err)
			continue
		}
		out = append(out, re)
	}
	return out
}

// compileAnchored compiles pat to match whole names only.
func compileAnchored(pat string) (*regexp.Regexp, error) {
	// Compiling pat alone first keeps the error about what the user wrote,
	// not about the anchoring wrapper.
	if _, err := compileRegex(pat); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + pat + ")$")
}

// compileRegex compiles pat with an error message that fits on one line and
// names the pattern.
func compileRegex(pat string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pat)
	if err == nil {
		return re, nil
	}
	var se *syntax.Error
	if errors.As(err, &se) {
		return nil, fmt.Errorf("invalid regex %s: %s", quoteScalar(pat), se.Code)
	}
	return nil, fmt.Errorf("invalid regex %s: %w", quoteScalar(pat), err)
}

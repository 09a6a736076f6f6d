package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a parsed JSONPath subset: $ followed by .name, ['name'],
// [n], .* or [*] (any child), and ..name (name at any depth below).
type Path struct {
	text string
	segs []seg
}

type segKind int

const (
	child      segKind = iota // .name or ['name']
	index                     // [n]
	anyChild                  // .* or [*]
	descendant                // ..name
)

type seg struct {
	kind segKind
	name string
	n    int
}

func (p Path) String() string { return p.text }

// Parse parses a path such as $.card.number, $..email or
// $.items[*].iban.
func Parse(s string) (Path, error) {
	rest, ok := strings.CutPrefix(s, "$")
	if !ok {
		return Path{}, errors.New("a path starts with $ (such as $.card.number or $..email)")
	}
	p := Path{text: s}
	for rest != "" {
		sg, next, err := parseSeg(rest)
		if err != nil {
			return Path{}, fmt.Errorf("%s: %w", s, err)
		}
		p.segs, rest = append(p.segs, sg), next
	}
	if len(p.segs) == 0 {
		return Path{}, errors.New("$ alone is the whole body: name a field (such as $.card.number) or use show_only")
	}
	return p, nil
}

func parseSeg(s string) (seg, string, error) {
	switch {
	case strings.HasPrefix(s, ".."):
		name, rest := ident(s[2:])
		if name == "" {
			return seg{}, "", errors.New("\"..\" needs a field name after it")
		}
		return seg{kind: descendant, name: name}, rest, nil
	case strings.HasPrefix(s, ".*"):
		return seg{kind: anyChild}, s[2:], nil
	case strings.HasPrefix(s, "."):
		name, rest := ident(s[1:])
		if name == "" {
			return seg{}, "", errors.New("\".\" needs a field name after it")
		}
		return seg{kind: child, name: name}, rest, nil
	case strings.HasPrefix(s, "[*]"):
		return seg{kind: anyChild}, s[3:], nil
	case strings.HasPrefix(s, "['"), strings.HasPrefix(s, "[\""):
		q := s[1:2]
		end := strings.Index(s[2:], q+"]")
		if end < 0 {
			return seg{}, "", fmt.Errorf("unterminated [%s...%s]", q, q)
		}
		return seg{kind: child, name: s[2 : 2+end]}, s[2+end+2:], nil
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return seg{}, "", errors.New("unterminated [")
		}
		n, err := strconv.Atoi(s[1:end])
		if err != nil || n < 0 {
			return seg{}, "", fmt.Errorf("[%s]: want an index, * or a quoted name", s[1:end])
		}
		return seg{kind: index, n: n}, s[end+1:], nil
	}
	return seg{}, "", fmt.Errorf("unexpected %q", s)
}

// ident reads a field name up to the next '.' or '['.
func ident(s string) (name, rest string) {
	i := strings.IndexAny(s, ".[")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// Step is one step of a location in a document: an object key (IsKey)
// or an array index.
type Step struct {
	Key   string
	Index int
	IsKey bool
}

// Covers reports whether p matches at or a prefix of it: a path naming
// an object covers every value inside it.
func (p Path) Covers(at []Step) bool { return match(p.segs, at, true) }

// Matches reports whether p matches exactly at.
func (p Path) Matches(at []Step) bool { return match(p.segs, at, false) }

// Overlaps reports whether p matches at, a location above it or one
// inside it: whether reading the value at `at` whole reads something p
// names.
func (p Path) Overlaps(at []Step) bool { return overlap(p.segs, at) }

func overlap(segs []seg, at []Step) bool {
	if len(segs) == 0 || len(at) == 0 {
		return true
	}
	s, a := segs[0], at[0]
	switch s.kind {
	case child:
		return a.IsKey && a.Key == s.name && overlap(segs[1:], at[1:])
	case index:
		return !a.IsKey && a.Index == s.n && overlap(segs[1:], at[1:])
	case anyChild:
		return overlap(segs[1:], at[1:])
	default: // descendant
		return (a.IsKey && a.Key == s.name && overlap(segs[1:], at[1:])) || overlap(segs, at[1:])
	}
}

func match(segs []seg, at []Step, prefix bool) bool {
	if len(segs) == 0 {
		return prefix || len(at) == 0
	}
	if len(at) == 0 {
		return false
	}
	s, a := segs[0], at[0]
	switch s.kind {
	case child:
		return a.IsKey && a.Key == s.name && match(segs[1:], at[1:], prefix)
	case index:
		return !a.IsKey && a.Index == s.n && match(segs[1:], at[1:], prefix)
	case anyChild:
		return match(segs[1:], at[1:], prefix)
	default: // descendant: the name here, or anywhere below
		if a.IsKey && a.Key == s.name && match(segs[1:], at[1:], prefix) {
			return true
		}
		return match(segs, at[1:], prefix)
	}
}

// StepsString writes a location as a path: $.order.items[0].
func StepsString(at []Step) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range at {
		if s.IsKey {
			b.WriteString("." + s.Key)
		} else {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		}
	}
	return b.String()
}

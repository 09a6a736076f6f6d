package masking

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

// ParsePath parses a path such as $.card.number, $..email or
// $.items[*].iban.
func ParsePath(s string) (Path, error) {
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

// step is one step of a concrete location in a document: an object key
// or an array index.
type step struct {
	key   string
	n     int
	isKey bool
}

// coversPrefix reports whether p matches at, or a prefix of at: a path
// naming an object covers every value inside it.
func (p Path) coversPrefix(at []step) bool { return coversFrom(p.segs, at) }

func coversFrom(segs []seg, at []step) bool {
	if len(segs) == 0 {
		return true
	}
	if len(at) == 0 {
		return false
	}
	s, a := segs[0], at[0]
	switch s.kind {
	case child:
		return a.isKey && a.key == s.name && coversFrom(segs[1:], at[1:])
	case index:
		return !a.isKey && a.n == s.n && coversFrom(segs[1:], at[1:])
	case anyChild:
		return coversFrom(segs[1:], at[1:])
	default: // descendant: the name here, or anywhere below
		if a.isKey && a.key == s.name && coversFrom(segs[1:], at[1:]) {
			return true
		}
		return coversFrom(segs, at[1:])
	}
}

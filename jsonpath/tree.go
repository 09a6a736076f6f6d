package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Object is a JSON object that keeps its keys in document order, so a
// rewritten document reads like the original.
type Object struct {
	Keys   []string
	Values []any
}

// maxDepth bounds nesting: a hostile body cannot exhaust the stack.
const maxDepth = 512

// Decode reads one JSON document into *Object, []any, json.Number,
// string, bool and nil.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := parseValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func parseValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &Object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			o.Keys, o.Values = append(o.Keys, k.(string)), append(o.Values, v)
		}
		_, err := d.Token() // }
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := parseValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token() // ]
		return a, err
	}
	return t, nil
}

// Encode writes v, as Decode returns it, compactly, objects in their order.
func Encode(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case *Object:
		buf.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			Encode(buf, t.Values[i])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			Encode(buf, e)
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}

// Rewrite calls fn for every scalar of v (as Decode returns it) with its
// location, and puts what fn returns in its place. Objects and arrays are
// changed in place.
func Rewrite(v any, fn func(at []Step, scalar any) any) any {
	return rewrite(v, nil, fn)
}

func rewrite(v any, at []Step, fn func([]Step, any) any) any {
	switch t := v.(type) {
	case *Object:
		for i, k := range t.Keys {
			t.Values[i] = rewrite(t.Values[i], append(at, Step{Key: k, IsKey: true}), fn)
		}
		return t
	case []any:
		for i := range t {
			t[i] = rewrite(t[i], append(at, Step{Index: i}), fn)
		}
		return t
	}
	return fn(at, v)
}

// Select returns the values p matches in v (as Decode returns it), in
// document order: scalars, *Object or []any.
func (p Path) Select(v any) []any {
	var out []any
	var walk func(v any, at []Step)
	walk = func(v any, at []Step) {
		if p.Matches(at) {
			out = append(out, v)
		}
		switch t := v.(type) {
		case *Object:
			for i, k := range t.Keys {
				walk(t.Values[i], append(at, Step{Key: k, IsKey: true}))
			}
		case []any:
			for i, e := range t {
				walk(e, append(at, Step{Index: i}))
			}
		}
	}
	walk(v, nil)
	return out
}

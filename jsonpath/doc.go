// Package jsonpath is the small JSONPath subset masking rules and field
// grouping use ($.a.b, $['a b'], $[0], $.*, $[*], $..name), over JSON
// documents decoded with their key order kept.
package jsonpath

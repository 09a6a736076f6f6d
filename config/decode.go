package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder decodes a yaml.Node tree into the config structs by reflection. It
// replaces yaml.v3's own decoding so that every error carries the key path
// as well as the line, unknown keys get a suggestion, and ${VAR} is expanded
// per value. It records the line of every key path it sees so validation
// errors can be placed too.
type decoder struct {
	file   string
	lookup func(string) (string, bool)
	lines  map[string]int
	errs   []*Error
	// failed are the key paths that did not decode, and the keys an
	// unknown key was probably meant to be: validation has nothing true
	// to say of them (see moot).
	failed map[string]bool
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	grantType    = reflect.TypeFor[Grant]()
)

func (d *decoder) fail(line int, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
	if d.failed == nil {
		d.failed = map[string]bool{}
	}
	d.failed[path] = true
}

// moot reports whether a validation problem at path only repeats a
// decoding mistake: path, one of its ancestors or one of its descendants
// did not decode (a key left at its default, a section missing a key),
// or it is the key an unknown key was meant to be. A document that did
// not decode at all ("" failed) leaves nothing to validate.
func (d *decoder) moot(path string) bool {
	if d.failed[""] {
		return true
	}
	for p := path; p != ""; p = parentPath(p) {
		if d.failed[p] {
			return true
		}
	}
	for f := range d.failed {
		if path != "" && strings.HasPrefix(f, path) && (f[len(path)] == '.' || f[len(path)] == '[') {
			return true
		}
	}
	return false
}

// lineOf is the line of path, or of its nearest ancestor present in the file
// (a missing required key is reported where its parent is), or 0.
func (d *decoder) lineOf(path string) int {
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode decodes n into v. A null value leaves v as it is, so absent and
// empty keys keep their defaults.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	switch {
	case v.Type() == durationType:
		d.duration(n, v, path)
	case v.Type() == grantType && n.Kind == yaml.ScalarNode:
		// A plain role name is a grant everywhere.
		d.scalar(n, v.Field(0), path)
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case v.Kind() == reflect.Struct:
		d.structure(n, v, path)
	case v.Kind() == reflect.Slice:
		d.list(n, v, path)
	case v.Kind() == reflect.Map:
		d.dict(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping, got %s", describe(n))
		return
	}
	fields := yamlFields(v.Type())
	// Merged mappings ("<<: *base") go first so the explicit keys override
	// them, as YAML specifies.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMerge(n.Content[i]) {
			d.merge(n.Content[i+1], v, path)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k.Line, path, "expected a key, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, p, "duplicate key (first set on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		idx, ok := fields[k.Value]
		if !ok {
			meant := suggest(k.Value, fields)
			if meant == "" {
				d.fail(k.Line, p, "unknown key")
				continue
			}
			d.fail(k.Line, p, "unknown key (did you mean %s?)", meant)
			d.failed[joinPath(path, meant)] = true
			continue
		}
		d.lines[p] = k.Line
		d.decode(val, v.Field(idx), p)
	}
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

func (d *decoder) merge(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.SequenceNode {
		for _, m := range n.Content {
			d.decode(m, v, path)
		}
		return
	}
	d.decode(n, v, path)
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	items := n.Content
	switch {
	case n.Kind == yaml.SequenceNode:
	case n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.String:
		// "dlq_topics: orders.dlq" reads as a one-element list.
		items = []*yaml.Node{n}
	default:
		d.fail(n.Line, path, "expected a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = item.Line
		d.decode(item, s.Index(i), p)
	}
	v.Set(s)
}

func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping, got %s", describe(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k.Line, path, "expected a key, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, p, "duplicate key (first set on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.lines[p] = k.Line
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, p)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

// text is n's expanded value; n must be a scalar.
func (d *decoder) text(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n.Line, path, "expected a single value, got %s", describe(n))
		return "", false
	}
	s, err := expand(n.Value, d.lookup)
	if err != nil {
		d.fail(n.Line, path, "%v", err)
		return "", false
	}
	return s, true
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.text(n, path)
	if !ok {
		return
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.fail(n.Line, path, "invalid duration %q (use a Go duration such as 15s, 2m or 1h30m)", s)
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.text(n, path)
	if !ok {
		return
	}
	if v.Kind() == reflect.String {
		v.SetString(s)
		return
	}
	tmp := *n
	tmp.Value = s
	if s != n.Value && n.Style == 0 {
		// A plain value from the environment is typed after expansion, so
		// "max_replays: ${MAX}" is an integer.
		tmp.Tag = ""
	}
	if err := tmp.Decode(v.Addr().Interface()); err != nil {
		d.fail(n.Line, path, "expected %s, got %s", kindName(v.Kind()), quoteScalar(s))
	}
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "an integer"
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return quoteScalar(n.Value)
}

// quoteScalar quotes a value for an error message, shortened so that one
// mistake stays one readable line.
func quoteScalar(s string) string {
	const maxLen = 60
	if len(s) > maxLen {
		s = s[:maxLen] + "..."
	}
	return strconv.Quote(s)
}

// yamlFields maps the yaml key of each exported field of t to its index.
func yamlFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = i
	}
	return fields
}

// suggest returns the known key closest to key, if one is close enough to
// be a typo, or "".
func suggest(key string, fields map[string]int) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	best, bestDist := "", 3 // more than two edits is not a typo
	for _, name := range names {
		if dist := editDistance(strings.ToLower(key), name); dist < bestDist {
			best, bestDist = name, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a yaml.v3 parse error into an *Error with the file name
// and the line where the document stops being valid YAML.
func syntaxError(data []byte, filename string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if l := errorLine(data); l > 0 {
		line = l
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	switch {
	case line > 0 && startsWithTab(data, line):
		msg += " (indent with spaces, not tabs)"
	case line > 0 && strings.HasPrefix(msg, "did not find expected ','") && strings.Contains(lineText(data, line), "${"):
		// The braces of ${VAR} end a plain value inside a flow collection.
		msg += ` (quote "${VAR}" inside [...] or {...})`
	}
	return &Error{File: filename, Line: line, Msg: "invalid YAML: " + msg}
}

// maxErrorLineSearch bounds errorLine's quadratic search; longer documents
// keep yaml.v3's own line number.
const maxErrorLineSearch = 5000

// errorLine returns the first line of data that no valid document continues
// past: one after the longest prefix of whole lines that parses, or 0 for a
// document too long to search. yaml.v3 reports the line where the enclosing
// construct began (a mapping, a flow list) and counts parser errors from 0,
// so its number is often a line or more too early. A prefix that fails only
// because it cuts a multi-line construct short parses again once the
// construct closes, so searching from the end skips those.
func errorLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > maxErrorLineSearch {
		return 0
	}
	for n := len(lines) - 1; n > 0; n-- {
		if parses(bytes.Join(lines[:n], nil)) {
			return n + 1
		}
	}
	return 1
}

// parses reports whether every document in data is valid YAML.
func parses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// startsWithTab reports whether the 1-based line of data has a tab in its
// leading whitespace, the usual cause of "cannot start any token".
func startsWithTab(data []byte, line int) bool {
	l := lineText(data, line)
	indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	return strings.Contains(indent, "\t")
}

// lineText is the 1-based line of data, or "".
func lineText(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return lines[line-1]
}

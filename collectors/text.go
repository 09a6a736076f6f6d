package collectors

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
)

// textSink writes gauges straight into the Prometheus text format, one
// buffer per family. It produces what client_golang's encoder would from
// the same const metrics, at a fraction of the cost: no per-sample label
// pair structs, sorting or consistency checks (the emitter is fixed code
// whose label sets are tested). TestTextMatchesCollect holds it to that.
type textSink struct {
	bufs map[*family][]byte
	// hint is each family's size in the previous exposition: buffers start
	// at that capacity instead of growing (and copying) from zero.
	hint map[*family]int
}

func newTextSink(hint map[*family]int) *textSink {
	return &textSink{bufs: map[*family][]byte{}, hint: hint}
}

// sizes reports each family's size, the hint for the next exposition.
func (s *textSink) sizes() map[*family]int {
	out := make(map[*family]int, len(s.bufs))
	for f, b := range s.bufs {
		out[f] = len(b)
	}
	return out
}

func (s *textSink) gauge(f *family, v float64, lv ...string) {
	b, ok := s.bufs[f]
	if !ok && s.hint[f] > 0 {
		b = make([]byte, 0, s.hint[f]+s.hint[f]/8)
	}
	b = append(b, f.name...)
	if len(f.labels) > 0 {
		b = append(b, '{')
		for i, name := range f.labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, name...)
			b = append(b, '=', '"')
			b = appendLabelValue(b, lv[i])
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	b = append(b, '\n')
	s.bufs[f] = b
}

// writeTo appends every family, sorted by name, with its HELP and TYPE.
func (s *textSink) writeTo(out *bytes.Buffer) {
	fams := make([]*family, 0, len(s.bufs))
	for f := range s.bufs {
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	total := 0
	for _, b := range s.bufs {
		total += len(b)
	}
	out.Grow(total + len(fams)*256)
	for _, f := range fams {
		out.WriteString("# HELP ")
		out.WriteString(f.name)
		out.WriteByte(' ')
		out.WriteString(helpEscaper.Replace(f.help))
		out.WriteString("\n# TYPE ")
		out.WriteString(f.name)
		out.WriteString(" gauge\n")
		out.Write(s.bufs[f])
	}
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// appendLabelValue escapes a label value as the text format requires:
// backslash, double quote and newline.
func appendLabelValue(b []byte, v string) []byte {
	if !strings.ContainsAny(v, "\\\"\n") {
		return append(b, v...)
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

package collectors

import (
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
		for n, i := range f.sorted {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, f.labels[i]...)
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

// chunks returns the exposition as byte slices to write in order: each
// family's HELP and TYPE lines, then its samples. Keeping the family buffers
// as they are, rather than joining them, saves a copy of the whole
// exposition.
func (s *textSink) chunks() [][]byte {
	fams := make([]*family, 0, len(s.bufs))
	for f := range s.bufs {
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	out := make([][]byte, 0, 2*len(fams))
	for _, f := range fams {
		header := "# HELP " + f.name + " " + helpEscaper.Replace(f.help) + "\n# TYPE " + f.name + " " + f.typeName() + "\n"
		out = append(out, []byte(header), s.bufs[f])
	}
	return out
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
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return appendInteger(b, v)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendInteger writes an integral v in the shorter of its two exact forms:
// digits, or the exponent form client_golang writes ('g'). Offsets and
// lags of a million or more are the common case in the offset families,
// where 'g' turns 123456789 into 1.23456789e+08; 1e+06 stays as it is.
func appendInteger(b []byte, v float64) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	if len(b)-n <= 6 { // at most 6 digits: 'g' wrote them without exponent
		return b
	}
	var digits [24]byte
	d := strconv.AppendInt(digits[:0], int64(v), 10)
	if len(d) < len(b)-n {
		b = append(b[:n], d...)
	}
	return b
}

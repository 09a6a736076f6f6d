package schemaregistry

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
)

const (
	// maxValueJSON bounds the JSON of one decoded value. It also bounds
	// the work of a corrupt payload whose block counts claim billions of
	// items that take no bytes (nulls, empty records): each writes some.
	maxValueJSON = 16 << 20
	// maxDepth bounds nesting (recursive schemas) while decoding.
	maxDepth = 200
	// maxDecimalBytes bounds a decimal's unscaled value (38 digits take
	// 16 bytes): formatting a megabyte of corrupt digits takes long.
	maxDecimalBytes = 1024
)

// avroConfig is hamba's reader configuration. Decode reads strings and
// bytes itself, bounded by the payload's length; these limits are the
// second line for anything hamba allocates on its own.
var avroConfig = avro.Config{
	MaxByteSliceSize:  maxValueJSON,
	MaxSliceAllocSize: maxValueJSON,
}.Freeze()

var errTooLarge = fmt.Errorf("decoded value larger than %d bytes", maxValueJSON)

// avroSchema is an Avro schema compiled into a tree that the decoder walks
// without type switches on hamba's interfaces.
type avroSchema struct {
	root    *avroNode
	readers sync.Pool
}

type avroKind uint8

const (
	avroNull avroKind = iota
	avroBoolean
	avroInt
	avroLong
	avroFloat
	avroDouble
	avroBytes
	avroString
	avroRecord
	avroEnum
	avroArray
	avroMap
	avroUnion
	avroFixed
	// Logical types, by their physical type's encoding.
	avroDecimalBytes
	avroDecimalFixed
	avroDate
	avroTimeMillis
	avroTimeMicros
	avroTimestampMillis
	avroTimestampMicros
	avroLocalTimestampMillis
	avroLocalTimestampMicros
	avroDuration
)

type avroNode struct {
	kind     avroKind
	scale    int // decimal
	size     int // fixed
	fields   []avroField
	symbols  []string // enum symbols, already JSON strings
	items    *avroNode
	branches []*avroNode
}

type avroField struct {
	key  string // `"name":`
	node *avroNode
}

// parseAvro parses text, with the referenced schemas refs (dependencies
// first) defining the named types it uses.
func parseAvro(text string, refs []resolved) (*avroSchema, error) {
	cache := &avro.SchemaCache{}
	for _, ref := range refs {
		if _, err := avro.ParseWithCache(ref.schema, "", cache); err != nil {
			return nil, fmt.Errorf("reference %s: %w", ref.name, err)
		}
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, err
	}
	root, err := compileAvro(s, map[string]*avroNode{})
	if err != nil {
		return nil, err
	}
	return &avroSchema{root: root}, nil
}

// compileAvro turns s into a node tree; named holds the records, enums and
// fixeds compiled so far, so that a recursive type refers to itself.
func compileAvro(s avro.Schema, named map[string]*avroNode) (*avroNode, error) {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if ns, ok := s.(avro.NamedSchema); ok {
		if n, ok := named[ns.FullName()]; ok {
			return n, nil
		}
	}
	var logical avro.LogicalSchema
	if ls, ok := s.(avro.LogicalTypeSchema); ok {
		logical = ls.Logical()
	}
	n := &avroNode{}
	switch s := s.(type) {
	case *avro.NullSchema:
		n.kind = avroNull
	case *avro.PrimitiveSchema:
		n.kind = primitiveKind(s.Type(), logical)
		if d, ok := logical.(*avro.DecimalLogicalSchema); ok && n.kind == avroDecimalBytes {
			n.scale = d.Scale()
		}
	case *avro.RecordSchema:
		n.kind = avroRecord
		named[s.FullName()] = n
		for _, f := range s.Fields() {
			fn, err := compileAvro(f.Type(), named)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, avroField{key: string(appendJSONString(nil, f.Name())) + ":", node: fn})
		}
	case *avro.EnumSchema:
		n.kind = avroEnum
		named[s.FullName()] = n
		for _, sym := range s.Symbols() {
			n.symbols = append(n.symbols, string(appendJSONString(nil, sym)))
		}
	case *avro.FixedSchema:
		n.kind = avroFixed
		n.size = s.Size()
		if logical != nil {
			switch l := logical.(type) {
			case *avro.DecimalLogicalSchema:
				n.kind, n.scale = avroDecimalFixed, l.Scale()
			default:
				if l.Type() == avro.Duration && n.size == 12 {
					n.kind = avroDuration
				}
			}
		}
		named[s.FullName()] = n
	case *avro.ArraySchema:
		n.kind = avroArray
		items, err := compileAvro(s.Items(), named)
		if err != nil {
			return nil, err
		}
		n.items = items
	case *avro.MapSchema:
		n.kind = avroMap
		values, err := compileAvro(s.Values(), named)
		if err != nil {
			return nil, err
		}
		n.items = values
	case *avro.UnionSchema:
		n.kind = avroUnion
		for _, t := range s.Types() {
			b, err := compileAvro(t, named)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, b)
		}
	default:
		return nil, fmt.Errorf("unsupported avro schema %T", s)
	}
	return n, nil
}

func primitiveKind(t avro.Type, logical avro.LogicalSchema) avroKind {
	var lt avro.LogicalType
	if logical != nil {
		lt = logical.Type()
	}
	switch t {
	case avro.Boolean:
		return avroBoolean
	case avro.Int:
		switch lt {
		case avro.Date:
			return avroDate
		case avro.TimeMillis:
			return avroTimeMillis
		}
		return avroInt
	case avro.Long:
		switch lt {
		case avro.TimeMicros:
			return avroTimeMicros
		case avro.TimestampMillis:
			return avroTimestampMillis
		case avro.TimestampMicros:
			return avroTimestampMicros
		case avro.LocalTimestampMillis:
			return avroLocalTimestampMillis
		case avro.LocalTimestampMicros:
			return avroLocalTimestampMicros
		}
		return avroLong
	case avro.Float:
		return avroFloat
	case avro.Double:
		return avroDouble
	case avro.Bytes:
		if lt == avro.Decimal {
			return avroDecimalBytes
		}
		return avroBytes
	case avro.String:
		return avroString
	}
	return avroNull
}

// avroDecoder is one decode: the reader over the payload and the JSON
// being written.
type avroDecoder struct {
	r       *avro.Reader
	size    int // the payload's length: no string or block is longer
	out     []byte
	scratch []byte
}

// decode decodes payload, the Avro binary encoding of one value.
func (s *avroSchema) decode(payload []byte) (json.RawMessage, error) {
	d, _ := s.readers.Get().(*avroDecoder)
	if d == nil {
		d = &avroDecoder{r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfig))}
	}
	defer s.readers.Put(d)
	d.r.Reset(payload)
	d.r.Error = nil
	d.size = len(payload)
	d.out = make([]byte, 0, 64+2*len(payload))
	if err := d.value(s.root, 0); err != nil {
		return nil, err
	}
	// A value that ends before the payload does was read with the wrong
	// schema or is corrupt.
	d.r.Peek()
	if d.r.Error == nil {
		return nil, errors.New("bytes left after the value")
	}
	return d.out, nil
}

func (d *avroDecoder) err() error {
	if d.r.Error == nil {
		return nil
	}
	if errors.Is(d.r.Error, io.EOF) || errors.Is(d.r.Error, io.ErrUnexpectedEOF) {
		return errors.New("payload ends in the middle of the value")
	}
	return d.r.Error
}

// value decodes one value of node n and appends its JSON to d.out.
func (d *avroDecoder) value(n *avroNode, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d", maxDepth)
	}
	if len(d.out) > maxValueJSON {
		return errTooLarge
	}
	r := d.r
	switch n.kind {
	case avroNull:
		d.out = append(d.out, "null"...)
	case avroBoolean:
		// hamba reads any non-zero byte as true; Avro writes 0 or 1.
		d.out = strconv.AppendBool(d.out, r.ReadBool())
	case avroInt:
		d.out = strconv.AppendInt(d.out, int64(r.ReadInt()), 10)
	case avroLong:
		d.out = strconv.AppendInt(d.out, r.ReadLong(), 10)
	case avroFloat:
		d.out = appendFloat(d.out, float64(r.ReadFloat()), 32)
	case avroDouble:
		d.out = appendFloat(d.out, r.ReadDouble(), 64)
	case avroString:
		b, err := d.bytes()
		if err != nil {
			return err
		}
		d.out = appendJSONString(d.out, unsafeString(b))
	case avroBytes:
		b, err := d.bytes()
		if err != nil {
			return err
		}
		d.out = appendBase64(d.out, b)
	case avroFixed:
		b, err := d.fixed(n.size)
		if err != nil {
			return err
		}
		d.out = appendBase64(d.out, b)
	case avroDecimalBytes:
		b, err := d.bytes()
		if err != nil {
			return err
		}
		if len(b) > maxDecimalBytes {
			return fmt.Errorf("decimal of %d bytes", len(b))
		}
		d.out = appendDecimal(d.out, b, n.scale)
	case avroDecimalFixed:
		b, err := d.fixed(n.size)
		if err != nil {
			return err
		}
		d.out = appendDecimal(d.out, b, n.scale)
	case avroDuration:
		b, err := d.fixed(12)
		if err != nil {
			return err
		}
		d.out = fmt.Appendf(d.out, `{"months":%d,"days":%d,"milliseconds":%d}`,
			binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]))
	case avroDate:
		t := time.Unix(int64(r.ReadInt())*86400, 0).UTC()
		d.out = append(t.AppendFormat(append(d.out, '"'), time.DateOnly), '"')
	case avroTimeMillis:
		d.out = appendTimeOfDay(d.out, int64(r.ReadInt())*int64(time.Millisecond))
	case avroTimeMicros:
		d.out = appendTimeOfDay(d.out, r.ReadLong()*int64(time.Microsecond))
	case avroTimestampMillis, avroLocalTimestampMillis:
		v := r.ReadLong()
		d.out = appendTimestamp(d.out, time.UnixMilli(v).UTC(), n.kind == avroTimestampMillis)
	case avroTimestampMicros, avroLocalTimestampMicros:
		v := r.ReadLong()
		d.out = appendTimestamp(d.out, time.UnixMicro(v).UTC(), n.kind == avroTimestampMicros)
	case avroEnum:
		i := r.ReadInt()
		if r.Error != nil {
			return d.err()
		}
		if i < 0 || int(i) >= len(n.symbols) {
			return fmt.Errorf("enum index %d out of range", i)
		}
		d.out = append(d.out, n.symbols[i]...)
	case avroUnion:
		i := r.ReadLong()
		if r.Error != nil {
			return d.err()
		}
		if i < 0 || i >= int64(len(n.branches)) {
			return fmt.Errorf("union branch %d out of range", i)
		}
		return d.value(n.branches[i], depth+1)
	case avroRecord:
		d.out = append(d.out, '{')
		for i, f := range n.fields {
			if i > 0 {
				d.out = append(d.out, ',')
			}
			d.out = append(d.out, f.key...)
			if err := d.value(f.node, depth+1); err != nil {
				return err
			}
		}
		d.out = append(d.out, '}')
	case avroArray, avroMap:
		return d.block(n, depth)
	}
	return d.err()
}

// block decodes an array or a map: blocks of items, ended by a zero count.
func (d *avroDecoder) block(n *avroNode, depth int) error {
	r := d.r
	open, end := byte('['), byte(']')
	if n.kind == avroMap {
		open, end = '{', '}'
	}
	d.out = append(d.out, open)
	first := true
	for {
		count := r.ReadLong()
		if r.Error != nil {
			return d.err()
		}
		if count == 0 {
			break
		}
		if count < 0 {
			// A negative count is followed by the block's size in bytes.
			count = -count
			size := r.ReadLong()
			if count < 0 || size < 0 || size > int64(d.size) {
				return errors.New("invalid block header")
			}
		}
		for range count {
			if !first {
				d.out = append(d.out, ',')
			}
			first = false
			if n.kind == avroMap {
				k, err := d.bytes()
				if err != nil {
					return err
				}
				d.out = append(appendJSONString(d.out, unsafeString(k)), ':')
			}
			if err := d.value(n.items, depth+1); err != nil {
				return err
			}
		}
	}
	d.out = append(d.out, end)
	return nil
}

// bytes reads a length-prefixed string or bytes into the decoder's
// scratch buffer: a length beyond the payload is corrupt, not allocated.
func (d *avroDecoder) bytes() ([]byte, error) {
	n := d.r.ReadLong()
	if d.r.Error != nil {
		return nil, d.err()
	}
	if n < 0 {
		return nil, fmt.Errorf("invalid length %d", n)
	}
	if n > int64(d.size) {
		return nil, fmt.Errorf("length %d beyond the payload", n)
	}
	return d.fixed(int(n))
}

func (d *avroDecoder) fixed(n int) ([]byte, error) {
	if n > d.size {
		return nil, errors.New("payload ends in the middle of the value")
	}
	if cap(d.scratch) < n {
		d.scratch = make([]byte, n)
	}
	b := d.scratch[:n]
	d.r.Read(b)
	return b, d.err()
}

// appendDecimal appends the two's-complement big-endian unscaled value b
// with scale as an exact decimal string.
func appendDecimal(out, b []byte, scale int) []byte {
	i := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		i.Sub(i, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	digits := i.Text(10)
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	out = append(out, '"')
	if neg {
		out = append(out, '-')
	}
	if scale <= 0 {
		out = append(out, digits...)
		for range -scale {
			out = append(out, '0')
		}
		return append(out, '"')
	}
	for len(digits) <= scale {
		digits = "0" + digits
	}
	out = append(out, digits[:len(digits)-scale]...)
	out = append(out, '.')
	out = append(out, digits[len(digits)-scale:]...)
	return append(out, '"')
}

// appendTimestamp appends t in RFC 3339 (UTC, Z) or, for a local
// timestamp, the same without a zone.
func appendTimestamp(out []byte, t time.Time, zoned bool) []byte {
	layout := "2006-01-02T15:04:05.999999999"
	if zoned {
		layout = time.RFC3339Nano
	}
	return append(t.AppendFormat(append(out, '"'), layout), '"')
}

// appendTimeOfDay appends ns nanoseconds after midnight as 15:04:05.999999.
func appendTimeOfDay(out []byte, ns int64) []byte {
	t := time.Unix(0, ns).UTC()
	return append(t.AppendFormat(append(out, '"'), "15:04:05.999999"), '"')
}

func appendBase64(out, b []byte) []byte {
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"')
}

package schemaregistry

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// decodeJSON checks that payload, the body of a JSON Schema message, is
// JSON and returns it compacted. Invalid UTF-8, which can only sit inside
// strings of a payload that is otherwise JSON, becomes U+FFFD.
func decodeJSON(payload []byte) (json.RawMessage, error) {
	if !utf8.Valid(payload) {
		payload = bytes.ToValidUTF8(payload, []byte("\uFFFD"))
	}
	var out bytes.Buffer
	if err := json.Compact(&out, payload); err != nil {
		return nil, errors.New("the payload is not JSON: " + err.Error())
	}
	if out.Len() == 0 {
		return nil, errors.New("the payload is empty")
	}
	return out.Bytes(), nil
}

// appendFloat appends f as a JSON number, or NaN and the infinities as
// the strings protojson writes for them.
func appendFloat(out []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(out, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(out, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(out, `"-Infinity"`...)
	}
	return strconv.AppendFloat(out, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, and
// U+2028/U+2029 escaped for readers that embed JSON in JavaScript.
func appendJSONString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, s[start:i]...)
			out = append(out, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// unsafeString is b as a string without a copy, for appendJSONString,
// which reads it before b changes.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

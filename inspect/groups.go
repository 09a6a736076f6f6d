package inspect

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/queue"
)

// FieldGroup counts the messages whose body has one value at a path.
type FieldGroup struct {
	// Value is the value as shown (masked where masking applies): a
	// string as is, anything else as compact JSON; Absent when the body
	// has no value there (or is neither JSON nor decoded).
	Value     string    `json:"value"`
	Absent    bool      `json:"absent,omitempty"`
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
}

// GroupByField groups messages (as shown: decoded and masked) by the first
// value p selects in the decoded or JSON body, largest group first.
func GroupByField(msgs []queue.Message, p jsonpath.Path) []FieldGroup {
	idx := map[string]int{}
	var out []FieldGroup
	for i := range msgs {
		v, ok := fieldValue(&msgs[i], p)
		k := "\x00absent"
		if ok {
			k = "v" + v
		}
		j, seen := idx[k]
		if !seen {
			j = len(out)
			idx[k] = j
			out = append(out, FieldGroup{Value: v, Absent: !ok})
		}
		g, ts := &out[j], msgs[i].Timestamp
		g.Count++
		if !ts.IsZero() && (g.FirstSeen.IsZero() || ts.Before(g.FirstSeen)) {
			g.FirstSeen = ts
		}
		if ts.After(g.LastSeen) {
			g.LastSeen = ts
		}
	}
	slices.SortStableFunc(out, func(a, b FieldGroup) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

func fieldValue(m *queue.Message, p jsonpath.Path) (string, bool) {
	doc := m.Body
	if m.Decoded != nil && m.Decoded.Value != nil {
		doc = m.Decoded.Value
	}
	tree, err := jsonpath.Decode(doc)
	if err != nil {
		return "", false
	}
	vals := p.Select(tree)
	if len(vals) == 0 {
		return "", false
	}
	if s, ok := vals[0].(string); ok {
		return s, true
	}
	var buf bytes.Buffer
	jsonpath.Encode(&buf, vals[0])
	return buf.String(), true
}

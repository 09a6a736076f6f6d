package components

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// JSONNode is one value of a JSON document, for the collapsible view of
// a decoded body: an object or array has Children (in document order),
// a scalar has Text and Kind (string, number, bool, null).
type JSONNode struct {
	Key      string
	Kind     string
	Text     string
	Children []JSONNode
	// Open is whether the node starts expanded (the first levels).
	Open bool
}

// Container reports whether the node is an object or an array.
func (n JSONNode) Container() bool { return n.Kind == "object" || n.Kind == "array" }

// Summary is what a collapsed object or array reads.
func (n JSONNode) Summary() string {
	if n.Kind == "array" {
		return "[" + strconv.Itoa(len(n.Children)) + " items]"
	}
	return "{" + strconv.Itoa(len(n.Children)) + " fields}"
}

// maxJSONNodes bounds what one view renders; the download has the rest.
const maxJSONNodes = 5000

// JSONTree parses raw into nodes; ok is false for anything but one
// valid JSON document that fits the bound.
func JSONTree(raw json.RawMessage) (JSONNode, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	budget := maxJSONNodes
	n, err := jsonNode(d, "", 0, &budget)
	if err != nil || budget < 0 {
		return JSONNode{}, false
	}
	return n, true
}

func jsonNode(d *json.Decoder, key string, depth int, budget *int) (JSONNode, error) {
	*budget--
	t, err := d.Token()
	if err != nil {
		return JSONNode{}, err
	}
	n := JSONNode{Key: key, Open: depth < 3}
	switch v := t.(type) {
	case json.Delim:
		n.Kind = "array"
		if v == '{' {
			n.Kind = "object"
		}
		n.Children = []JSONNode{}
		for i := 0; d.More(); i++ {
			if *budget < 0 || depth > 64 {
				return JSONNode{}, strconv.ErrRange
			}
			k := strconv.Itoa(i)
			if n.Kind == "object" {
				kt, err := d.Token()
				if err != nil {
					return JSONNode{}, err
				}
				k = kt.(string)
			}
			c, err := jsonNode(d, k, depth+1, budget)
			if err != nil {
				return JSONNode{}, err
			}
			n.Children = append(n.Children, c)
		}
		_, err = d.Token()
		return n, err
	case string:
		n.Kind, n.Text = "string", strconv.Quote(v)
	case json.Number:
		n.Kind, n.Text = "number", v.String()
	case bool:
		n.Kind, n.Text = "bool", strconv.FormatBool(v)
	default:
		n.Kind, n.Text = "null", "null"
	}
	return n, nil
}

// SchemaName names the schema a value was decoded with: subject vN (id N).
func SchemaName(d *queue.Decoded) string {
	id := "id " + strconv.Itoa(d.Schema.ID)
	if d.Schema.Subject == "" {
		return "schema " + id
	}
	return d.Schema.Subject + " v" + strconv.Itoa(d.Schema.Version) + " (" + id + ")"
}

// firstID is the first of ids, or "" for none.
func firstID(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// DecodedValue reports whether m's body was decoded to a value: the
// panel then shows the tree, not the raw text (the Hex tab has the bytes).
func DecodedValue(m *queue.Message) bool { return m.Decoded != nil && m.Decoded.Value != nil }

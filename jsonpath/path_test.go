package jsonpath

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestParse(t *testing.T) {
	for _, bad := range []string{"", "card", "$", "$.", "$..", "$[x]", "$['a", "$[1", "$.a b["} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	for _, good := range []string{"$.a", "$['a b'].c", "$[0]", "$.*", "$.a[*].b", "$..email"} {
		if _, err := Parse(good); err != nil {
			t.Errorf("Parse(%q): %v", good, err)
		}
	}
}

func TestCoversMatchesAndSelect(t *testing.T) {
	doc, err := Decode([]byte(`{"a":{"email":"x","b":[{"email":"y"},{"c":1}]},"email":"z"}`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Parse("$..email")
	var got []string
	for _, v := range p.Select(doc) {
		got = append(got, v.(string))
	}
	if len(got) != 3 || got[0] != "x" || got[1] != "y" || got[2] != "z" {
		t.Fatalf("$..email selects %v, want x y z in document order", got)
	}
	a, _ := Parse("$.a")
	at := []Step{{Key: "a", IsKey: true}, {Key: "b", IsKey: true}, {Index: 1}}
	if !a.Covers(at) || a.Matches(at) || !a.Matches(at[:1]) {
		t.Fatal("$.a covers what is inside a, and matches a alone")
	}
	idx, _ := Parse("$.a.b[1].c")
	if !idx.Matches(append(at, Step{Key: "c", IsKey: true})) || idx.Matches(at) {
		t.Fatal("index paths")
	}
}

func TestDecodeEncodeKeepsOrderAndBoundsDepth(t *testing.T) {
	in := `{"z":1,"a":[true,null,"\u003c"],"m":{"y":2.50,"b":"x"}}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	Encode(&buf, v)
	if !json.Valid(buf.Bytes()) || !bytes.HasPrefix(buf.Bytes(), []byte(`{"z":1,"a":[true,null,`)) || !bytes.Contains(buf.Bytes(), []byte(`"y":2.50`)) {
		t.Fatalf("round trip %s", buf.Bytes())
	}
	deep := bytes.Repeat([]byte("["), maxDepth+2)
	deep = append(deep, bytes.Repeat([]byte("]"), maxDepth+2)...)
	if _, err := Decode(deep); err == nil {
		t.Fatal("a document deeper than maxDepth decoded")
	}
	if _, err := Decode([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Fatal("two documents decoded as one")
	}
}

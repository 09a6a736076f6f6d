package masking

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/queue"
)

func paths(t *testing.T, ss ...string) []jsonpath.Path {
	t.Helper()
	var out []jsonpath.Path
	for _, s := range ss {
		p, err := jsonpath.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

const order = `{"id":"o-1","card":{"number":"4111111111111111","exp":"12/29"},` +
	`"customer":{"email":"ann@example.com","name":"Ann","contacts":[{"email":"b@example.com"}]},` +
	`"items":[{"sku":"A","iban":"DE44500105175407324931"},{"sku":"B","iban":"FR1420041010050500013M02606"}],"total":12.5,"paid":true,"note":null}`

func TestFieldsMaskEveryMatchAndKeepTheRest(t *testing.T) {
	m := New([]Rule{
		{Fields: paths(t, "$.card.number"), Mode: Last4},
		{Fields: paths(t, "$..email", "$.items[*].iban", "$.total"), Mode: Redact},
	}, []byte("k"))
	got := m.For("kafka:c::orders.DLT").Message(queue.Message{Body: []byte(order)})
	want := `{"id":"o-1","card":{"number":"****1111","exp":"12/29"},` +
		`"customer":{"email":"[masked]","name":"Ann","contacts":[{"email":"[masked]"}]},` +
		`"items":[{"sku":"A","iban":"[masked]"},{"sku":"B","iban":"[masked]"}],"total":"[masked]","paid":true,"note":null}`
	if string(got.Body) != want {
		t.Fatalf("masked body\n got %s\nwant %s", got.Body, want)
	}
	if got.Masked != 6 {
		t.Fatalf("masked %d values, want 6", got.Masked)
	}
}

func TestShowOnlyHidesEverythingElse(t *testing.T) {
	m := New([]Rule{{ShowOnly: paths(t, "$.id", "$.items[*].sku"), Mode: Redact}}, nil)
	got := m.For("x").Message(queue.Message{Body: []byte(order), Key: []byte("o-1")})
	for _, clear := range []string{"4111", "ann@", "Ann", "DE44", "12.5", "12/29", "true"} {
		if bytes.Contains(got.Body, []byte(clear)) {
			t.Errorf("show_only let %q through: %s", clear, got.Body)
		}
	}
	for _, kept := range []string{`"id":"o-1"`, `"sku":"A"`, `"sku":"B"`, `"note":null`} {
		if !bytes.Contains(got.Body, []byte(kept)) {
			t.Errorf("show_only hid %s: %s", kept, got.Body)
		}
	}
	if string(got.Key) != "[masked: 3 bytes that are not JSON]" {
		t.Errorf("a plain key under show_only = %q", got.Key)
	}
}

func TestHashGroupsEqualValuesAndDependsOnTheKey(t *testing.T) {
	body := []byte(`{"a":{"email":"x@y.z"},"b":{"email":"x@y.z"},"c":{"email":"other@y.z"}}`)
	rules := []Rule{{Fields: paths(t, "$..email"), Mode: Hash}}
	var got struct{ A, B, C struct{ Email string } }
	if err := json.Unmarshal(New(rules, []byte("one")).For("x").Message(queue.Message{Body: body}).Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.A.Email != got.B.Email || got.A.Email == got.C.Email || !strings.HasPrefix(got.A.Email, "hash:") {
		t.Fatalf("hashes %+v", got)
	}
	other := New(rules, []byte("two")).For("x").Message(queue.Message{Body: body})
	if bytes.Contains(other.Body, []byte(got.A.Email)) {
		t.Fatal("the hash does not depend on the key: a dictionary would reverse it")
	}
}

func TestHeadersPropertiesAndTheFailurePanel(t *testing.T) {
	m := New([]Rule{{Headers: []string{"X-Card", "kafka_dlt-exception-message", "user_id", "kafka_dlt-original-consumer-group", "x-original-routingKey"}}}, nil)
	in := queue.Message{
		Headers: []queue.Header{
			{Key: "x-card", Value: []byte("4111111111111111")},
			{Key: "kafka_dlt-exception-message", Value: []byte("bad card 4111111111111111")},
			{Key: "kafka_dlt-exception-fqcn", Value: []byte("com.x.BadCard")},
			{Key: "kafka_dlt-original-consumer-group", Value: []byte("secret-group")},
			{Key: "x-original-routingKey", Value: []byte("cust.4111111111111111")},
		},
		Properties: map[string]string{"user_id": "ann", "content_type": "application/json"},
	}
	in.Death = queue.DecodeDeath(in.Headers, nil)
	got := m.For("rabbitmq:r:/:q").Message(in)
	for _, h := range got.Headers {
		if strings.Contains(string(h.Value), "4111") {
			t.Errorf("header %s = %s", h.Key, h.Value)
		}
	}
	if got.Death.ExceptionMessage != Redacted || got.Death.ExceptionClass != "com.x.BadCard" ||
		got.Death.ConsumerGroup != Redacted || got.Death.OriginalRoutingKey != Redacted {
		t.Errorf("death %+v", got.Death)
	}
	if got.Properties["user_id"] != Redacted || got.Properties["content_type"] != "application/json" {
		t.Errorf("properties %v", got.Properties)
	}
	if string(in.Headers[0].Value) != "4111111111111111" || in.Properties["user_id"] != "ann" {
		t.Error("masking changed the message it was given (a cache's, or the one a replay sends)")
	}
	if !m.For("any").MasksHeader("X-CARD") || m.For("any").MasksHeader("x-other") {
		t.Error("MasksHeader")
	}
}

func TestBodiesThatCannotBeWalkedAreMaskedWhole(t *testing.T) {
	m := New([]Rule{{Fields: paths(t, "$.card.number")}}, nil)
	p := m.For("x")
	for _, body := range [][]byte{
		[]byte("card=4111111111111111"),                             // text
		{0, 0, 0, 0, 1, 0x20, '4', '1', '1', '1'},                   // Avro the registry could not decode
		[]byte(strings.Repeat("[", 600) + strings.Repeat("]", 600)), // deeper than maxDepth
	} {
		msg := queue.Message{Body: body}
		if body[0] == 0 {
			msg.Decoded = &queue.Decoded{Format: "avro", Error: "registry down"}
		}
		got := p.Message(msg)
		if bytes.Contains(got.Body, []byte("4111")) || got.Masked == 0 {
			t.Errorf("body %q shown as %q", body[:min(20, len(body))], got.Body)
		}
		if got.Decoded != nil && got.Decoded.Error != "registry down" {
			t.Errorf("decode error lost: %+v", got.Decoded)
		}
	}
	if got := p.Message(queue.Message{Body: []byte(`{"id":1}`)}); got.Masked != 0 || string(got.Body) != `{"id":1}` {
		t.Errorf("a body without the field changed: %s", got.Body)
	}
}

func TestDecodedValuesAreMaskedAndTheWireBytesHidden(t *testing.T) {
	m := New([]Rule{{Fields: paths(t, "$.card.number"), Mode: Last4}}, nil)
	wire := []byte{0, 0, 0, 0, 7, 0x20, '4', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1', '1'}
	got := m.For("x").Message(queue.Message{
		Body:    wire,
		Decoded: &queue.Decoded{Format: "avro", Schema: queue.SchemaRef{ID: 7}, Value: json.RawMessage(`{"card":{"number":"4111111111111111"}}`)},
	})
	if string(got.Decoded.Value) != `{"card":{"number":"****1111"}}` || !bytes.Equal(got.Body, got.Decoded.Value) {
		t.Fatalf("decoded %s, body %q", got.Decoded.Value, got.Body)
	}
	if got.Decoded.Schema.ID != 7 || got.Decoded.Format != "avro" {
		t.Fatalf("lost the schema: %+v", got.Decoded)
	}
}

func TestRulesCoverTheirDLQsOnly(t *testing.T) {
	m := New([]Rule{{DLQs: []*regexp.Regexp{regexp.MustCompile(`^(?:kafka:prod::.*)$`)}, Fields: paths(t, "$.a")}}, nil)
	if m.For("kafka:prod::x") == nil || m.For("kafka:dev::x") != nil {
		t.Fatal("DLQ regexes")
	}
	var none *Masker
	if none.For("x") != nil || none.For("x").MasksHeader("a") {
		t.Fatal("a nil masker masks nothing")
	}
	msg := queue.Message{Body: []byte("secret")}
	if got := (*Policy)(nil).Message(msg); string(got.Body) != "secret" {
		t.Fatal("a nil policy changes nothing")
	}
}

// TestNestedTableHeaders: a masked header name nested in an AMQP table or
// array header, at any depth, is masked; the rest of the table is kept.
func TestNestedTableHeaders(t *testing.T) {
	m := New([]Rule{{Headers: []string{"X-Card"}}}, nil)
	in := queue.Message{Headers: []queue.Header{
		{Key: "wrap", Kind: "table", Value: []byte(`{"order":"o-1","inner":{"x-card":"4111111111111111"}}`)},
		{Key: "list", Kind: "array", Value: []byte(`[{"X-CARD":{"number":"4111111111111111","exp":"12/29"}},"plain"]`)},
		{Key: "other", Kind: "table", Value: []byte(`{"x-cardigan":"wool"}`)},
	}}
	got := m.For("rabbitmq:r:/:q").Message(in)
	for _, h := range got.Headers {
		if strings.Contains(string(h.Value), "4111") || strings.Contains(string(h.Value), "12/29") {
			t.Errorf("header %s = %s", h.Key, h.Value)
		}
	}
	if !strings.Contains(string(got.Headers[0].Value), `"order":"o-1"`) || !strings.Contains(string(got.Headers[1].Value), `"plain"`) ||
		string(got.Headers[2].Value) != `{"x-cardigan":"wool"}` {
		t.Errorf("masking took more than the card: %q %q %q", got.Headers[0].Value, got.Headers[1].Value, got.Headers[2].Value)
	}
	if got.Masked != 3 {
		t.Errorf("Masked = %d, want 3 (one value in wrap, two in list)", got.Masked)
	}
	if !strings.Contains(string(in.Headers[0].Value), "4111") {
		t.Error("masking changed the message it was given")
	}
}

// TestMasksSelection: a selection by a header's whole value tests a
// masked value when the header is masked, or when the value is a table or
// array that holds a masked header at any depth; not otherwise.
func TestMasksSelection(t *testing.T) {
	p := New([]Rule{{Headers: []string{"X-Card"}}}, nil).For("rabbitmq:r:/:q")
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"X-CARD", "4111111111111111", true},
		{"tenant", "a", false},
		{"wrap", `{"order":"o-1","inner":{"x-card":"4111111111111111"}}`, true},
		{"list", ` [{"X-Card":{"number":"4111111111111111"}}]`, true},
		{"wrap", `{"x-cardigan":"wool"}`, false},
		{"wrap", `{"x-card":null}`, false}, // nothing masked: the view shows null too
		{"wrap", `{"x-card": "41`, false},  // no table's text
		{"tenant", "{a", false},
		{"deep", strings.Repeat("[", 600) + strings.Repeat("]", 600), true}, // too deep to walk: shown masked whole
	} {
		if got := p.MasksSelection(tc.name, tc.value); got != tc.want {
			t.Errorf("MasksSelection(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
	if (*Policy)(nil).MasksSelection("wrap", `{"x-card":"4111"}`) || New([]Rule{{Fields: nil, ShowOnly: nil}}, nil).For("q").MasksSelection("deep", strings.Repeat("[", 600)+strings.Repeat("]", 600)) {
		t.Error("a policy without masked headers refuses no selection")
	}
}

// TestMasksValueAt: a selection reading the value at a place reads a
// masked value when a field path names that place, one above it or one
// inside it, or show_only leaves it out.
func TestMasksValueAt(t *testing.T) {
	key := func(ks ...string) []jsonpath.Step {
		var at []jsonpath.Step
		for _, k := range ks {
			at = append(at, jsonpath.Step{Key: k, IsKey: true})
		}
		return at
	}
	fields := New([]Rule{{Fields: paths(t, "$.card.number", "$.items[*].iban"), Mode: Redact}}, nil).For("x")
	showOnly := New([]Rule{{ShowOnly: paths(t, "$.id", "$.items[*].sku"), Mode: Redact}}, nil).For("x")
	for _, tc := range []struct {
		p    *Policy
		at   []jsonpath.Step
		want bool
	}{
		{fields, key("card", "number"), true},
		{fields, key("card"), true},                // holds it
		{fields, key("card", "number", "x"), true}, // inside it
		{fields, nil, true},                        // the whole value
		{fields, key("card", "exp"), false},        // beside it
		{fields, key("id"), false},
		{fields, append(key("items"), jsonpath.Step{Index: 1}), true},
		{fields, append(key("items"), jsonpath.Step{Index: 1}, jsonpath.Step{Key: "sku", IsKey: true}), false},
		{showOnly, key("id"), false},
		{showOnly, key("card"), true},
		{showOnly, append(key("items"), jsonpath.Step{Index: 0}, jsonpath.Step{Key: "sku", IsKey: true}), false},
		{nil, key("card"), false},
	} {
		if got := tc.p.MasksValueAt(tc.at); got != tc.want {
			t.Errorf("MasksValueAt(%s) = %v, want %v", jsonpath.StepsString(tc.at), got, tc.want)
		}
	}
}

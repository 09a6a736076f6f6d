package schemaregistry

import (
	"encoding/json"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// benchAvroSchema is produce.py's User with Address inline.
const benchAvroSchema = `{"type":"record","name":"User","namespace":"qw.test","fields":[
 {"name":"id","type":"long"},
 {"name":"name","type":"string"},
 {"name":"emails","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"int"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["ACTIVE","SUSPENDED","DELETED"]}},
 {"name":"nickname","type":["null","string"],"default":null},
 {"name":"avatar","type":"bytes"},
 {"name":"created","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"balance","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"birthday","type":{"type":"int","logicalType":"date"}},
 {"name":"address","type":{"type":"record","name":"Address","fields":[
  {"name":"street","type":"string"},{"name":"city","type":"string"},{"name":"zip","type":["null","int"],"default":null}]}},
 {"name":"previous","type":["null","qw.test.Address"],"default":null},
 {"name":"score","type":"double"},
 {"name":"active","type":"boolean"}]}`

type benchAddress struct {
	Street string `avro:"street"`
	City   string `avro:"city"`
	Zip    *int   `avro:"zip"`
}

type benchUser struct {
	ID       int64          `avro:"id"`
	Name     string         `avro:"name"`
	Emails   []string       `avro:"emails"`
	Attrs    map[string]int `avro:"attrs"`
	Status   string         `avro:"status"`
	Nickname *string        `avro:"nickname"`
	Avatar   []byte         `avro:"avatar"`
	Created  time.Time      `avro:"created"`
	Balance  *big.Rat       `avro:"balance"`
	Birthday time.Time      `avro:"birthday"`
	Address  benchAddress   `avro:"address"`
	Previous *benchAddress  `avro:"previous"`
	Score    float64        `avro:"score"`
	Active   bool           `avro:"active"`
}

const benchOrder = `{"id":"o-1","customer":"Zoë — 東京","status":"PLACED","note":"leave at door",
 "lines":[{"sku":"A-1","quantity":2,"price":{"currency":"EUR","units":"12","nanos":500000000}},
          {"sku":"B-2","quantity":1,"price":{"currency":"EUR","units":"3"}}],
 "counts":{"views":"9007199254740993"},"blob":"AP8Q","created":"2024-05-01T12:34:56.789Z",
 "score":0.25,"big":"-9223372036854775808","tags":["x","y"],"rush":true}`

const benchEvent = `{"id":1,"kind":"created","who":{"name":"Zoë — 東京","roles":["admin","ops"]},"amount":12.5,"note":null,"labels":{"a":"b"}}`

// BenchmarkDecode is Decode per message, the schema cached, for each
// format, with messages like produce.py's.
func BenchmarkDecode(b *testing.B) {
	order, err := os.ReadFile("testdata/proto/qw/order.proto")
	if err != nil {
		b.Fatal(err)
	}
	common, err := os.ReadFile("testdata/proto/qw/common.proto")
	if err != nil {
		b.Fatal(err)
	}
	f := newFakeRegistry(b, map[int]idAnswer{
		1: {Schema: benchAvroSchema},
		2: {Schema: string(order), SchemaType: "PROTOBUF", References: []reference{{Name: "qw/common.proto", Subject: "common", Version: 1}}},
		3: {Schema: `{"type":"object"}`, SchemaType: "JSON"},
	})
	f.subjects = map[string]idAnswer{"common@1": {Schema: string(common), SchemaType: "PROTOBUF"}}
	r := newRegistry(b, f.URL)

	nick, zip := "zo", 75002
	avroValue, err := avro.Marshal(avro.MustParse(benchAvroSchema), benchUser{
		ID: 1, Name: "Zoë — 東京", Emails: []string{"a@example.com", "b@example.com"},
		Attrs: map[string]int{"logins": 3}, Status: "ACTIVE", Nickname: &nick, Avatar: []byte{0, 1, 0xfe},
		Created: time.UnixMilli(1714566896789).UTC(), Balance: big.NewRat(123450, 100),
		Birthday: time.Date(1990, 2, 28, 0, 0, 0, 0, time.UTC),
		Address:  benchAddress{Street: "1 Rue de la Paix", City: "Paris", Zip: &zip}, Score: 0.5, Active: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	s, err := r.schema(b.Context(), 2)
	if err != nil {
		b.Fatal(err)
	}
	msg := dynamicpb.NewMessage(s.proto.file.Messages().ByName("Order"))
	if err := protojson.Unmarshal([]byte(benchOrder), msg); err != nil {
		b.Fatal(err)
	}
	protoValue, err := proto.Marshal(msg)
	if err != nil {
		b.Fatal(err)
	}

	for _, c := range []struct {
		format string
		b      []byte
	}{
		{FormatAvro, wire(1, avroValue...)},
		{FormatProtobuf, wire(2, append([]byte{0}, protoValue...)...)},
		{FormatJSONSchema, wire(3, []byte(benchEvent)...)},
	} {
		b.Run(c.format, func(b *testing.B) {
			d, ok := r.Decode(b.Context(), c.b)
			if !ok || d.Error != "" || !json.Valid(d.Value) {
				b.Fatalf("Decode = %+v, %v", d, ok)
			}
			b.Logf("%d bytes: %s", len(c.b), d.Value)
			b.ReportAllocs()
			b.SetBytes(int64(len(c.b)))
			for b.Loop() {
				r.Decode(b.Context(), c.b)
			}
		})
	}
}

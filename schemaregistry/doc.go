// Package schemaregistry decodes Kafka keys and values written in the
// Confluent wire format, for display: a magic byte 0, the schema id as a
// 4-byte big-endian integer, for Protobuf the message-index array, then
// the payload. The schema comes from a Confluent-compatible registry
// (Confluent's REST API; Karapace, Redpanda and Apicurio's
// /apis/ccompat/v7 speak it).
//
// Decode never changes the bytes a message carries: replay, move and
// restore always send the raw bytes. It only adds a readable JSON form,
// queue.Decoded, next to them.
//
// # What is decoded
//
// Bytes shorter than five or not starting with 0 are not in the wire
// format: Decode says so (ok false) without asking the registry, and the
// caller shows them as it always did. Otherwise the schema id's schema is
// fetched once (GET /schemas/ids/{id}), with its references
// (GET /subjects/{subject}/versions/{version}, recursively), and its
// subjects and versions for display (GET /schemas/ids/{id}/versions; when
// that fails they stay empty and only the id is shown). Where subjects
// share the schema, Decode shows a <topic>-value subject and DecodeKey a
// <topic>-key one, else the first listed. Three schema
// types are decoded:
//
//   - AVRO (schemaType absent or "AVRO"), parsed with hamba/avro;
//     references are named types defined by other subjects.
//   - PROTOBUF, compiled with protocompile; references are imports, and
//     google/protobuf/*.proto are built in. The message-index array after
//     the schema id picks the message (a single 0 byte is the first
//     top-level message; longer arrays walk into nested messages).
//   - JSON (JSON Schema): the payload is JSON and is shown as it is, once
//     checked to be JSON. It is not validated against the schema.
//
// # The JSON mapping
//
// The value is always valid JSON (invalid UTF-8 in strings becomes
// U+FFFD). Avro values are mapped so that they read like the data rather
// than like the Avro JSON encoding:
//
//   - records are objects with the fields in schema order; maps are
//     objects; arrays are arrays; enums are their symbol;
//   - a union is the value of the branch written (no {"type": value}
//     wrapper), null for the null branch;
//   - int and long are JSON numbers (a long beyond 2^53 loses precision in
//     a JavaScript reader, not in the JSON);
//   - float and double are numbers; NaN and the infinities, which JSON has
//     no number for, are the strings "NaN", "Infinity" and "-Infinity", as
//     protojson writes them;
//   - bytes and fixed are standard base64 strings, as protojson writes
//     bytes;
//   - logical types take their natural form: decimal is an exact decimal
//     string ("1234.50"), timestamp-millis/-micros/-nanos an RFC 3339 UTC
//     string, local-timestamp-* the same without a zone, date
//     "2006-01-02", time-millis/-micros "15:04:05.000", uuid its string,
//     duration {"months", "days", "milliseconds"}.
//
// Protobuf values are protojson's: original .proto field names, scalar
// and repeated fields left unset shown with their default
// (EmitUnpopulated), an unset message field as null, an unset optional or
// oneof field left out, 64-bit integers as strings, enums by name, bytes
// in base64, NaN as "NaN", well-known types (Timestamp, Duration,
// wrappers, Struct) in their JSON form. A schema may be .proto text or a
// base64 FileDescriptorProto, as the Python serializer registers it.
//
// # Failure behaviour
//
// When the bytes are in the wire format Decode always returns ok with
// either a Value or an Error saying why not: the registry is unreachable
// or answers an error, the schema id is unknown, the schema type is not
// one of the three, the schema does not parse, or the payload does not
// decode (truncated, flipped bytes, trailing bytes). It never panics and
// never waits longer than the caller's context or a fetch's bound: 5 s a
// request, 10 s in all (the schema, its subject, its references).
//
// A schema fetched is kept for the life of the Registry: a schema id
// never changes meaning. Callers asking for the same id at once share one
// fetch. A failure is remembered for 30 seconds: for its id (an unknown id
// costs one request, not one per message), and, when the registry did not
// answer at all (connection refused, timeout, 5xx), for the whole
// registry, so a browse of a thousand messages with the registry down
// costs one timeout, not a thousand. Response bodies are read up to 8 MiB.
// Decoding is bounded by the payload: a length read from a corrupt
// payload that exceeds the payload is an error, never an allocation, and
// a decoded value is cut off with an error past 16 MiB of JSON.
package schemaregistry

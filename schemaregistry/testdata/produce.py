"""Produces records with confluent-kafka's schema registry serializers
(AvroSerializer, ProtobufSerializer, JSONSerializer) and prints, one JSON
line per record, what it sent.

usage: produce.py REGISTRY_URL BOOTSTRAP TOPIC

Records go to TOPIC.avro, TOPIC.protobuf and TOPIC.json; the serializers
register their schemas under the default subject names (TOPIC.avro-value,
...). Each printed line is
  {"topic", "partition", "offset", "format",
   "key", "value":            the data handed to the serializer, made JSON
   "expect_key", "expect_value":  the same in the JSON mapping the Go
                                  decoder documents}
For Protobuf the expected form is protobuf's own json_format of the message
serialized (original field names, unset fields included).
"""

import base64
import datetime
import decimal
import json
import math
import os
import sys
import tempfile

from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

HERE = os.path.dirname(os.path.abspath(__file__))

ADDRESS = {
    "type": "record", "name": "Address", "namespace": "qw.test",
    "fields": [
        {"name": "street", "type": "string"},
        {"name": "city", "type": "string"},
        {"name": "zip", "type": ["null", "int"], "default": None},
    ],
}

USER = {
    "type": "record", "name": "User", "namespace": "qw.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "emails", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["ACTIVE", "SUSPENDED", "DELETED"]}},
        {"name": "nickname", "type": ["null", "string"], "default": None},
        {"name": "avatar", "type": "bytes"},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "balance", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "birthday", "type": {"type": "int", "logicalType": "date"}},
        {"name": "address", "type": "qw.test.Address"},
        {"name": "previous", "type": ["null", "qw.test.Address"], "default": None},
        {"name": "score", "type": "double"},
        {"name": "active", "type": "boolean"},
    ],
}

KEY_JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "EventKey", "type": "object",
    "properties": {"id": {"type": "integer"}},
    "required": ["id"],
}

VALUE_JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event", "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "kind": {"type": "string", "enum": ["created", "updated"]},
        "who": {"type": "object", "properties": {"name": {"type": "string"}, "roles": {"type": "array", "items": {"type": "string"}}}},
        "amount": {"type": "number"},
        "note": {"type": ["string", "null"]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["id", "kind"],
}

UNICODE = "Zoë — 東京 🚀 \"quoted\" back\\slash tab\tnewline\n"


def utc(y, mo, d, h, mi, s, ms):
    return datetime.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=datetime.timezone.utc)


def avro_records():
    users = [
        {
            "id": 1, "name": UNICODE, "emails": ["a@example.com", "b@example.com"],
            "attrs": {"logins": 3, "é": -7}, "status": "ACTIVE", "nickname": "zo",
            "avatar": b"\x00\x01\xfe\xff", "created": utc(2024, 5, 1, 12, 34, 56, 789),
            "balance": decimal.Decimal("1234.50"), "birthday": datetime.date(1990, 2, 28),
            "address": {"street": "1 Rue de la Paix", "city": "Paris", "zip": 75002},
            "previous": None, "score": 0.5, "active": True,
        },
        {
            "id": -9007199254740993, "name": "", "emails": [], "attrs": {},
            "status": "DELETED", "nickname": None, "avatar": b"",
            "created": utc(1969, 12, 31, 23, 59, 59, 1),
            "balance": decimal.Decimal("-0.05"), "birthday": datetime.date(1970, 1, 1),
            "address": {"street": "", "city": "Tōkyō", "zip": None},
            "previous": {"street": "old", "city": "Lyon", "zip": 69001},
            "score": float("nan"), "active": False,
        },
    ]
    return [("user-%d" % i, u) for i, u in enumerate(users)]


def avro_expect(v):
    """v in the Go decoder's mapping (unions as their value, bytes as
    base64, logical types as strings, NaN as a string)."""
    if isinstance(v, dict):
        return {k: avro_expect(x) for k, x in v.items()}
    if isinstance(v, list):
        return [avro_expect(x) for x in v]
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        return v.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def as_json(v):
    """v made JSON for printing what was sent."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, bytes):
        return {"bytes_b64": base64.b64encode(v).decode()}
    if isinstance(v, (decimal.Decimal, datetime.date, datetime.datetime)):
        return str(v)
    return v


def compile_proto():
    """Compiles testdata/proto with grpcio-tools' protoc into a temporary
    folder and imports the generated order_pb2."""
    from grpc_tools import protoc
    import importlib.resources

    out = tempfile.mkdtemp(prefix="qw-pb2-")
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    proto_dir = os.path.join(HERE, "proto")
    rc = protoc.main(["protoc", "-I", proto_dir, "-I", include, "--python_out", out,
                      "qw/common.proto", "qw/order.proto"])
    if rc != 0:
        sys.exit("protoc failed: %d" % rc)
    sys.path.insert(0, out)
    from qw import order_pb2  # noqa: E402 (generated above)
    return order_pb2


def main():
    registry_url, bootstrap, topic = sys.argv[1:4]
    client = SchemaRegistryClient({"url": registry_url})
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    sent = []

    def produce(t, fmt, key, value, key_bytes, value_bytes, expect_key, expect_value):
        record = {"topic": t, "format": fmt, "key": as_json(key), "value": as_json(value),
                  "expect_key": expect_key, "expect_value": expect_value}

        def delivered(err, msg):
            if err is not None:
                sys.exit("delivery failed: %s" % err)
            record["partition"], record["offset"] = msg.partition(), msg.offset()
            sent.append(record)

        producer.produce(t, key=key_bytes, value=value_bytes, on_delivery=delivered)

    # Avro: the value schema refers to a named type another subject holds.
    t = topic + ".avro"
    address_subject = t + "-address"
    client.register_schema(address_subject, Schema(json.dumps(ADDRESS), "AVRO"))
    address_version = client.get_latest_version(address_subject).version
    user = Schema(json.dumps(USER), "AVRO", [SchemaReference("qw.test.Address", address_subject, address_version)])
    key_ser = AvroSerializer(client, '"string"')
    value_ser = AvroSerializer(client, user)
    for key, value in avro_records():
        produce(t, "avro", key, value,
                key_ser(key, SerializationContext(t, MessageField.KEY)),
                value_ser(value, SerializationContext(t, MessageField.VALUE)),
                avro_expect(key), avro_expect(value))

    # Protobuf: Order ([0]), Order.Line ([0, 0]) and OrderKey ([1]); the
    # serializer registers qw/common.proto as a reference.
    pb = compile_proto()
    from google.protobuf import json_format

    t = topic + ".protobuf"
    conf = {"use.deprecated.format": False}
    order_ser = ProtobufSerializer(pb.Order, client, conf)
    line_ser = ProtobufSerializer(pb.Order.Line, client, conf)
    okey_ser = ProtobufSerializer(pb.OrderKey, client, conf)
    orders = [
        {
            "id": "o-1", "customer": UNICODE, "status": "PLACED", "note": "leave at door",
            "lines": [
                {"sku": "A-1", "quantity": 2, "price": {"currency": "EUR", "units": "12", "nanos": 500000000}},
                {"sku": "B-2", "quantity": 1, "price": {"currency": "EUR", "units": "3"}},
            ],
            "counts": {"views": "9007199254740993", "é": "-1"},
            "blob": base64.b64encode(b"\x00\xff\x10").decode(),
            "created": "2024-05-01T12:34:56.789Z", "score": 0.25, "big": "-9223372036854775808",
            "tags": ["x", "y"], "rush": True,
        },
        {"id": "o-2", "score": "NaN"},
    ]

    def pb_expect(msg):
        d = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                      always_print_fields_with_no_presence=True)
        return as_json(d)

    for d in orders:
        msg = json_format.ParseDict(d, pb.Order())
        key = pb.OrderKey(id=d["id"])
        produce(t, "protobuf", json_format.MessageToDict(key), as_json(d),
                okey_ser(key, SerializationContext(t, MessageField.KEY)),
                order_ser(msg, SerializationContext(t, MessageField.VALUE)),
                pb_expect(key), pb_expect(msg))
    # A nested message as the value: message indexes [0, 0]. Its subject
    # is another topic's, since TopicNameStrategy would otherwise make
    # Order.Line a new version of Order's subject.
    t2 = topic + ".protobuf-line"
    line = pb.Order.Line(sku="C-3", quantity=-4)
    produce(t2, "protobuf", None, json_format.MessageToDict(line), None,
            line_ser(line, SerializationContext(t2, MessageField.VALUE)),
            None, pb_expect(line))

    # JSON Schema.
    t = topic + ".json"
    jkey_ser = JSONSerializer(json.dumps(KEY_JSON_SCHEMA), client)
    jval_ser = JSONSerializer(json.dumps(VALUE_JSON_SCHEMA), client)
    events = [
        {"id": 1, "kind": "created", "who": {"name": UNICODE, "roles": ["admin", "ops"]},
         "amount": 12.5, "note": None, "labels": {"a": "b"}},
        {"id": 2, "kind": "updated"},
    ]
    for e in events:
        key = {"id": e["id"]}
        produce(t, "json-schema", key, e,
                jkey_ser(key, SerializationContext(t, MessageField.KEY)),
                jval_ser(e, SerializationContext(t, MessageField.VALUE)),
                key, e)

    if producer.flush(30) != 0:
        sys.exit("records still unsent after 30s")
    for record in sent:
        print(json.dumps(record, ensure_ascii=False))


if __name__ == "__main__":
    main()

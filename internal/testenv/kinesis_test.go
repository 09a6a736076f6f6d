package testenv

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// TestKinesisLocalServes starts kinesis-local and moto, has boto3 create a
// stream, put a record and read it back at its sequence number (the read
// queuewatch makes at a checkpoint), and write and read an item in a
// DynamoDB table on moto (where KCL lease tables live in these tests).
func TestKinesisLocalServes(t *testing.T) {
	s := Kinesis(t)
	m := Moto(t)
	name := Unique("testenv")
	out := s.Boto3(t, m.Endpoint, `
import os, sys
import boto3
name = sys.argv[1]
k = boto3.client("kinesis", endpoint_url=os.environ["KINESIS_ENDPOINT"])
k.create_stream(StreamName=name, ShardCount=1)
k.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
seq = k.put_record(StreamName=name, Data=b"hello", PartitionKey="p")["SequenceNumber"]
it = k.get_shard_iterator(StreamName=name, ShardId="shardId-000000000000",
    ShardIteratorType="AT_SEQUENCE_NUMBER", StartingSequenceNumber=seq)["ShardIterator"]
rec = k.get_records(ShardIterator=it, Limit=1)["Records"][0]
d = boto3.client("dynamodb", endpoint_url=os.environ["DYNAMODB_ENDPOINT"])
d.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
    AttributeDefinitions=[{"AttributeName": "leaseKey", "AttributeType": "S"}],
    KeySchema=[{"AttributeName": "leaseKey", "KeyType": "HASH"}])
d.put_item(TableName=name, Item={"leaseKey": {"S": "shardId-000000000000"}, "checkpoint": {"S": seq}})
item = d.get_item(TableName=name, Key={"leaseKey": {"S": "shardId-000000000000"}})["Item"]
print(rec["Data"].decode(), item["checkpoint"]["S"] == seq)
`, name)
	if got := strings.TrimSpace(string(out)); got != "hello True" {
		t.Fatalf("got %q, want the record read back and the lease item's checkpoint", got)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(u.Host); host != "127.0.0.1" {
		t.Fatalf("endpoint host %s, want loopback", host)
	}
	t.Logf("kinesis-local started in %s", s.StartupTime)
}

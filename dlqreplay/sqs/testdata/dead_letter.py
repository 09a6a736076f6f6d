"""Sends messages and dead-letters them the way a failing consumer does.

Usage: dead_letter.py ENDPOINT QUEUE_URL DLQ_URL < messages.json

messages.json is a list of {"body": ..., "attributes": {name: value},
"group": ...} (string attributes; group, for a FIFO queue, is the
MessageGroupId and the body the deduplication id). They are sent to QUEUE_URL in order, then received
with a visibility timeout of 0 and never deleted, so each receive counts
against the queue's maxReceiveCount (1) and the server moves a message to
DLQ_URL on the receive after that. Stops when DLQ_URL holds all of them.
boto3 sends VisibilityTimeout=0 (the Go SDK would omit it).
"""
import json
import sys
import time

import boto3

endpoint, queue_url, dlq_url = sys.argv[1:4]
msgs = json.load(sys.stdin)
sqs = boto3.client("sqs", endpoint_url=endpoint)


def depth(url):
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


want = depth(dlq_url) + len(msgs)
for m in msgs:
    attrs = {k: {"DataType": "String", "StringValue": v} for k, v in m["attributes"].items()}
    extra = {}
    if m.get("group"):
        extra = {"MessageGroupId": m["group"], "MessageDeduplicationId": m["body"]}
    sqs.send_message(QueueUrl=queue_url, MessageBody=m["body"], MessageAttributes=attrs, **extra)
for _ in range(100 + 3 * len(msgs)):
    if depth(dlq_url) >= want:
        sys.exit(0)
    # One at a time, milliseconds apart: ElasticMQ orders the DLQ by the
    # millisecond a message arrived, and breaks ties at random.
    sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=1, VisibilityTimeout=0)
    time.sleep(0.002)
sys.exit(f"{dlq_url} holds {depth(dlq_url)} messages, want {want}")

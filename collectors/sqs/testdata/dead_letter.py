"""Dead-letters messages on an SQS server the way a failing consumer does.

Usage: dead_letter.py ENDPOINT QUEUE_URL DLQ_URL WANT

Receives from QUEUE_URL with a visibility timeout of 0 and never deletes,
so every receive counts against the queue's maxReceiveCount; the server
moves a message to the DLQ on the receive after that. Stops when DLQ_URL
holds WANT messages (ElasticMQ's counts are exact), and fails after 200
receives. boto3 sends VisibilityTimeout=0 (the Go SDK would omit it).
"""
import sys

import boto3

endpoint, queue_url, dlq_url, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sqs = boto3.client("sqs", endpoint_url=endpoint)


def dlq_depth():
    attrs = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


for _ in range(200):
    if dlq_depth() >= want:
        print(dlq_depth())
        sys.exit(0)
    sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0, AttributeNames=["All"])
sys.exit(f"{dlq_url} holds {dlq_depth()} messages after 200 receives, want {want}")

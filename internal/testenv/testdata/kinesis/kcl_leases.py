"""Writes KCL lease items into a DynamoDB lease table, in the item layout the
Kinesis Client Library itself writes (DynamoDBLeaseSerializer): leaseKey
(S, the table's hash key), leaseOwner (S), leaseCounter (N), checkpoint (S),
checkpointSubSequenceNumber (N), ownerSwitchesSinceCheckpoint (N),
parentShardId (SS), childShardIds (SS; KCL 2.x wrote childShardId) and, for
KCL 3.x, its WORKER_METRIC_STATS items beside the leases.

Reads one JSON object on stdin:
  {"table": T, "create": true, "leases": [{"key": K, "owner": O, "counter": N,
   "checkpoint": C, "switches": N, "parents": [...], "children": [...],
   "layout": "2.x"|"3.x"}], "worker_metrics": ["worker-1"]}
A lease with "delete": true is deleted. Endpoint from DYNAMODB_ENDPOINT.
"""
import json
import os
import sys

import boto3

req = json.load(sys.stdin)
d = boto3.client("dynamodb", endpoint_url=os.environ["DYNAMODB_ENDPOINT"])
table = req["table"]
if req.get("create"):
    d.create_table(
        TableName=table,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "leaseKey", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "leaseKey", "KeyType": "HASH"}],
    )
for lease in req.get("leases") or []:
    if lease.get("delete"):
        d.delete_item(TableName=table, Key={"leaseKey": {"S": lease["key"]}})
        continue
    item = {
        "leaseKey": {"S": lease["key"]},
        "leaseCounter": {"N": str(lease.get("counter", 1))},
        "checkpoint": {"S": lease.get("checkpoint", "TRIM_HORIZON")},
        "checkpointSubSequenceNumber": {"N": "0"},
        "ownerSwitchesSinceCheckpoint": {"N": str(lease.get("switches", 0))},
    }
    if lease.get("owner"):
        item["leaseOwner"] = {"S": lease["owner"]}
    if lease.get("parents"):
        item["parentShardId"] = {"SS": lease["parents"]}
    if lease.get("children"):
        if lease.get("layout") == "2.x":
            item["childShardId"] = {"S": lease["children"][0]}
        else:
            item["childShardIds"] = {"SS": lease["children"]}
    d.put_item(TableName=table, Item=item)
for worker in req.get("worker_metrics") or []:
    d.put_item(TableName=table, Item={
        "leaseKey": {"S": "WorkerMetricStats:" + worker},
        "entityType": {"S": "WORKER_METRIC_STATS"},
        "wid": {"S": worker},
        "lut": {"N": "1700000000"},
    })

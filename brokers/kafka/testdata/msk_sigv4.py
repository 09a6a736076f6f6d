"""Signs an AWS_MSK_IAM authentication payload with botocore, an AWS
signer independent of franz-go's, for brokers/kafka's tests.

Reads a JSON object from stdin: host (no port), region, access_key,
secret_key, session_token (may be empty) and timestamp (X-Amz-Date,
YYYYMMDDTHHMMSSZ), which stands in for botocore's clock. Prints the
presigned request's query parameters (including X-Amz-Signature) as a
JSON object: the same GET https://<host>/?Action=kafka-cluster:Connect,
expiring in 900 seconds, that the MSK IAM libraries sign.
"""
import datetime
import json
import sys
from urllib.parse import parse_qsl, urlsplit

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

args = json.load(sys.stdin)
now = datetime.datetime.strptime(args["timestamp"], "%Y%m%dT%H%M%SZ")
# botocore reads its clock through this module-level name.
botocore.auth.get_current_datetime = lambda *_, **__: now
creds = Credentials(args["access_key"], args["secret_key"], args["session_token"] or None)
request = AWSRequest(method="GET", url="https://" + args["host"] + "/", params={"Action": "kafka-cluster:Connect"})
botocore.auth.SigV4QueryAuth(creds, "kafka-cluster", args["region"], expires=900).add_auth(request)
json.dump(dict(parse_qsl(urlsplit(request.url).query)), sys.stdout)

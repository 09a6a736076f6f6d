package kinesis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The sentinel checkpoints the KCL writes instead of a sequence number.
const (
	// CheckpointTrimHorizon: nothing processed yet, start at the oldest.
	CheckpointTrimHorizon = "TRIM_HORIZON"
	// CheckpointLatest: nothing processed yet, start at the newest.
	CheckpointLatest = "LATEST"
	// CheckpointAtTimestamp: nothing processed yet, start at a time the
	// application configured (not in the lease).
	CheckpointAtTimestamp = "AT_TIMESTAMP"
	// CheckpointShardEnd: the shard was read to its end (it was closed by
	// a reshard), so its children may be read.
	CheckpointShardEnd = "SHARD_END"
)

// workerMetricStats is the entityType of the KCL 3.x items that record a
// worker's load in the lease table; they are not leases.
const workerMetricStats = "WORKER_METRIC_STATS"

// Lease is one KCL lease: a shard, who holds it and how far it was read.
type Lease struct {
	// Key is the item's leaseKey: the shard id, or for a multi-stream
	// application "account:stream:creationEpoch:shardId".
	Key     string
	ShardID string
	// Stream is the stream a multi-stream key names; empty for a
	// single-stream application.
	Stream string
	// Owner is the worker holding the lease; empty for a free lease.
	Owner string
	// Counter is leaseCounter, which the owner increments on every
	// renewal (every failover time / 3) and a taker on every take.
	Counter int64
	// Checkpoint is a sequence number or one of the Checkpoint* sentinels.
	Checkpoint string
	// SubSequence is checkpointSubSequenceNumber: the record's position in
	// an aggregated (KPL) record.
	SubSequence int64
	// OwnerSwitches is ownerSwitchesSinceCheckpoint: how often the lease
	// changed hands since its last checkpoint.
	OwnerSwitches int64
	Parents       []string
	Children      []string
}

// Sentinel reports whether the checkpoint is no sequence number.
func (l Lease) Sentinel() bool {
	switch l.Checkpoint {
	case CheckpointTrimHorizon, CheckpointLatest, CheckpointAtTimestamp, CheckpointShardEnd, "":
		return true
	}
	return false
}

// Leases reads every lease of stream in the lease table (a Scan, page by
// page, strongly consistent so a renewal just made is seen). Items that
// are no leases (KCL 3.x worker metrics) are left out, and so are leases
// a multi-stream application holds on other streams.
func (c *Cluster) Leases(ctx context.Context, table, stream string) ([]Lease, error) {
	var out []Lease
	pages := dynamodb.NewScanPaginator(c.dynamo, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan lease table %s: %w", table, err)
		}
		for _, item := range page.Items {
			if l, ok := leaseOf(item); ok && (l.Stream == "" || l.Stream == stream) {
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, func(a, b Lease) int { return strings.Compare(a.ShardID, b.ShardID) })
	return out, nil
}

// leaseOf reads a lease table item in the KCL 2.x or 3.x layout; ok is
// false for an item that is no lease.
func leaseOf(item map[string]types.AttributeValue) (Lease, bool) {
	key := str(item["leaseKey"])
	if key == "" || str(item["entityType"]) == workerMetricStats {
		return Lease{}, false
	}
	l := Lease{
		Key: key, ShardID: key, Owner: str(item["leaseOwner"]), Counter: num(item["leaseCounter"]),
		Checkpoint: str(item["checkpoint"]), SubSequence: num(item["checkpointSubSequenceNumber"]),
		OwnerSwitches: num(item["ownerSwitchesSinceCheckpoint"]),
		Parents:       strs(item["parentShardId"]),
		// 3.x lists childShardIds; 2.x wrote one childShardId.
		Children: append(strs(item["childShardIds"]), strs(item["childShardId"])...),
	}
	l.Stream, l.ShardID = splitKey(key)
	return l, true
}

// splitKey reads a multi-stream lease key,
// "account:stream:creationEpoch:shardId"; a single-stream key is the shard
// id alone.
//
// Worked example: "123456789012:orders:1700000000:shardId-000000000001"
// is stream "orders", shard "shardId-000000000001".
func splitKey(key string) (stream, shard string) {
	parts := strings.Split(key, ":")
	if len(parts) != 4 {
		return "", key
	}
	return parts[1], parts[3]
}

func str(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func num(v types.AttributeValue) int64 {
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(n.Value, 10, 64)
		return i
	}
	return 0
}

// strs reads a string set, or a lone string, as a sorted list.
func strs(v types.AttributeValue) []string {
	switch v := v.(type) {
	case *types.AttributeValueMemberSS:
		return slices.Sorted(slices.Values(v.Value))
	case *types.AttributeValueMemberS:
		if v.Value != "" {
			return []string{v.Value}
		}
	}
	return nil
}

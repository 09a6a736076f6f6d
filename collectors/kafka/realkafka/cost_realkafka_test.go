package realkafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestPollCost is collectors/kafka's test of the same name on the one real
// node: a poll's requests do not grow with groups × partitions, and
// unchanged committed offsets are never fetched twice.
func TestPollCost(t *testing.T) {
	t.Parallel()
	// ListGroups, DescribeGroups, OffsetFetch and three ListOffsets reach
	// the broker once. Metadata comes on top: the poll's own request and
	// franz-go's refreshes of the cache its sharded requests route by,
	// each time that is older than the client's metadata min age (10ms
	// here, so a slow machine sees one or two).
	const maxPerPoll, maxMetadata = 6, 3
	b := realBroker(t)
	topic := b.topic(48)
	b.produce(topic, 48, 3)
	offsets := map[int32]int64{}
	for p := range int32(48) {
		offsets[p] = 1
	}
	var groups []string
	for range 20 {
		g := testenv.Unique("cost")
		b.commit(g, topic, offsets)
		groups = append(groups, g)
	}
	s := b.source(false, groups...)
	if snap := poll(t, s); len(snap.Groups) != 20 || snap.Groups[0].TotalLag() != 48*2 {
		t.Fatalf("groups %d, first lag %d; want 20 groups lagging %d", len(snap.Groups), snap.Groups[0].TotalLag(), 48*2)
	}
	first, fetches, metadata := s.Requests(-1), s.Requests(int16(kmsg.Fetch)), s.Requests(int16(kmsg.Metadata))
	if fetches > 1 {
		t.Errorf("first poll sent %d fetch requests, want 1", fetches)
	}
	before := map[int16]int64{}
	for k := range int16(100) {
		before[k] = s.Requests(k)
	}
	time.Sleep(20 * time.Millisecond) // past the metadata min age the source was built with
	poll(t, s)
	md := s.Requests(int16(kmsg.Metadata)) - metadata
	if n := s.Requests(-1) - first - md; n > maxPerPoll || md > maxMetadata {
		t.Errorf("a poll sent %d requests and %d metadata requests, want ≤ %d and ≤ %d", n, md, maxPerPoll, maxMetadata)
		for k := range int16(100) {
			if n := s.Requests(k) - before[k]; n > 0 {
				t.Logf("%s: %d", kmsg.NameForKey(k), n)
			}
		}
	}
	if n := s.Requests(int16(kmsg.Fetch)) - fetches; n != 0 {
		t.Errorf("second poll sent %d fetch requests; cached timestamps should need none", n)
	}
}

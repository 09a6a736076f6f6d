package kafka

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/queue"
)

// retentionRefresh is how long a topic's retention settings are used
// before they are read again. Retention changes rarely and by hand; a
// few minutes' delay in seeing a change costs less than a DescribeConfigs
// of every consumed topic at each poll. A topic not yet read is read at
// the next poll whatever the age of the rest.
const retentionRefresh = 5 * time.Minute

// topicRetention is what deletes a topic's records: retention.ms (-1 for
// none) and retention.bytes (-1 for none, per partition), acting only when
// cleanup.policy includes delete. A compacted-only topic never deletes a
// record for its age or size.
type topicRetention struct {
	ms, bytes int64
	deletes   bool
}

// retentionConfigs are the topic configs headroom reads: only these, so a
// DescribeConfigs of thousands of topics stays small.
var retentionConfigs = []string{"retention.ms", "retention.bytes", "cleanup.policy"}

// laggingTopics are the topics groups have lag on: those whose retention
// headroom needs.
func laggingTopics(groups []queue.ConsumerGroup) []string {
	var topics []string
	seen := map[string]bool{}
	for gi := range groups {
		for _, p := range groups[gi].Partitions {
			if p.Lag > 0 && !seen[p.Topic] {
				seen[p.Topic] = true
				topics = append(topics, p.Topic)
			}
		}
	}
	return topics
}

// retentions returns the retention of each of topics, from the cache when
// it is fresh. A failed read is logged and leaves the topics it concerns
// without retention (their headroom unknown): headroom must never cost
// the poll its lag.
func (s *Source) retentions(ctx context.Context, topics []string, now time.Time) map[string]topicRetention {
	if len(topics) == 0 {
		return nil
	}
	stale := now.Sub(s.retentionRead) >= retentionRefresh
	var want []string
	for _, t := range topics {
		if _, ok := s.retention[t]; stale || !ok {
			want = append(want, t)
		}
	}
	if len(want) > 0 {
		got, err := s.describeRetention(ctx, want)
		if err != nil {
			s.log.Warn("read topic retention", "topics", len(want), "err", err)
		}
		if stale && err == nil {
			s.retention, s.retentionRead = map[string]topicRetention{}, now
		}
		for t, r := range got {
			s.retention[t] = r
		}
	}
	return s.retention
}

// describeRetention reads the retention configs of topics with one
// DescribeConfigs request. Topics the broker answered with an error
// (deleted since, not authorized) are left out.
func (s *Source) describeRetention(ctx context.Context, topics []string) (map[string]topicRetention, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = t
		r.ConfigNames = retentionConfigs
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return nil, fmt.Errorf("describe configs of %d topics: %w", len(topics), err)
	}
	out := make(map[string]topicRetention, len(resp.Resources))
	for _, r := range resp.Resources {
		if kerr.ErrorForCode(r.ErrorCode) != nil {
			continue
		}
		out[r.ResourceName] = parseRetention(r.Configs)
	}
	return out, nil
}

// parseRetention reads a topic's retention from its configs. A missing or
// unparsable value counts as no limit: headroom is then unknown, never
// made up.
func parseRetention(cs []kmsg.DescribeConfigsResponseResourceConfig) topicRetention {
	r := topicRetention{ms: -1, bytes: -1, deletes: true}
	for _, c := range cs {
		if c.Value == nil {
			continue
		}
		v := *c.Value
		switch c.Name {
		case "retention.ms":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				r.ms = n
			}
		case "retention.bytes":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				r.bytes = n
			}
		case "cleanup.policy":
			r.deletes = strings.Contains(v, "delete")
		}
	}
	return r
}

// groupTP names one group's position on one partition.
type groupTP struct {
	group string
	tp
}

// fillHeadroom sets each group's retention headroom: over its lagging
// partitions on topics that delete, the soonest of
//
//   - retention.ms less the age of the next record the group reads (Kafka
//     deletes a whole segment once its newest record is that old, so the
//     record may live a little longer: this is the earliest it may go);
//   - with retention.bytes, the gap between the log start and the group's
//     next offset over the rate at which the log start gains on it (the
//     log start's rate less the group's commit rate), from the trend
//     across polls: a projection, marked as one.
//
// A partition whose lag seconds are still being read has no age yet; the
// poll that reads them gives its headroom.
//
// ret is the retention of the lagging topics (retentions), read while the
// poll read lag seconds.
func (s *Source) fillHeadroom(snap *queue.Snapshot, offsets offsetTable, ret map[string]topicRetention, now time.Time) {
	if len(ret) == 0 {
		return
	}
	starts := s.startRates(offsets, ret, now)
	commits := make(map[groupTP]*queue.Trend, len(s.commits))
	for gi := range snap.Groups {
		g := &snap.Groups[gi]
		for pi := range g.Partitions {
			p := &g.Partitions[pi]
			r, ok := ret[p.Topic]
			if p.Lag == 0 || !ok || !r.deletes {
				continue
			}
			h := partitionHeadroom(p, r, starts, s.commits, commits, g.Name, now)
			if h.Known {
				h.Where = p.Topic + "/" + strconv.Itoa(int(p.Partition))
			}
			g.Headroom = g.Headroom.Sooner(h)
		}
	}
	s.commits = commits
}

// partitionHeadroom is one group-partition's headroom (see fillHeadroom).
// It moves the partition's commit trend from past into next.
func partitionHeadroom(p *queue.PartitionLag, r topicRetention, starts map[tp]float64, past, next map[groupTP]*queue.Trend, group string, now time.Time) queue.Headroom {
	var h queue.Headroom
	if r.ms > 0 && !p.LagSecondsPending {
		h = queue.AgeHeadroom(time.Duration(r.ms)*time.Millisecond, time.Duration(p.LagSeconds*float64(time.Second)), "retention.ms")
	}
	if r.bytes < 0 {
		return h
	}
	k := groupTP{group, tp{p.Topic, p.Partition}}
	t := past[k]
	if t == nil {
		t = &queue.Trend{}
	}
	next[k] = t
	read, ok := t.Observe(now, nextOffset(p))
	start, known := starts[k.tp]
	if !ok || !known {
		return h
	}
	limit := "retention.bytes " + queue.HumanBytes(r.bytes)
	return h.Sooner(queue.ProjectedHeadroom(nextOffset(p)-p.LogStart, start-max(read, 0), limit))
}

// startRates observes the log start of every partition of a topic with
// retention.bytes and returns the rate of those whose rate is known.
func (s *Source) startRates(offsets offsetTable, ret map[string]topicRetention, now time.Time) map[tp]float64 {
	rates := map[tp]float64{}
	next := make(map[tp]*queue.Trend, len(s.starts))
	for topic, ps := range offsets {
		if r, ok := ret[topic]; !ok || !r.deletes || r.bytes < 0 {
			continue
		}
		for p, o := range ps {
			k := tp{topic, p}
			t := s.starts[k]
			if t == nil {
				t = &queue.Trend{}
			}
			next[k] = t
			if rate, ok := t.Observe(now, o.LogStart); ok {
				rates[k] = rate
			}
		}
	}
	s.starts = next
	return rates
}

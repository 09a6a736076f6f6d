package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web"
)

// ownedSources keeps the sources this replica's shard polls. The others
// are built (nothing is dialled until a poll) and closed with the rest,
// so sharding filters one list instead of every broker's config section.
func ownedSources(shard config.Shard, sources []collectors.Source) []collectors.Source {
	if !shard.Sharded() {
		return sources
	}
	out := sources[:0:0]
	for _, s := range sources {
		if shard.Owns(string(s.Broker()), s.Cluster()) {
			out = append(out, s)
		}
	}
	return out
}

// placement is one configured cluster (or outbox source) and the shard
// that polls it.
type placement struct {
	broker  queue.Broker
	cluster string
	owner   int
}

// placements are every configured cluster of every registered broker, in
// registry and config order, with its owner.
func placements(cfg *config.Config) []placement {
	var out []placement
	for _, b := range registry {
		for _, name := range b.section(cfg) {
			out = append(out, placement{b.name, name, cfg.Shard.Owner(string(b.name), name)})
		}
	}
	return out
}

// printShard writes check's shard line: which clusters this replica polls
// and which it leaves to the others. Nothing is written unsharded.
func printShard(cfg *config.Config, w io.Writer) {
	if !cfg.Shard.Sharded() {
		return
	}
	var owned, others []string
	for _, p := range placements(cfg) {
		name := fmt.Sprintf("%s:%s", p.broker, p.cluster)
		if p.owner == cfg.Shard.Index {
			owned = append(owned, name)
		} else {
			others = append(others, fmt.Sprintf("%s (shard %d)", name, p.owner))
		}
	}
	fmt.Fprintf(w, "shard %s: polls %s\n", cfg.Shard, orNone(owned))
	fmt.Fprintf(w, "     left to other shards: %s\n", orNone(others))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// shardOwners answers the web server's question for a page of a cluster
// this replica does not poll: which shard does, and where it answers. It
// knows only configured clusters, so a mistyped name stays a 404.
func shardOwners(cfg *config.Config) func(queue.Broker, string) (web.ShardPlace, bool) {
	if !cfg.Shard.Sharded() {
		return nil
	}
	owner := map[clusterKey]int{}
	for _, p := range placements(cfg) {
		if p.owner != cfg.Shard.Index {
			owner[clusterKey{p.broker, p.cluster}] = p.owner
		}
	}
	return func(b queue.Broker, cluster string) (web.ShardPlace, bool) {
		i, ok := owner[clusterKey{b, cluster}]
		return web.ShardPlace{Index: i, Count: cfg.Shard.Count, Base: cfg.Shard.URL(i)}, ok
	}
}

// clusterKey names one configured cluster of one broker.
type clusterKey struct {
	broker  queue.Broker
	cluster string
}

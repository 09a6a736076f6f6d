package config

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// ShardEnv is the environment variable that sets the shard, winning over
// the file's shard section: "I/N", or "auto/N" to take I from the ordinal
// at the end of $HOSTNAME modulo N (with N=3, StatefulSet pod
// "queuewatch-2" is shard 2 and "queuewatch-5" a second pod of shard 2),
// so a Helm chart needs no entrypoint script to tell each replica its
// index, and pods beyond the first N are standbys of the shard.
const ShardEnv = "QUEUEWATCH_SHARD"

// Shard splits the configured clusters across replicas: a replica polls
// only the clusters (of every broker, and outbox sources) whose
// "broker/cluster" hashes to its index. Count 1, the default, is one
// replica polling everything.
type Shard struct {
	Index int `yaml:"index"`
	Count int `yaml:"count"`
	// PeerURL is where the replica of another shard answers, with {index}
	// in place of its index ("http://queuewatch-{index}.queuewatch:8080"):
	// a page for a cluster another shard polls links there. Empty: the
	// page names the shard only.
	PeerURL string `yaml:"peer_url"`
}

// Owner is the index of the shard that polls cluster of broker: FNV-1a of
// "broker/cluster" modulo the count. The hash is stable across versions
// and processes, so every replica agrees without talking to the others.
// Example: with count 3, "kafka/prod" is hashed once and every replica
// computes the same index for it.
func (s Shard) Owner(broker, cluster string) int {
	if s.Count <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(broker + "/" + cluster))
	return int(h.Sum64() % uint64(s.Count))
}

// Owns reports whether this replica polls cluster of broker.
func (s Shard) Owns(broker, cluster string) bool {
	return s.Owner(broker, cluster) == s.Index
}

// Sharded reports whether clusters are split across replicas.
func (s Shard) Sharded() bool { return s.Count > 1 }

// URL is the peer URL of shard index, or "" without shard.peer_url.
func (s Shard) URL(index int) string {
	if s.PeerURL == "" {
		return ""
	}
	return strings.ReplaceAll(s.PeerURL, "{index}", strconv.Itoa(index))
}

// String is "I/N", as in QUEUEWATCH_SHARD.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// applyShardEnv sets the shard from QUEUEWATCH_SHARD when it is set. The
// error says what the variable holds and what it should.
func (c *Config) applyShardEnv(lookup func(string) (string, bool)) error {
	v, ok := lookup(ShardEnv)
	if !ok || v == "" {
		return nil
	}
	idx, cnt, found := strings.Cut(v, "/")
	if !found {
		return fmt.Errorf("%s=%q: want I/N (such as 0/3) or auto/N", ShardEnv, v)
	}
	n, err := strconv.Atoi(cnt)
	if err != nil {
		return fmt.Errorf("%s=%q: count %q is not a number", ShardEnv, v, cnt)
	}
	i, err := shardIndex(idx, lookup)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", ShardEnv, v, err)
	}
	if idx == "auto" && n > 0 {
		i %= n
	}
	c.Shard.Index, c.Shard.Count = i, n
	return nil
}

// shardIndex reads the index part of QUEUEWATCH_SHARD: a number, or auto
// for the ordinal that ends $HOSTNAME ("queuewatch-2" → 2).
func shardIndex(s string, lookup func(string) (string, bool)) (int, error) {
	if s != "auto" {
		i, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("index %q is neither a number nor auto", s)
		}
		return i, nil
	}
	host, _ := lookup("HOSTNAME")
	dash := strings.LastIndexByte(host, '-')
	i, err := strconv.Atoi(host[dash+1:])
	if dash < 0 || err != nil {
		return 0, fmt.Errorf("auto needs HOSTNAME ending in -<ordinal> (a StatefulSet pod), got %q", host)
	}
	return i, nil
}

func (s *Shard) validate(p *problems) {
	if s.Count < 1 {
		p.add("shard.count", "must be at least 1, got %d", s.Count)
		return
	}
	if s.Index < 0 || s.Index >= s.Count {
		p.add("shard.index", "must be in 0..%d (shard.count %d), got %d", s.Count-1, s.Count, s.Index)
	}
	if s.PeerURL != "" && !strings.Contains(s.PeerURL, "{index}") {
		p.add("shard.peer_url", "must contain {index}, where a shard's index goes, got %q", s.PeerURL)
	}
}

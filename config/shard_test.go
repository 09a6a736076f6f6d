package config

import (
	"strings"
	"testing"
)

func TestShardFromFileAndEnv(t *testing.T) {
	const file = "shard:\n  index: 1\n  count: 3\n  peer_url: http://qw-{index}.qw:8080\n"
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	tests := []struct {
		name    string
		data    string
		env     map[string]string
		want    Shard
		wantErr string
	}{
		{name: "default is one shard", data: "", want: Shard{Index: 0, Count: 1}},
		{name: "file", data: file, want: Shard{Index: 1, Count: 3, PeerURL: "http://qw-{index}.qw:8080"}},
		{name: "env wins", data: file, env: map[string]string{ShardEnv: "2/4"}, want: Shard{Index: 2, Count: 4, PeerURL: "http://qw-{index}.qw:8080"}},
		{name: "auto takes the pod ordinal", env: map[string]string{ShardEnv: "auto/3", "HOSTNAME": "queuewatch-2"}, want: Shard{Index: 2, Count: 3}},
		{name: "auto past the count is a standby of ordinal mod count", env: map[string]string{ShardEnv: "auto/3", "HOSTNAME": "queuewatch-4"}, want: Shard{Index: 1, Count: 3}},
		{name: "auto with zero count", env: map[string]string{ShardEnv: "auto/0", "HOSTNAME": "queuewatch-4"}, wantErr: "shard.count: must be at least 1, got 0"},
		{name: "auto without ordinal", env: map[string]string{ShardEnv: "auto/3", "HOSTNAME": "laptop"}, wantErr: `QUEUEWATCH_SHARD="auto/3": auto needs HOSTNAME ending in -<ordinal> (a StatefulSet pod), got "laptop"`},
		{name: "env not I/N", env: map[string]string{ShardEnv: "3"}, wantErr: `QUEUEWATCH_SHARD="3": want I/N (such as 0/3) or auto/N`},
		{name: "env bad count", env: map[string]string{ShardEnv: "0/x"}, wantErr: `count "x" is not a number`},
		{name: "env index out of range", env: map[string]string{ShardEnv: "3/3"}, wantErr: "shard.index: must be in 0..2 (shard.count 3), got 3"},
		{name: "index out of range", data: "shard: {index: 3, count: 3}\n", wantErr: "q.yml:1: shard.index: must be in 0..2 (shard.count 3), got 3"},
		{name: "negative index", data: "shard: {index: -1, count: 2}\n", wantErr: "shard.index: must be in 0..1 (shard.count 2), got -1"},
		{name: "zero count", data: "shard: {count: 0}\n", wantErr: "q.yml:1: shard.count: must be at least 1, got 0"},
		{name: "peer url without index", data: "shard: {count: 2, peer_url: 'http://qw:8080'}\n", wantErr: "shard.peer_url: must contain {index}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse([]byte(tt.data), "q.yml", env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Shard != tt.want {
				t.Errorf("shard = %+v, want %+v", c.Shard, tt.want)
			}
		})
	}
}

// TestShardOwnerIsStable pins the hash: replicas of different versions
// must agree on who polls a cluster, so a change here is a breaking one.
func TestShardOwnerIsStable(t *testing.T) {
	s := Shard{Count: 3}
	got := map[string]int{}
	for _, c := range []string{"kafka/prod", "kafka/staging", "rabbitmq/prod", "nats/edge", "outbox/orders"} {
		b, name, _ := strings.Cut(c, "/")
		got[c] = s.Owner(b, name)
	}
	want := map[string]int{}
	for c := range got {
		want[c] = int(fnv1a(c) % 3)
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("owner of %s = %d, want %d", c, got[c], w)
		}
	}
	if (Shard{Count: 1}).Owner("kafka", "x") != 0 {
		t.Error("one shard must own everything")
	}
}

// fnv1a is FNV-1a 64 written out, so the test does not trust hash/fnv
// to be what the docs promise.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

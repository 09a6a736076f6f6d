// Command loadcluster runs an in-process Kafka-protocol cluster seeded with
// queuewatch's target workload (200 topics × 12 partitions, 500 groups × 3
// topics) until interrupted, and writes a queuewatch config pointing at it.
// It is how the soak numbers in docs/performance.md are measured:
//
//	go run ./internal/kafkaload/loadcluster -config /tmp/load.yaml &
//	queuewatch serve --config /tmp/load.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/queuewatch/queuewatch/internal/kafkaload"
)

func main() {
	path := flag.String("config", "load.yaml", "queuewatch config to write")
	listen := flag.String("listen", "127.0.0.1:8090", "listen address written into the config")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := kafkaload.Start(ctx, kafkaload.Target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadcluster:", err)
		os.Exit(1)
	}
	defer c.Close()
	cfg := fmt.Sprintf("listen: %s\npoll_interval: 15s\nkafka:\n  - name: load\n    brokers: [%s]\n",
		*listen, strings.Join(c.ListenAddrs(), ", "))
	if err := os.WriteFile(*path, []byte(cfg), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "loadcluster:", err)
		os.Exit(1)
	}
	fmt.Printf("seeded %d group-partitions; config written to %s\n", kafkaload.Target.GroupPartitions(), *path)
	<-ctx.Done()
}

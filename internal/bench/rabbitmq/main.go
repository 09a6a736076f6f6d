// Command rabbitmq measures queuewatch's RabbitMQ poll side by side with a
// scrape of rabbitmq_prometheus's detailed queue families, in one run on
// one node with 10,000 queues in ONE vhost (the worst case for the
// management API's listing: RabbitMQ 3.10 rebuilds the vhost's list for
// every page).
//
// It creates vhost qw-bench-10k (9,800 classic queues, 200 quorum, a
// dead-letter policy on 500 of them, one in 18 holding a message, one
// DLQ), then measures, one after the other so none takes CPU from another:
//
//   - queuewatch's first poll (pages: the vhost's size is not known yet)
//     and its steady polls, by path: a management listing (one streamed
//     request, every fifth poll) or rabbitmq_prometheus alone (the others),
//     and the mean poll over a cycle of 5, 10 and 20 polls (list_every);
//   - the management API's queue listing alone: unpaged, one page of 500,
//     and unpaged with the topology columns only;
//   - the scrape /metrics/detailed?vhost=…&family=queue_coarse_metrics&family=queue_consumer_count
//     and, for comparison, the same with family=queue_metrics;
//
// each with its wall time, queuewatch's own CPU (getrusage), the node's
// CPU (beam.smp's utime+stime from /proc, less its idle rate measured
// first) and the bytes on the wire (through a counting TCP proxy). It
// prints the ratios of queuewatch's CPU, wall time and node CPU to the
// plugin scrape's. The vhost is deleted at the end.
//
// Usage:
//
//	go run ./internal/bench/rabbitmq [-queues 10000] [-rounds 5] [-keep]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"
)

func main() {
	queues := flag.Int("queues", 10_000, "queues in the one vhost")
	rounds := flag.Int("rounds", 5, "steady polls and scrapes measured")
	keep := flag.Bool("keep", false, "keep the vhost afterwards")
	flag.Parse()
	log.SetFlags(log.Ltime)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := run(ctx, *queues, *rounds, *keep); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func run(ctx context.Context, queues, rounds int, keep bool) error {
	node, err := findBeam()
	if err != nil {
		return err
	}
	adm := newAdmin()
	if !keep {
		defer func() {
			if err := adm.deleteVHost(benchVHost); err != nil {
				log.Printf("delete vhost: %v", err)
			}
		}()
	}
	start := time.Now()
	if err := seed(ctx, adm, queues); err != nil {
		return err
	}
	log.Printf("seeded %d queues in %s", queues, time.Since(start).Round(time.Second))
	r, err := measure(ctx, node, rounds)
	if err != nil {
		return err
	}
	r.print(os.Stdout, queues)
	fmt.Println()
	return nil
}

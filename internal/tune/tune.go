// Package tune holds queuewatch's Go runtime defaults, so that the binary
// and the benchmarks that stand for it run alike.
package tune

import (
	"os"
	"runtime"
	"runtime/debug"
)

// steadyGC is the GOGC queuewatch runs with.
const steadyGC = 50

// Apply sets the runtime defaults for command (a queuewatch subcommand).
// A GOGC or GOMAXPROCS in the environment still wins.
func Apply(command string) {
	// queuewatch's live heap is small (about 10 MiB for 18,000
	// group-partitions) but each poll and each metrics exposition make
	// short-lived garbage of several times that. At the default GOGC=100
	// the heap grows to twice its peak; 50 keeps RSS near the live set for
	// little CPU, since collecting a small live heap is cheap.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(steadyGC)
		// serve once started at GOGC=200 under a soft limit until the
		// first data was out, to spend less CPU on the first poll's
		// garbage. Measured on 2026-12-06 against kminion v2.3.5 in the
		// same runs (18,000 group-partitions): at 200 it peaked at 63-67
		// MiB RSS, 1.02-1.04x kminion's; at 50 throughout, 59-62 MiB
		// (0.89-0.90x) for 0.16-0.18 s of CPU to ready (0.12-0.16 s at
		// 200; kminion 0.25-0.31 s), and at 100,000 0.74 s (0.44x). So
		// GOGC=50 from the start.
	}
	// One core. queuewatch shares machines with the brokers it watches and
	// spends its time waiting on them. With a second core, a replay's AMQP
	// reader, consumer and publisher goroutines hand work to each other
	// across threads: on the 2-core benchmark machine next to RabbitMQ that
	// cost queuewatch 76% more CPU for the same 100,000 messages (and the
	// broker 19% more) and made the replay 18% slower. The demo keeps every
	// core: it runs a Kafka cluster and its producers and consumers
	// in-process.
	if os.Getenv("GOMAXPROCS") == "" && command != "demo" {
		runtime.GOMAXPROCS(1)
	}
}

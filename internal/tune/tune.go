// Package tune holds queuewatch's Go runtime defaults, so that the binary
// and the benchmarks that stand for it run alike.
package tune

import (
	"os"
	"runtime"
	"runtime/debug"
)

// Apply sets the runtime defaults for command (a queuewatch subcommand).
// A GOGC or GOMAXPROCS in the environment still wins.
func Apply(command string) {
	// queuewatch's live heap is small (about 10 MiB for 18,000
	// group-partitions) but each poll and each metrics exposition make
	// short-lived garbage of several times that. At the default GOGC=100
	// the heap grows to twice its peak; 50 keeps RSS near the live set for
	// little CPU, since collecting a small live heap is cheap.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
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

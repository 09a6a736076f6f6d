// Package tune holds queuewatch's Go runtime defaults, so that the binary
// and the benchmarks that stand for it run alike.
package tune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
)

// steadyGC is GOGC once running; startGC is GOGC before that, and
// startLimit bounds the heap then, unless a container allows less (see
// limitFor).
const (
	steadyGC   = 50
	startGC    = 200
	startLimit = 128 << 20
)

// cgroupLimits are the files that hold a container's memory limit, cgroup
// v2 first.
var cgroupLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// limitFor returns the start-up heap limit: startLimit, or a quarter of the
// container's memory limit when that is smaller, so that a small container
// is never pushed towards its OOM killer by the start-up mode.
func limitFor(files []string) int64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return min(startLimit, n/4)
		}
		break // "max": no limit
	}
	return startLimit
}

// starting is set while Apply's start-up mode lasts.
var starting atomic.Bool

// Starting reports whether Apply's start-up mode still lasts.
func Starting() bool { return starting.Load() }

// Started ends the start-up mode Apply set for serve, once every source's
// first data is out; elsewhere it does nothing.
func Started() {
	if starting.CompareAndSwap(true, false) {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(steadyGC)
	}
}

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
		// Until the first data is out, serve collects garbage at GOGC=200,
		// under a soft limit of startLimit. The first poll of a large
		// cluster allocates several times its live set, and at GOGC=50 the
		// collector ran through it a dozen times: a third of the CPU a
		// restart spent before every group's lag was in /metrics. With no
		// collection at all (GOGC off below the limit) a 15,000
		// group-partition start peaked at 73-77 MiB RSS, above kminion's
		// 68-74 MiB in the same run; at 200 it peaked at 58-62 MiB for
		// 0.09-0.13 s of CPU to ready (0.07 s with none, 0.13 s at 50).
		if command == "serve" && os.Getenv("GOMEMLIMIT") == "" {
			debug.SetGCPercent(startGC)
			debug.SetMemoryLimit(limitFor(cgroupLimits))
			starting.Store(true)
		}
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

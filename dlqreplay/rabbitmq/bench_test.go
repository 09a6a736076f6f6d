package rabbitmq

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/internal/tune"
)

var benchMessages = benchCount()

// BenchmarkReplayVersusShovel replays 100,000 1 KiB messages from a DLQ to
// its source queue, then moves as many with a dynamic shovel (ack-mode
// on-confirm, src-delete-after queue-length), and reports both rates and
// the CPU each took: queuewatch's and the broker's. queuewatch runs with its
// shipped runtime defaults. Run with -benchtime=1x.
func BenchmarkReplayVersusShovel(b *testing.B) {
	tune.Apply("replay") // for the whole test binary: this is its only benchmark
	w := newWorld(b, worldOpts{})
	w.declare("shovel.dlq", nil)
	w.declare("shovel.dest", nil)
	body := bytes.Repeat([]byte("x"), 1024)
	fill := func(q string) {
		msgs := make([]amqp.Publishing, benchMessages)
		for i := range msgs {
			msgs[i] = deadLetter("m"+strconv.Itoa(i), body, "rejected", nil)
		}
		w.publish("", q, msgs...)
	}
	ctx := ctxT(b, 10*time.Minute)
	for b.Loop() {
		fill("work.dlq")
		start, cpu, broker := time.Now(), processCPU(b), brokerCPU()
		r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: -1})
		if err != nil || r.Job.Progress.Moved != int64(benchMessages) {
			b.Fatalf("replay: %+v %v", r.Job, err)
		}
		replay := time.Since(start)
		b.ReportMetric((processCPU(b) - cpu).Seconds(), "replay_queuewatch_cpu_s")
		b.ReportMetric((brokerCPU() - broker).Seconds(), "replay_broker_cpu_s")
		if w.depth("work") != benchMessages || w.depth("work.dlq") != 0 {
			b.Fatalf("work %d, dlq %d", w.depth("work"), w.depth("work.dlq"))
		}

		fill("shovel.dlq")
		start, broker = time.Now(), brokerCPU()
		uri := "amqp:///" + url.PathEscape(w.vh)
		w.a.Do(http.MethodPut, testenv.APIPath("parameters", "shovel", w.vh, "bench"), map[string]any{"value": map[string]any{
			"src-protocol": "amqp091", "src-uri": uri, "src-queue": "shovel.dlq",
			"dest-protocol": "amqp091", "dest-uri": uri, "dest-queue": "shovel.dest",
			"ack-mode": "on-confirm", "src-delete-after": "queue-length",
		}})
		for w.depth("shovel.dest") < benchMessages {
			if time.Since(start) > 5*time.Minute {
				b.Fatal("shovel too slow")
			}
			time.Sleep(5 * time.Millisecond)
		}
		shovel := time.Since(start)
		b.ReportMetric((brokerCPU() - broker).Seconds(), "shovel_broker_cpu_s")
		b.ReportMetric(float64(benchMessages)/replay.Seconds(), "replay_msg/s")
		b.ReportMetric(float64(benchMessages)/shovel.Seconds(), "shovel_msg/s")
		b.Logf("replay %v (%.0f msg/s), shovel %v (%.0f msg/s)", replay, float64(benchMessages)/replay.Seconds(), shovel, float64(benchMessages)/shovel.Seconds())
		w.a.Do(http.MethodDelete, testenv.APIPath("parameters", "shovel", w.vh, "bench"), nil)
		for _, q := range []string{"work", "shovel.dest"} {
			if _, err := w.ch.QueuePurge(q, false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchCount is 100,000, or QW_BENCH_MESSAGES for quicker runs.
func benchCount() int {
	if n, err := strconv.Atoi(os.Getenv("QW_BENCH_MESSAGES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// processCPU is the CPU time of this process: queuewatch's side of a replay.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// brokerCPU is the CPU time of the local RabbitMQ (beam.smp), or 0 when it
// cannot be read (another machine, no /proc).
func brokerCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, []byte("(beam.smp)")) {
			continue
		}
		// utime and stime, in clock ticks (100 per second on Linux), are
		// the 12th and 13th fields after the parenthesised command.
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return 0
}

package kafka

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// BenchmarkReplay replays 100,000 1 KiB records from a dead-letter topic on
// kfake in transactions that also commit the cursor. Run with -benchtime=1x.
func BenchmarkReplay(b *testing.B) {
	const n = 100_000
	w := newWorld(b, 0)
	be, err := New(Options{Cluster: testenv.KafkaCluster(b, "k", w.c.ListenAddrs())})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	svc, err := dlqreplay.New(dlqreplay.Options{Store: w.store, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	body := bytes.Repeat([]byte("x"), 1024)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for b.Loop() {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			r := springDLT(int32(i%2), "k"+strconv.Itoa(i), i, "java.lang.IllegalStateException")
			r.Value = body
			recs[i] = r
		}
		if err := w.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		r, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: -1})
		if err != nil || r.Job.Progress.Moved != n {
			b.Fatalf("replay: %+v %v", r.Job, err)
		}
		el := time.Since(start)
		b.ReportMetric(n/el.Seconds(), "records/s")
		b.Logf("kafka replay of %d records: %v (%.0f records/s)", n, el, n/el.Seconds())
	}
}

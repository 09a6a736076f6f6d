package demo

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// produceTick is how often, in simulated time, the producer wakes up.
	produceTick = 100 * time.Millisecond
	// ratePeriod is the period of the sine wave each topic's rate follows.
	ratePeriod = 2 * time.Minute
	// rateSwing is the sine amplitude relative to the average rate.
	rateSwing = 0.5
	// failLogEvery limits produce failure logs to one per period.
	failLogEvery = 10 * time.Second
)

// runProducer produces steady traffic to the business topics until ctx ends.
func (d *Demo) runProducer(ctx context.Context, log *slog.Logger) error {
	cl, err := d.newClient(log)
	if err != nil {
		return err
	}
	defer cl.Close()

	// Only the first failure per failLogEvery is logged; a broker hiccup
	// would otherwise log once per record.
	var failed atomic.Int64
	done := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil && !errors.Is(err, kgo.ErrClientClosed) && failed.Add(1) == 1 {
			log.Warn("produce failed", "err", err)
		}
	}
	owed := make([]float64, len(produceRates))
	start := time.Now()
	lastReset := start
	ticker := time.NewTicker(d.scale(produceTick))
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
		if time.Since(lastReset) >= failLogEvery {
			failed.Store(0)
			lastReset = time.Now()
		}
		simulated := time.Since(start).Seconds() * d.speed
		for i, tr := range produceRates {
			owed[i] += rateAt(tr, simulated) * produceTick.Seconds()
			for ; owed[i] >= 1; owed[i]-- {
				cl.Produce(ctx, d.traffic.record(tr.topic, rand.Float64() < poisonRate), done)
			}
		}
	}
}

// rateAt is tr's rate in records per simulated second at simulated time t
// seconds: the average rate swung by a sine wave.
func rateAt(tr topicRate, t float64) float64 {
	return tr.rate * (1 + rateSwing*math.Sin(2*math.Pi*t/ratePeriod.Seconds()+tr.phase))
}

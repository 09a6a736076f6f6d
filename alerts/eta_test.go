package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestEvaluateETA(t *testing.T) {
	tests := []struct {
		name   string
		polls  [][]queue.PartitionLag
		want   queue.ETA // the verdict; rates in rates
		wantUI string
		// rates are the consume and produce rates (messages/s), when the
		// case checks them.
		rates []float64
	}{
		{
			name: "caught up",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 100, 200)},
				{part("orders", 0, 300, 300)},
			},
			want:   queue.ETA{Known: true},
			wantUI: "caught up",
		},
		{
			name:   "caught up needs no history",
			polls:  [][]queue.PartitionLag{{part("orders", 0, 300, 300)}},
			want:   queue.ETA{Known: true},
			wantUI: "caught up",
		},
		{
			name:   "unknown with one observation",
			polls:  [][]queue.PartitionLag{{part("orders", 0, 100, 300)}},
			want:   queue.ETA{},
			wantUI: "—",
		},
		{
			// 600 produced per poll, 40 behind: reading as it arrives.
			name: "lag under one poll of production is caught up",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 960, 1000)},
				{part("orders", 0, 1560, 1600)},
			},
			want:   queue.ETA{Known: true},
			wantUI: "caught up",
		},
		{
			// Consumes 10/s while producers add 20/s.
			name: "falling behind",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 0, 1000)},
				{part("orders", 0, 600, 2200)},
			},
			want:   queue.ETA{Known: true, FallingBehind: true},
			wantUI: "falling behind",
			rates:  []float64{10, 20},
		},
		{
			name: "consuming exactly as fast as producing is falling behind",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 0, 1000)},
				{part("orders", 0, 600, 1600)},
			},
			want:   queue.ETA{Known: true, FallingBehind: true},
			wantUI: "falling behind",
		},
		{
			// orders/0 consumes 1,200 and gains 600 records in 2m (10/s vs
			// 5/s); orders/1 consumes 600 with nothing produced (5/s). The
			// group drains 15 − 5 = 10/s and has 2,400 to go: 240s.
			name: "finite, summed over partitions",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 0, 3000), part("orders", 1, 0, 600)},
				{part("orders", 0, 600, 3300), part("orders", 1, 300, 600)},
				{part("orders", 0, 1200, 3600), part("orders", 1, 600, 600)},
			},
			want:   queue.ETA{Known: true, In: 4 * time.Minute},
			wantUI: "4m",
			rates:  []float64{15, 5},
		},
		{
			// A partition first seen in the latest poll has no rate of its
			// own, but its lag still has to be drained.
			name: "new partition adds lag but no rate",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 0, 6000)},
				{part("orders", 0, 1200, 6000), part("orders", 1, 0, 1200)},
			},
			// orders/0 drains 20/s; 4,800 + 1,200 to go: 300s.
			want:   queue.ETA{Known: true, In: 5 * time.Minute},
			wantUI: "5m",
			rates:  []float64{20, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var history []*queue.Snapshot
			for i, parts := range tt.polls {
				history = append(history, snap(i, group(2, parts...)))
			}
			latest := history[len(history)-1]
			Evaluate(history[:len(history)-1], latest, StatusOptions{})
			got := latest.Groups[0].ETA
			if v := verdictOf(got); v != tt.want {
				t.Errorf("ETA %+v; want %+v", v, tt.want)
			}
			if got.Rates != (len(tt.polls) > 1) {
				t.Errorf("rates known %v after %d polls", got.Rates, len(tt.polls))
			}
			if tt.rates != nil && (got.ConsumeRate != tt.rates[0] || got.ProduceRate != tt.rates[1]) {
				t.Errorf("consume %v/s, produce %v/s; want %v", got.ConsumeRate, got.ProduceRate, tt.rates)
			}
			if ui := queue.HumanETA(got); ui != tt.wantUI {
				t.Errorf("HumanETA = %q; want %q", ui, tt.wantUI)
			}
		})
	}
}

func TestRatesETA(t *testing.T) {
	tests := []struct {
		name string
		r    rates
		lag  int64
		want queue.ETA
	}{
		{"worked example", rates{consume: 30, produce: 10, partitions: 2}, 2400, queue.ETA{Known: true, In: 2 * time.Minute}},
		{"no lag without history", rates{}, 0, queue.ETA{Known: true}},
		{"no history", rates{}, 10, queue.ETA{}},
		{"idle and stuck", rates{partitions: 1}, 10, queue.ETA{Known: true, FallingBehind: true}},
		{"too slow to ever matter", rates{consume: 1e-12, partitions: 1}, 1 << 40, queue.ETA{Known: true, FallingBehind: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdictOf(tt.r.eta(tt.lag)); got != tt.want {
				t.Errorf("eta(%d) = %+v; want %+v", tt.lag, got, tt.want)
			}
		})
	}
}

// verdictOf is e without its rates.
func verdictOf(e queue.ETA) queue.ETA {
	e.Rates, e.ConsumeRate, e.ProduceRate = false, 0, 0
	return e
}

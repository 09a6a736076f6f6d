package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
)

// TestSQSTwoReads: SQS alerts wait for the longest read interval of the
// configured accounts, never shorter than a poll, plus two polls.
func TestSQSTwoReads(t *testing.T) {
	for _, tc := range []struct {
		name     string
		poll     time.Duration
		accounts []time.Duration // sqs[].poll_interval, 0 for the default
		want     time.Duration
	}{
		{"no account: the default read", 15 * time.Second, nil, 4*time.Minute + 30*time.Second},
		{"default interval", 15 * time.Second, []time.Duration{0}, 4*time.Minute + 30*time.Second},
		{"the slowest account", 15 * time.Second, []time.Duration{time.Minute, 10 * time.Minute}, 10*time.Minute + 30*time.Second},
		{"read every poll", 30 * time.Second, []time.Duration{5 * time.Second}, 30*time.Second + time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.PollInterval = tc.poll
			for _, d := range tc.accounts {
				cfg.SQS = append(cfg.SQS, config.SQS{PollInterval: d})
			}
			if got := sqsTwoReads(newRuleParams(cfg)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

package queue

import (
	"testing"
	"time"
)

func TestQueueRetentionHeadroom(t *testing.T) {
	rates := ETA{Known: true, Rates: true, ProduceRate: 10, ConsumeRate: 6}
	for _, tc := range []struct {
		name string
		q    Queue
		want string
	}{
		{
			"ttl",
			Queue{Ready: 5, MessageTTL: time.Minute, HeadMessageAge: 20 * time.Second, HasHeadAge: true},
			"oldest pending message is deleted in 40s (message TTL 1m)",
		},
		{"ttl, head age unknown", Queue{Ready: 5, MessageTTL: time.Minute}, ""},
		{
			"max-length drop-head",
			Queue{Ready: 800, MaxLength: 1000, DropHead: true, ETA: rates},
			"oldest pending message is deleted in 50s at this rate (max-length 1,000, drop-head)",
		},
		{"max-length reject-publish", Queue{Ready: 800, MaxLength: 1000, ETA: rates}, ""},
		{"max-length, shrinking", Queue{Ready: 800, MaxLength: 1000, DropHead: true, ETA: ETA{Rates: true, ProduceRate: 6, ConsumeRate: 10}}, ""},
		{
			"both: the sooner",
			Queue{Ready: 800, MaxLength: 1000, DropHead: true, ETA: rates, MessageTTL: time.Minute, HeadMessageAge: 50 * time.Second, HasHeadAge: true},
			"oldest pending message is deleted in 10s (message TTL 1m)",
		},
		{"dead-letters", Queue{Ready: 5, HasDeadLetter: true, MessageTTL: time.Minute, HeadMessageAge: 20 * time.Second, HasHeadAge: true}, ""},
		{"empty", Queue{MessageTTL: time.Minute, HeadMessageAge: 20 * time.Second, HasHeadAge: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.RetentionHeadroom().Sentence("message"); got != tc.want {
				t.Errorf("%q\nwant %q", got, tc.want)
			}
		})
	}
}

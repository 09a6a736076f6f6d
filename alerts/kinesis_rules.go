package alerts

import (
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// kinesisAppPage is the UI page of one KCL application.
var kinesisAppPage = `/kinesis/` + pathLabel("cluster") + `/applications/` + pathLabel("application")

// kinesisSpecs are the KCL application alerts: stopped (no lease renewed),
// stalled (a checkpoint unmoved while behind), lag seconds over the group
// threshold (its overrides select applications by name), and open shards
// no worker reads. Each waits for two reads of the account (see
// kinesisTwoReads): the series change only when the account is read.
func kinesisSpecs(p ruleParams) []alertSpec {
	const who = `KCL application {{ $labels.application }} (account {{ $labels.cluster }})`
	apps := readers{
		status: "queuewatch_kinesis_application_status", identity: []string{"cluster", "application"}, name: "application", page: kinesisAppPage,
		backlog:     func(m string) string { return selector("queuewatch_kinesis_application_shards_behind", m) },
		lagSeconds:  func(m string) string { return selector("queuewatch_kinesis_application_lag_seconds", m) },
		backlogKind: lagHigh, lagSecondsKind: lagSecondsHigh,
	}
	reads := kinesisTwoReads(p)
	hr := queue.HumanDuration(reads)
	specs := []alertSpec{
		apps.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchKinesisApplicationStopped", severity: SeverityCritical,
			summary:     `KCL application {{ $labels.application }} has stopped`,
			description: who + ` renewed no lease between reads of its lease table for ` + hr + ` (or no worker holds one), with {{ $value | humanize }} shards behind: no worker runs.`,
		}),
		apps.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchKinesisApplicationStalled", severity: SeverityCritical,
			summary:     `KCL application {{ $labels.application }} is stalled`,
			description: who + ` holds its leases but a checkpoint has not moved for ` + hr + ` while newer records wait ({{ $value | humanize }} shards behind): a record processor is stuck or fails. The application page names the shard.`,
		}),
		apps.lagSecondsHigh(p, alertText{
			name: "QueuewatchKinesisApplicationLagHigh", severity: SeverityWarning,
			summary:     `KCL application {{ $labels.application }} is far behind`,
			description: `A checkpoint of ` + who + ` is {{ $value | humanizeDuration }} behind its shard's newest record, over the threshold of <threshold>.`,
		}),
		{
			name: "QueuewatchKinesisShardUnread", severity: SeverityWarning, kind: noThreshold, label: "application", page: kinesisAppPage,
			summary:     `KCL application {{ $labels.application }} reads not every shard`,
			description: who + ` has {{ $value | humanize }} open shards that no lease covers although their parents are done: no worker reads them. A worker that cannot create leases (DynamoDB permissions, a lease sync that fails) leaves them so.`,
			expr:        func(string, string) string { return `queuewatch_kinesis_application_unleased_shards > 0` },
		},
	}
	for i := range specs {
		specs[i].forDur = reads
	}
	return specs
}

// kinesisTwoReads is how long a Kinesis fact must hold to have been seen
// by two reads of its account: the longest read interval of the
// configured accounts (config.DefaultKinesisPollInterval without any),
// plus two polls. With the defaults: 1m + 30s = 1m30s.
func kinesisTwoReads(p ruleParams) time.Duration {
	read := max(config.DefaultKinesisPollInterval, p.cfg.PollInterval)
	if len(p.cfg.Kinesis) > 0 {
		read = 0
		for _, a := range p.cfg.Kinesis {
			read = max(read, a.Interval(), p.cfg.PollInterval)
		}
	}
	return read + p.twoPolls
}

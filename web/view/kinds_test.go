package view

import (
	"testing"

	"github.com/queuewatch/queuewatch/web/components"
)

func TestTabOf(t *testing.T) {
	for key, want := range map[string]string{
		"": components.TabGroups, "bogus": components.TabGroups, components.TabGroups: components.TabGroups,
		components.TabNATS: components.TabNATS, components.TabQueues: components.TabQueues, components.TabDLQs: components.TabDLQs,
		components.TabSQS: components.TabSQS, components.TabShare: components.TabShare, components.TabStreams: components.TabStreams, components.TabConnect: components.TabConnect,
		components.TabKinesis: components.TabKinesis,
		components.TabPubSub:  components.TabPubSub,
	} {
		if got := TabOf(key).Key; got != want {
			t.Errorf("TabOf(%q) = %q; want %q", key, got, want)
		}
	}
}

// TestKindsDeclareEverything: every reader kind has a tab with a label and
// a filter hint, sorts by its default and by status (the API's order), and
// a path that names one reader; no two kinds share a tab.
func TestKindsDeclareEverything(t *testing.T) {
	seen := map[string]bool{}
	for _, tab := range Tabs() {
		if tab.Label == "" || tab.Placeholder == "" || seen[tab.Key] {
			t.Errorf("tab %+v: no label or hint, or a second tab with its key", tab)
		}
		seen[tab.Key] = true
	}
	check := func(name string, sorts int, hasDefault, hasStatus bool, p Path) {
		if sorts == 0 || !hasDefault || !hasStatus {
			t.Errorf("%s: sorts %d, default sort declared %v, status sort %v", name, sorts, hasDefault, hasStatus)
		}
		if len(p.Params) == 0 || p.Reader == nil {
			t.Errorf("%s: no path to one reader", name)
		}
	}
	check("groups", len(Groups.Sorts), Groups.Sorts[Groups.DefaultSort] != nil, Groups.Sorts["status"] != nil, Groups.Path)
	check("share groups", len(ShareGroups.Sorts), ShareGroups.Sorts[ShareGroups.DefaultSort] != nil, ShareGroups.Sorts["status"] != nil, ShareGroups.Path)
	check("streams groups", len(StreamsGroups.Sorts), StreamsGroups.Sorts[StreamsGroups.DefaultSort] != nil, StreamsGroups.Sorts["status"] != nil, StreamsGroups.Path)
	check("connectors", len(Connectors.Sorts), Connectors.Sorts[Connectors.DefaultSort] != nil, Connectors.Sorts["status"] != nil, Connectors.Path)
	check("consumers", len(Consumers.Sorts), Consumers.Sorts[Consumers.DefaultSort] != nil, Consumers.Sorts["status"] != nil, Consumers.Path)
	check("kinesis", len(KinesisApps.Sorts), KinesisApps.Sorts[KinesisApps.DefaultSort] != nil, KinesisApps.Sorts["status"] != nil, KinesisApps.Path)
	check("sqs", len(SQSQueues.Sorts), SQSQueues.Sorts[SQSQueues.DefaultSort] != nil, SQSQueues.Sorts["status"] != nil, SQSQueues.Path)
	check("pubsub", len(PubSubSubscriptions.Sorts), PubSubSubscriptions.Sorts[PubSubSubscriptions.DefaultSort] != nil, PubSubSubscriptions.Sorts["status"] != nil, PubSubSubscriptions.Path)
	check("queues", len(Queues.Sorts), Queues.Sorts[Queues.DefaultSort] != nil, Queues.Sorts["status"] != nil, Queues.Path)
	if len(Kinds) != 9 {
		t.Errorf("%d kinds; this test checks 9", len(Kinds))
	}
}

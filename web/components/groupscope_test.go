package components

import (
	"testing"

	"github.com/queuewatch/queuewatch/queue"
)

// TestGroupsScope: the failure groups say which messages they count.
func TestGroupsScope(t *testing.T) {
	big := &queue.DLQ{Messages: 4210}
	for _, tc := range []struct {
		name string
		d    DLQData
		want string
	}{
		{"whole", DLQData{GroupsOf: 60, GroupsHead: true, GroupsWhole: true}, "of all 60 messages in the DLQ"},
		{"bounded", DLQData{DLQ: big, GroupsOf: 1000, GroupsHead: true}, "of the first 1,000 messages (the DLQ holds 4,210); a group's replay covers the whole DLQ and its dialog counts it"},
		{"head, depth unknown", DLQData{GroupsOf: 1000, GroupsHead: true}, "of the first 1,000 messages; a group's replay covers the whole DLQ and its dialog counts it"},
		{"page only", DLQData{DLQ: big, GroupsOf: 50}, "of the 50 messages shown; a group's replay covers the whole DLQ and its dialog counts it"},
	} {
		if got := tc.d.GroupsScope(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	sig := queue.FailureSignature{Source: "orders", Reason: "rejected", ExceptionClass: "java.lang.IllegalStateException"}
	if got, want := GroupName(sig), "rejected · java.lang.IllegalStateException ← orders"; got != want {
		t.Errorf("GroupName = %q, want %q", got, want)
	}
}

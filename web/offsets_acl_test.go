package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
	"github.com/queuewatch/queuewatch/store"
)

// TestOffsetsAPIPartialApply: queuewatch may commit on topic orders but
// not on payments (kfake ACLs). The apply answers 200 with the receipt,
// orders committed and payments failed with the broker's reason, and the
// audit log and the counter say partial.
func TestOffsetsAPIPartialApply(t *testing.T) {
	allow := func(res kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: res, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(1, "orders", "payments"),
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "qw", "qw",
			allow(kmsg.ACLResourceTypeGroup, "g", kmsg.ACLOperationAll),
			allow(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationAll),
			allow(kmsg.ACLResourceTypeTopic, "payments", kmsg.ACLOperationDescribe)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for _, topic := range []string{"orders", "payments"} {
		for range 10 {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte("v")})
		}
	}
	if err := admin.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "orders", At: 5, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "payments", At: 5, LeaderEpoch: -1})
	if err := kadm.NewClient(admin).CommitAllOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}
	kc, err := brokerkafka.New(config.Kafka{Name: "prod", Brokers: c.ListenAddrs(), SASL: &config.SASL{Mechanism: "PLAIN", Username: "qw", Password: "qw"}},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup})
	if err != nil {
		t.Fatal(err)
	}
	b, err := offsetskafka.New(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	m, err := offsets.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Monitor: testServer(true).opts.Monitor, Offsets: &kafkaResets{b: b, store: st, metrics: m}})

	cl := newClient(t, s)
	rec := cl.do("POST", "/api/v1/groups/prod/g/offsets/plan", `{"to":"earliest"}`)
	var p offsets.Plan
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Totals.Changed != 2 {
		t.Fatalf("plan: %d %s", rec.Code, rec.Body.String())
	}
	rec = cl.do("POST", "/api/v1/groups/prod/g/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	var r offsets.Receipt
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &r) != nil {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	got := map[string]offsets.PartitionResult{}
	for _, pr := range r.Partitions {
		got[pr.Topic] = pr
	}
	if r.Result != offsets.ResultPartial || got["orders"].Result != "committed" || got["payments"].Result != "failed" ||
		!strings.Contains(got["payments"].Error, "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("receipt %s %+v", r.Result, got)
	}
	l, err := st.OffsetResets(ctx, "prod", "g", 10)
	if err != nil || len(l) != 1 || l[0].Result != "partial" {
		t.Errorf("audit: %+v %v", l, err)
	}
}

package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestApplyDeniedByACL: queuewatch's user may describe both topics of the
// group but read (and so commit on) only one; kfake enforces the ACLs. The
// plan covers both, and apply commits the allowed topic and reports the
// denied one's partition as failed, TOPIC_AUTHORIZATION_FAILED.
func TestApplyDeniedByACL(t *testing.T) {
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
	adm := kadm.NewClient(admin)
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "orders", At: 5, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "payments", At: 5, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}

	kc, err := brokerkafka.New(config.Kafka{Name: "acl", Brokers: c.ListenAddrs(), SASL: &config.SASL{Mechanism: "PLAIN", Username: "qw", Password: "qw"}},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := offsets.MakePlan(ctx, r, offsets.Request{Group: "g", To: offsets.Spec{Kind: offsets.Earliest}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if targets(p) != "0 0" {
		t.Fatalf("targets %s", targets(p))
	}
	var a audit
	rec, err := offsets.Apply(ctx, r, p, offsets.ApplyOptions{Who: "test", Audit: &a})
	if err == nil || rec.Result != offsets.ResultPartial || len(rec.Partitions) != 2 {
		t.Fatalf("apply: %v, receipt %+v", err, rec)
	}
	for _, pr := range rec.Partitions {
		denied := pr.Result == "failed" && strings.Contains(pr.Error, "TOPIC_AUTHORIZATION_FAILED")
		if (pr.Topic == "payments") != denied || pr.Topic == "orders" && pr.Result != "committed" {
			t.Errorf("%s[%d]: %s %q", pr.Topic, pr.Partition, pr.Result, pr.Error)
		}
	}
	after, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := after.Lookup("orders", 0); o.At != 0 {
		t.Errorf("orders committed at %d, want 0", o.At)
	}
	if o, _ := after.Lookup("payments", 0); o.At != 5 {
		t.Errorf("payments committed at %d, want 5 (denied)", o.At)
	}
	if len(a.entries) != 1 || a.entries[0].Receipt.Result != offsets.ResultPartial {
		t.Errorf("audit %+v", a.entries)
	}
}

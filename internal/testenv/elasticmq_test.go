package testenv

import (
	"os"
	"strings"
	"testing"
)

// TestElasticMQVersionMatchesPom keeps ElasticMQVersion, which names the
// jar folder, equal to the version elasticmq-install.sh resolves.
func TestElasticMQVersionMatchesPom(t *testing.T) {
	pom, err := os.ReadFile("testdata/elasticmq/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "<elasticmq.version>" + ElasticMQVersion + "</elasticmq.version>"; !strings.Contains(string(pom), want) {
		t.Errorf("testdata/elasticmq/pom.xml does not pin %s", want)
	}
}

// TestElasticMQServes starts the shared server and has the aws CLI, a
// client no one here wrote, create and list a queue on it.
func TestElasticMQServes(t *testing.T) {
	s := ElasticMQ(t)
	name := Unique("testenv")
	if out := s.AWS(t, "sqs", "create-queue", "--queue-name", name); !strings.Contains(string(out), s.QueueURL(name)) {
		t.Fatalf("create-queue answers %s, want the URL %s", out, s.QueueURL(name))
	}
	out := s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", s.QueueURL(name), "--attribute-names", "QueueArn")
	if !strings.Contains(string(out), s.QueueARN(name)) {
		t.Fatalf("get-queue-attributes answers %s, want the ARN %s", out, s.QueueARN(name))
	}
	t.Logf("ElasticMQ %s started in %s", ElasticMQVersion, s.StartupTime)
}

// TestMotoServes starts the shared moto server and has the aws CLI create
// a queue on it, at the URL and ARN MotoServer names.
func TestMotoServes(t *testing.T) {
	s := Moto(t)
	name := Unique("testenv")
	if out := s.AWS(t, "sqs", "create-queue", "--queue-name", name); !strings.Contains(string(out), s.QueueURL(name)) {
		t.Fatalf("create-queue answers %s, want the URL %s", out, s.QueueURL(name))
	}
	out := s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", s.QueueURL(name), "--attribute-names", "QueueArn")
	if !strings.Contains(string(out), s.QueueARN(name)) {
		t.Fatalf("get-queue-attributes answers %s, want the ARN %s", out, s.QueueARN(name))
	}
	t.Logf("moto started in %s", s.StartupTime)
}

// Both servers are SQSServers.
var _ = []SQSServer{(*ElasticMQServer)(nil), (*MotoServer)(nil)}

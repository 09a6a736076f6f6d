package testenv

import (
	"os"
	"os/exec"
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
	t.Cleanup(StopElasticMQ)
	if _, err := exec.LookPath("aws"); err != nil {
		Require(t, "the aws CLI", err)
	}
	name := Unique("testenv")
	for _, args := range [][]string{
		{"sqs", "create-queue", "--queue-name", name},
		{"sqs", "list-queues", "--queue-name-prefix", name},
	} {
		cmd := exec.CommandContext(t.Context(), "aws", append([]string{"--endpoint-url", s.Endpoint}, args...)...)
		cmd.Env = s.AWSEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %v: %v: %s", args, err, out)
		}
		if !strings.Contains(string(out), name) {
			t.Fatalf("aws %v does not name %s: %s", args, name, out)
		}
	}
	t.Logf("ElasticMQ %s started in %s", ElasticMQVersion, s.StartupTime)
}

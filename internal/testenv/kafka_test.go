package testenv

import (
	"os"
	"strings"
	"testing"
)

// TestKafkaVersionMatchesPom keeps KafkaVersion and KafkaPreviousVersion,
// which name the jar folders, equal to the versions kafka-install.sh
// resolves.
func TestKafkaVersionMatchesPom(t *testing.T) {
	pom, err := os.ReadFile("testdata/kafka/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<kafka.version>" + KafkaVersion + "</kafka.version>",
		"<kafka.previous.version>" + KafkaPreviousVersion + "</kafka.previous.version>",
	} {
		if !strings.Contains(string(pom), want) {
			t.Errorf("testdata/kafka/pom.xml does not pin %s", want)
		}
	}
}

// TestClusterIDNeverLooksLikeAnOption: the storage tool reads an id
// starting with '-' as an option and refuses to format.
func TestClusterIDNeverLooksLikeAnOption(t *testing.T) {
	for range 10000 {
		if id := clusterID(); len(id) != 22 || id[0] == '-' {
			t.Fatalf("cluster id %q", id)
		}
	}
}

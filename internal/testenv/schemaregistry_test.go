package testenv

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestApicurioVersionMatchesPom keeps ApicurioVersion, which names the
// install folder, equal to the version apicurio-install.sh resolves.
func TestApicurioVersionMatchesPom(t *testing.T) {
	pom, err := os.ReadFile("testdata/apicurio/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "<apicurio.version>" + ApicurioVersion + "</apicurio.version>"; !strings.Contains(string(pom), want) {
		t.Errorf("testdata/apicurio/pom.xml does not pin %s", want)
	}
}

// TestSchemaRegistryServes starts the shared registry and registers a
// schema through its Confluent-compatible API.
func TestSchemaRegistryServes(t *testing.T) {
	url := SchemaRegistry(t)
	subject := Unique("testenv") + "-value"
	resp, err := http.Post(url+"/subjects/"+subject+"/versions", "application/vnd.schemaregistry.v1+json",
		strings.NewReader(`{"schema":"{\"type\":\"string\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id"`) {
		t.Fatalf("register answers %s %s, want 200 and an id", resp.Status, body)
	}
}

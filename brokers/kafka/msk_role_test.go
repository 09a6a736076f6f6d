package kafka_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopMoto()
	os.Exit(code)
}

// TestMSKIAMAssumesRole: with role_arn, AWS_MSK_IAM signs with the
// session STS gives the role (moto's STS here, through the SDK's
// AWS_ENDPOINT_URL_STS), not with the credentials of the chain that
// assumed it, as the SQS source does.
func TestMSKIAMAssumesRole(t *testing.T) {
	moto := testenv.Moto(t)
	dir := t.TempDir()
	const envKey, envToken = "AKIAIOSFODNN7EXAMPLE", "env-session-token"
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": envKey, "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": envToken,
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_REGION": "", "AWS_ENDPOINT_URL_STS": moto.Endpoint,
	} {
		t.Setenv(k, v)
	}
	mech, err := brokerkafka.SASLMechanism(&config.SASL{
		Mechanism: config.MechanismMSKIAM, Region: "eu-west-1", RoleARN: "arn:aws:iam::123456789012:role/queuewatch-msk",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := mech.Authenticate(context.Background(), "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098")
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]string
	if err := json.Unmarshal(first, &payload); err != nil {
		t.Fatal(err)
	}
	key, _, _ := strings.Cut(payload["x-amz-credential"], "/")
	token := payload["x-amz-security-token"]
	if key == envKey || !strings.HasPrefix(key, "ASIA") || token == "" || token == envToken {
		t.Errorf("signed with key %q and token %q; want the assumed role's session (ASIA…), not the chain's %s", key, token, envKey)
	}
}

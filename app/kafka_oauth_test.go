package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestOAuthBearerCheck runs queuewatch check on configs loaded from YAML:
// the right secret in a client_secret_file (with its trailing newline)
// passes; a wrong one there, or a token for another audience, fails with
// output that names the mechanism and Keycloak's or the broker's reason,
// and never the secret.
func TestOAuthBearerCheck(t *testing.T) {
	t.Parallel()
	addr, idp := testenv.RealKafka(t).OAuth(t)
	dir := t.TempDir()
	const secret = "wrong-secret-7d1f0c"
	for file, s := range map[string]string{"wrong": secret, "right": testenv.KafkaOAuthClient.Secret} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, clientID, secretKey string
		want                      []string
	}{
		{"right secret", testenv.KafkaOAuthClient.ID, "client_secret_file: right", []string{"ok   kafka:oauth: "}},
		{
			"wrong secret", testenv.KafkaOAuthClient.ID, "client_secret_file: wrong",
			[]string{"FAIL kafka:oauth:", "sasl OAUTHBEARER: token from " + idp.TokenURL() + " for client queuewatch", "unauthorized_client"},
		},
		{
			"wrong audience", testenv.KafkaOAuthOtherAudience.ID, "client_secret: " + testenv.KafkaOAuthOtherAudience.Secret,
			[]string{"FAIL kafka:oauth: sasl OAUTHBEARER refused by the broker", `{"status":"invalid_token"}`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yml := "data_dir: " + t.TempDir() + "\nkafka:\n  - name: oauth\n    brokers: [" + addr + "]\n    sasl:\n" +
				"      mechanism: OAUTHBEARER\n      token_url: " + idp.TokenURL() + "\n      client_id: " + tc.clientID + "\n      " + tc.secretKey + "\n"
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yml")
			if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = Check(context.Background(), cfg, &out, nil)
			if ok := tc.name == "right secret"; (err == nil) != ok {
				t.Fatalf("check error %v, want ok=%v:\n%s", err, ok, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("check output:\n%s\nwant it to say %q", out.String(), w)
				}
			}
			for _, s := range []string{secret, testenv.KafkaOAuthOtherAudience.Secret} {
				if strings.Contains(out.String(), s) {
					t.Errorf("check output shows the secret %q:\n%s", s, out.String())
				}
			}
			t.Logf("check output:\n%s", out.String())
		})
	}
}

// TestCheckNamesUnofferedMechanism runs check against the real broker's
// SASL_SSL listener, which offers SCRAM-SHA-512 only, with AWS_MSK_IAM
// and credentials from the environment: the output says that the broker
// does not offer AWS_MSK_IAM, and shows no secret.
func TestCheckNamesUnofferedMechanism(t *testing.T) {
	node := testenv.RealKafka(t)
	const secret = "msk-secret-4f9a2e"
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "eu-west-1",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	yml := "data_dir: " + dir + "\nkafka:\n  - name: msk\n    brokers: [" + node.SecureAddr() + "]\n" +
		"    tls: {enabled: true, ca_file: " + node.CAFile() + "}\n    sasl: {mechanism: AWS_MSK_IAM}\n"
	path := filepath.Join(dir, "queuewatch.yml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(context.Background(), cfg, &out, nil); err == nil {
		t.Fatalf("check passed:\n%s", out.String())
	}
	for _, w := range []string{"FAIL kafka:msk: ", "sasl AWS_MSK_IAM is not enabled on the broker's listener", "UNSUPPORTED_SASL_MECHANISM"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("check output:\n%s\nwant it to say %q", out.String(), w)
		}
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("check output shows the secret:\n%s", out.String())
	}
	t.Logf("check output:\n%s", out.String())
}

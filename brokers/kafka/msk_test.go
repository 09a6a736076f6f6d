package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/queuewatch/queuewatch/config"
)

// mskCreds are AWS's documented example credentials: the environment
// part of the credential chain hands them to the signer.
var mskCreds = aws.Credentials{
	AccessKeyID:     "AKIAIOSFODNN7EXAMPLE",
	SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	SessionToken:    "IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCWV1LXdlc3QtMSJHMEUCIQ+token=",
}

// mskEnv gives the credential chain mskCreds through the environment
// only: no shared files, no instance metadata.
func mskEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", mskCreds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", mskCreds.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", mskCreds.SessionToken)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_REGION", "")
}

// TestMSKIAMSignatureMatchesBotocore signs AWS_MSK_IAM payloads the way
// a connection to MSK does (the mechanism built from the config, the
// credential chain from the environment) and has botocore's SigV4 query
// signer sign the same request with the same credentials, region and
// clock (the payload's X-Amz-Date): every signed parameter and the
// signature must agree. The region comes from the broker's MSK host name,
// or from AWS_REGION for another name (PrivateLink, a custom domain).
func TestMSKIAMSignatureMatchesBotocore(t *testing.T) {
	python := botocorePython(t)
	for _, tc := range []struct{ host, awsRegion, region string }{
		{"b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098", "", "eu-west-1"},
		{"boot-abcd1234.c1.kafka-serverless.us-east-2.amazonaws.com:9098", "", "us-east-2"},
		{"kafka-1.msk.example.internal:9098", "ap-southeast-2", "ap-southeast-2"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			mskEnv(t)
			t.Setenv("AWS_REGION", tc.awsRegion)
			mech, err := saslMechanism(&config.SASL{Mechanism: config.MechanismMSKIAM})
			if err != nil {
				t.Fatal(err)
			}
			_, first, err := mech.Authenticate(context.Background(), tc.host)
			if err != nil {
				t.Fatal(err)
			}
			var payload map[string]string
			if err := json.Unmarshal(first, &payload); err != nil {
				t.Fatalf("payload %s: %v", first, err)
			}
			host, _, _ := strings.Cut(tc.host, ":")
			want := botocoreSign(t, python, map[string]string{
				"host": host, "region": tc.region, "access_key": mskCreds.AccessKeyID,
				"secret_key": mskCreds.SecretAccessKey, "session_token": mskCreds.SessionToken,
				"timestamp": payload["x-amz-date"],
			})
			if len(want) != 8 {
				t.Fatalf("botocore signed %d parameters, want 8: %v", len(want), want)
			}
			for k, v := range want {
				if got := payload[strings.ToLower(k)]; got != v {
					t.Errorf("%s: franz-go %q, botocore %q", k, got, v)
				}
			}
			if payload["host"] != host || payload["version"] != "2020_10_22" || payload["user-agent"] != mskUserAgent {
				t.Errorf("payload host %q version %q user-agent %q", payload["host"], payload["version"], payload["user-agent"])
			}
			signed, err := time.Parse("20060102T150405Z", payload["x-amz-date"])
			if err != nil || time.Since(signed).Abs() > time.Minute {
				t.Errorf("X-Amz-Date %q: %v; want about now", payload["x-amz-date"], err)
			}
		})
	}
}

// botocorePython is a python3 that has botocore, which .ci/run installs
// with boto3 for the SQS tests.
func botocorePython(t *testing.T) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err == nil {
		err = exec.CommandContext(t.Context(), python, "-c", "import botocore").Run()
	}
	// testenv.Require, which this package cannot import (testenv uses it).
	switch {
	case err == nil:
	case os.Getenv("CI") == "true":
		t.Fatalf("python3 with botocore is required in CI: %v", err)
	default:
		t.Skipf("no python3 with botocore (pip install boto3; set CI=true to fail instead): %v", err)
	}
	return python
}

// botocoreSign runs testdata/msk_sigv4.py on args and returns the query
// parameters botocore signed.
func botocoreSign(t *testing.T, python string, args map[string]string) map[string]string {
	t.Helper()
	in, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python, filepath.Join("testdata", "msk_sigv4.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("botocore: %v: %s", err, stderr.String())
	}
	var params map[string]string
	if err := json.Unmarshal(out, &params); err != nil {
		t.Fatalf("botocore output %s: %v", out, err)
	}
	return params
}

// expiringCreds issues numbered credentials that expire
// mskExpiryWindow plus two seconds after they are issued.
type expiringCreds struct{ issued atomic.Int32 }

func (p *expiringCreds) Retrieve(context.Context) (aws.Credentials, error) {
	n := p.issued.Add(1)
	return aws.Credentials{
		AccessKeyID: fmt.Sprintf("ASIAEXAMPLE%04d", n), SecretAccessKey: "secret", SessionToken: "token",
		CanExpire: true, Expires: time.Now().Add(mskExpiryWindow + 2*time.Second),
	}, nil
}

// TestMSKIAMRefreshesBeforeExpiry: connections share one set of
// credentials until mskExpiryWindow before they expire, and the next
// connection after that signs with new ones, fetched while the old ones
// still had minutes to live.
func TestMSKIAMRefreshesBeforeExpiry(t *testing.T) {
	creds := &expiringCreds{}
	mech := mskSigner(creds)
	const host = "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"
	key := func() string {
		t.Helper()
		_, first, err := mech.Authenticate(context.Background(), host)
		if err != nil {
			t.Fatal(err)
		}
		var payload map[string]string
		if err := json.Unmarshal(first, &payload); err != nil {
			t.Fatal(err)
		}
		access, _, _ := strings.Cut(payload["x-amz-credential"], "/")
		return access
	}
	if a, b := key(), key(); a != "ASIAEXAMPLE0001" || b != a {
		t.Fatalf("first two connections signed with %s and %s; want ASIAEXAMPLE0001 for both", a, b)
	}
	firstExpires := time.Now().Add(mskExpiryWindow + 2*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for key() == "ASIAEXAMPLE0001" {
		if time.Now().After(deadline) {
			t.Fatal("still signing with the first credentials after 10 s; want new ones 2 s after they were issued")
		}
		time.Sleep(100 * time.Millisecond) // the next connection
	}
	if left := time.Until(firstExpires); left < mskExpiryWindow-5*time.Second {
		t.Errorf("refreshed %s before the old credentials expired; want about %s", left, mskExpiryWindow)
	}
	if n := creds.issued.Load(); n != 2 {
		t.Errorf("%d credentials fetched; want 2", n)
	}
}

// TestMSKIAMNoCredentials: a chain that finds no credentials fails the
// authentication with an error naming the mechanism.
func TestMSKIAMNoCredentials(t *testing.T) {
	mskEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	mech, err := saslMechanism(&config.SASL{Mechanism: config.MechanismMSKIAM, Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = mech.Authenticate(context.Background(), "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098")
	if err == nil || !strings.HasPrefix(err.Error(), "sasl AWS_MSK_IAM: aws credentials: ") {
		t.Errorf("authenticate without credentials: %v; want an error naming AWS_MSK_IAM's credentials", err)
	}
}

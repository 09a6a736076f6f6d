package config

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tls     TLS
		wantNil bool
		err     string
		check   func(*tls.Config) bool
	}{
		{name: "disabled", tls: TLS{CAFile: "ignored.pem"}, wantNil: true},
		{name: "system roots", tls: TLS{Enabled: true, ServerName: "kafka"}, check: func(c *tls.Config) bool {
			return c.RootCAs == nil && len(c.Certificates) == 0 && c.ServerName == "kafka" && c.MinVersion == tls.VersionTLS12
		}},
		{name: "ca and client cert", tls: TLS{Enabled: true, CAFile: "testdata/tls/ca.pem", CertFile: "testdata/tls/client.pem", KeyFile: "testdata/tls/client-key.pem"}, check: func(c *tls.Config) bool {
			return c.RootCAs != nil && len(c.Certificates) == 1 && !c.InsecureSkipVerify
		}},
		{name: "insecure", tls: TLS{Enabled: true, InsecureSkipVerify: true}, check: func(c *tls.Config) bool {
			return c.InsecureSkipVerify
		}},
		{name: "ca without certificates", tls: TLS{Enabled: true, CAFile: notPEM}, err: "no PEM certificates found"},
		{name: "missing ca", tls: TLS{Enabled: true, CAFile: filepath.Join(dir, "missing.pem")}, err: "read tls ca_file"},
		{name: "key does not match cert", tls: TLS{Enabled: true, CertFile: "testdata/tls/client.pem", KeyFile: "testdata/tls/ca.pem"}, err: "load tls cert_file and key_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.tls.Config()
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case tt.wantNil:
				if c != nil {
					t.Errorf("Config() = %+v, want nil when disabled", c)
				}
			case !tt.check(c):
				t.Errorf("Config() = %+v, not as expected", c)
			}
		})
	}
}

func TestTLSPathsRelativeToConfigFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile("testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "certs", "ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "queuewatch.yaml")
	data := "kafka:\n  - name: k\n    brokers: [k:9093]\n    tls: {enabled: true, ca_file: certs/ca.pem}\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "certs", "ca.pem"); c.Kafka[0].TLS.CAFile != want {
		t.Errorf("ca_file = %q, want %q", c.Kafka[0].TLS.CAFile, want)
	}
}

package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RabbitTLS is a second RabbitMQ node, started from the same installation
// as the shared broker, that accepts AMQP and management API connections
// over TLS only. Its server certificate is signed by a CA made for it and
// names only ServerName, not the 127.0.0.1 of the URLs, so a client
// succeeds only with CAFile and ServerName both.
type RabbitTLS struct {
	// AMQPURL is amqps://guest:guest@127.0.0.1:PORT/.
	AMQPURL string
	// ManagementURL is https://127.0.0.1:PORT, without credentials.
	ManagementURL string
	// CAFile signs the server and client certificates.
	CAFile string
	// CertFile and KeyFile are a client certificate the node accepts.
	CertFile, KeyFile string
	// ServerName is a DNS name in the server certificate.
	ServerName string
	// Node is the Erlang node name, for rabbitmqctl -n.
	Node string
	// Started is how long the node took to answer over TLS.
	Started time.Duration

	home string
	dir  string
	cmd  *exec.Cmd
	exit chan struct{}
}

var rabbitTLS struct {
	once sync.Once
	node *RabbitTLS
	err  error
}

// rabbitTLSStartTimeout bounds a node's boot; on two shared cores it takes
// about 15 seconds.
const rabbitTLSStartTimeout = 90 * time.Second

// RabbitMQTLS returns the TLS-only node of this test package, starting it
// on first use; a node that cannot start goes to Require. The package's
// TestMain must call StopRabbitMQTLS after m.Run, since the node outlives
// the test that started it.
func RabbitMQTLS(t testing.TB) *RabbitTLS {
	t.Helper()
	rabbitTLS.once.Do(func() {
		rabbitTLS.node, rabbitTLS.err = startRabbitTLS()
	})
	Require(t, "a TLS rabbitmq node started from rabbitmq-server", rabbitTLS.err)
	return rabbitTLS.node
}

// StopRabbitMQTLS stops the node RabbitMQTLS started, if any, and removes
// its files.
func StopRabbitMQTLS() {
	if n := rabbitTLS.node; n != nil {
		n.stop()
	}
}

// ClientTLS is a crypto/tls configuration that trusts the node's CA and
// presents the client certificate, for test setup.
func (n *RabbitTLS) ClientTLS() (*tls.Config, error) {
	ca, err := os.ReadFile(n.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(n.CertFile, n.KeyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: n.ServerName, MinVersion: tls.VersionTLS12}, nil
}

func startRabbitTLS() (*RabbitTLS, error) {
	server, err := exec.LookPath("/usr/lib/rabbitmq/bin/rabbitmq-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qwtls-")
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			_ = os.RemoveAll(dir) // nothing of a node that did not start is worth keeping
		}
	}()
	n := &RabbitTLS{dir: dir, home: filepath.Join(dir, "home"), ServerName: "localhost", exit: make(chan struct{})}
	if err := n.writeFiles(); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	n.Node = fmt.Sprintf("qwtls-%d@localhost", os.Getpid())
	n.AMQPURL = fmt.Sprintf("amqps://guest:guest@127.0.0.1:%d/", ports[0])
	n.ManagementURL = fmt.Sprintf("https://127.0.0.1:%d", ports[1])
	conf := filepath.Join(dir, "rabbitmq.conf")
	if err := os.WriteFile(conf, []byte(n.config(ports[0], ports[1])), 0o600); err != nil {
		return nil, err
	}
	plugins := filepath.Join(dir, "enabled_plugins")
	if err := os.WriteFile(plugins, []byte("[rabbitmq_management].\n"), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "server.out"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = log.Close() }() // the node holds its own descriptor
	// The node outlives every test of the package; StopRabbitMQTLS stops it.
	n.cmd = exec.CommandContext(context.Background(), server)
	n.cmd.Dir = dir
	n.cmd.Stdout, n.cmd.Stderr = log, log
	n.cmd.Env = append(os.Environ(),
		"HOME="+n.home, // its .erlang.cookie, for this node and rabbitmqctl
		"RABBITMQ_NODENAME="+n.Node,
		"RABBITMQ_CONFIG_FILE="+conf,
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+plugins,
		fmt.Sprintf("RABBITMQ_DIST_PORT=%d", ports[2]),
		// Makes the script exec the Erlang VM, so the process started
		// here is the node and a signal reaches it.
		"RUNNING_UNDER_SYSTEMD=true",
	)
	// The node dies with the test binary even when cleanup never runs.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = n.cmd.Wait() // the exit is what matters, seen through n.exit
		close(n.exit)
	}()
	if err := n.waitReady(start); err != nil {
		n.stop()
		return nil, err
	}
	n.Started = time.Since(start)
	started = true
	return n, nil
}

// config is the node's rabbitmq.conf: no plain listener of either kind,
// peers verified against the test CA.
func (n *RabbitTLS) config(amqpPort, mgmtPort int) string {
	ca, cert, key := filepath.Join(n.dir, "ca.pem"), filepath.Join(n.dir, "server.pem"), filepath.Join(n.dir, "server.key")
	return strings.Join([]string{
		"listeners.tcp = none",
		fmt.Sprintf("listeners.ssl.default = %d", amqpPort),
		"ssl_options.cacertfile = " + ca,
		"ssl_options.certfile = " + cert,
		"ssl_options.keyfile = " + key,
		"ssl_options.verify = verify_peer",
		"ssl_options.fail_if_no_peer_cert = true",
		fmt.Sprintf("management.ssl.port = %d", mgmtPort),
		"management.ssl.cacertfile = " + ca,
		"management.ssl.certfile = " + cert,
		"management.ssl.keyfile = " + key,
		"",
	}, "\n")
}

// waitReady waits until the management API answers over TLS, which the
// node opens after its AMQP listener.
func (n *RabbitTLS) waitReady(start time.Time) error {
	cfg, err := n.ClientTLS()
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer hc.CloseIdleConnections()
	var last error
	for time.Since(start) < rabbitTLSStartTimeout {
		select {
		case <-n.exit:
			out, _ := os.ReadFile(filepath.Join(n.dir, "server.out"))
			return fmt.Errorf("rabbitmq-server exited during start: %s", tail(string(out), 2000))
		case <-time.After(250 * time.Millisecond):
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, n.ManagementURL+"/api/whoami", nil)
		if err != nil {
			return err
		}
		req.SetBasicAuth("guest", "guest")
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = errors.New(resp.Status)
			continue
		}
		// The management listener can answer before the AMQP listeners
		// start (they open last in the boot), so a TLS handshake on the
		// AMQP port is what makes the node ready.
		if last = n.amqpHandshake(cfg); last == nil {
			return nil
		}
	}
	return fmt.Errorf("tls node not ready after %s: %w", rabbitTLSStartTimeout, last)
}

// amqpHandshake completes a TLS handshake with the node's AMQP listener.
func (n *RabbitTLS) amqpHandshake(cfg *tls.Config) error {
	u, err := url.Parse(n.AMQPURL)
	if err != nil {
		return err
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: cfg}
	conn, err := d.DialContext(context.Background(), "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("amqp tls listener: %w", err)
	}
	return conn.Close()
}

// stop asks the node to stop (SIGTERM stops RabbitMQ cleanly), kills it
// after 20 seconds, and removes its files.
func (n *RabbitTLS) stop() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGTERM) // gone already is fine
		select {
		case <-n.exit:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL) // last resort
			<-n.exit
		}
	}
	_ = os.RemoveAll(n.dir) // a temp dir; a leftover is harmless
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// writeFiles writes the Erlang cookie, a CA, a server certificate for
// ServerName and a client certificate, both signed by the CA.
func (n *RabbitTLS) writeFiles() error {
	if err := os.MkdirAll(n.home, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.home, ".erlang.cookie"), []byte(rand.Text()), 0o400); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "queuewatch test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(n.dir, "ca.pem"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	n.CAFile = filepath.Join(n.dir, "ca.pem")
	server := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: n.ServerName},
		DNSNames:    []string{n.ServerName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := n.issue(ca, caKey, server, "server"); err != nil {
		return err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "queuewatch"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := n.issue(ca, caKey, client, "client"); err != nil {
		return err
	}
	n.CertFile, n.KeyFile = filepath.Join(n.dir, "client.pem"), filepath.Join(n.dir, "client.key")
	return nil
}

// issue signs tmpl with the CA and writes name.pem and name.key.
func (n *RabbitTLS) issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, name string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(n.dir, name+".pem"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(filepath.Join(n.dir, name+".key"), "PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	// The node runs as root here and reads these itself.
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// secureServerName is the only name in the test broker's certificate: the
// brokers are dialled at 127.0.0.1, so verification passes only when the
// configured tls.server_name reaches every client.
const secureServerName = "kafka.queuewatch.test"

// testCA writes a fresh CA certificate to dir/ca.pem and returns its path
// and a server TLS config whose certificate it signed for secureServerName.
func testCA(t *testing.T, dir string) (string, *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "queuewatch test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: secureServerName},
		DNSNames:  []string{secureServerName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}},
	}
}

// secureKafka is a kfake cluster that speaks only TLS and accepts only
// SCRAM-SHA-512 user qw, with the config queuewatch needs to reach it.
type secureKafka struct {
	c   *kfake.Cluster
	cfg config.Kafka
	cl  *kgo.Client
	adm *kadm.Client
}

func newSecureKafka(t *testing.T) *secureKafka {
	t.Helper()
	caFile, srvTLS := testCA(t, t.TempDir())
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.TLS(srvTLS),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "qw", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := config.Kafka{
		Name: "secure", Brokers: c.ListenAddrs(),
		SASL: &config.SASL{Mechanism: "SCRAM-SHA-512", Username: "qw", Password: "s3cret"},
		TLS:  config.TLS{Enabled: true, CAFile: caFile, ServerName: secureServerName},
	}
	// The test's own client is built by hand, not by the code under test.
	clientTLS, err := cfg.TLS.Config()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DialTLSConfig(clientTLS),
		kgo.SASL(scram.Auth{User: "qw", Pass: "s3cret"}.AsSha512Mechanism()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &secureKafka{c: c, cfg: cfg, cl: cl, adm: kadm.NewClient(cl)}
}

// seed creates orders (2 partitions, 10 records each) with group billing
// committed at 4 and 10 (lag 6), and orders.DLT holding three dead letters
// of orders.
func (k *secureKafka) seed(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	for topic, parts := range map[string]int32{"orders": 2, "orders.DLT": 1} {
		if _, err := k.adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for p := range int32(2) {
		for range 10 {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("{}")})
		}
	}
	for i := range 3 {
		recs = append(recs, &kgo.Record{
			Topic: "orders.DLT", Value: fmt.Appendf(nil, "dead-%d", i),
			Headers: []kgo.RecordHeader{{Key: "kafka_dlt-original-topic", Value: []byte("orders")}},
		})
	}
	if err := k.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 4, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 10, LeaderEpoch: -1})
	if err := k.adm.CommitAllOffsets(ctx, "billing", os); err != nil {
		t.Fatal(err)
	}
}

// replayedBodies reads orders from its start and returns the bodies of the
// records that carry a replay id.
func (k *secureKafka) replayedBodies(t *testing.T) []string {
	t.Helper()
	clientTLS, err := k.cfg.TLS.Config()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.c.ListenAddrs()...), kgo.DialTLSConfig(clientTLS),
		kgo.SASL(scram.Auth{User: "qw", Pass: "s3cret"}.AsSha512Mechanism()),
		kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var bodies []string
	for n := 0; n < 23; {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume orders after %d records: %v", n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if slices.ContainsFunc(r.Headers, func(h kgo.RecordHeader) bool { return h.Key == queue.HeaderReplayID }) {
				bodies = append(bodies, string(r.Value))
			}
		})
	}
	slices.Sort(bodies)
	return bodies
}

// TestKafkaSASLAndTLS runs queuewatch against a cluster reachable only over
// TLS with SCRAM-SHA-512, configured as an operator would: the collector
// reports exact lag and DLQ depth, browse shows the dead letters, a replay
// moves them back to their source topic, and the cursor it commits empties
// the DLQ in the collector's view.
func TestKafkaSASLAndTLS(t *testing.T) {
	k := newSecureKafka(t)
	k.seed(t)
	cfg := testConfig(t, k.cfg)
	r := start(t, cfg)

	const (
		lag   = `queuewatch_kafka_consumergroup_lag{cluster="secure",group="billing",partition="0",topic="orders"} 6`
		depth = `queuewatch_dlq_messages{broker="kafka",cluster="secure",dlq="orders.DLT",source="orders",vhost=""} `
	)
	eventually(t, "lag and DLQ depth", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, lag) && strings.Contains(m, depth+"3")
	})

	id := queue.DLQRef{Broker: queue.Kafka, Cluster: "secure", Name: "orders.DLT"}.ID()
	code, body := r.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages?limit=10")
	if code != 200 {
		t.Fatalf("browse: %d %s", code, body)
	}
	var page struct {
		Messages []struct {
			Body []byte `json:"body"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	var browsed []string
	for _, m := range page.Messages {
		browsed = append(browsed, string(m.Body))
	}
	want := []string{"dead-0", "dead-1", "dead-2"}
	if !slices.Equal(browsed, want) {
		t.Fatalf("browsed %q, want %q", browsed, want)
	}

	// The CLI's path: its own service (and audit store) over the same
	// configuration.
	cli := *cfg
	cli.DataDir = t.TempDir()
	if _, err := Replay(t.Context(), &cli, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}}, nil, nil); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if got := k.replayedBodies(t); !slices.Equal(got, want) {
		t.Errorf("replayed into orders: %q, want %q", got, want)
	}
	eventually(t, "DLQ depth 0 after the replay", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, depth+"0")
	})
}

// TestKafkaRejectedCredentials proves that a cluster refusing queuewatch's
// credentials or certificate fails the check command (the collector's
// path) and a replay (the replay backend's path) at once, with the reason,
// instead of retrying until a deadline.
func TestKafkaRejectedCredentials(t *testing.T) {
	tests := []struct {
		name string
		edit func(*secureKafka)
		// want is in both errors; "" only asks for a prompt failure.
		want string
	}{{
		// kfake drops the connection on a bad SCRAM proof, so EOF is all
		// any client can report; what matters is that it is prompt.
		name: "wrong password, connection dropped",
		edit: func(k *secureKafka) { k.cfg.SASL.Password = "wrong" },
	}, {
		// A Kafka broker answers the bad proof with this error and then
		// closes the connection; the operator must see its words.
		name: "wrong password, answered as Kafka does",
		edit: func(k *secureKafka) {
			k.cfg.SASL.Password = "wrong"
			k.c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
				k.c.KeepControl()
				auth := req.(*kmsg.SASLAuthenticateRequest)
				if !bytes.HasPrefix(auth.SASLAuthBytes, []byte("c=")) { // not the client-final message
					return nil, nil, false
				}
				resp := auth.ResponseKind().(*kmsg.SASLAuthenticateResponse)
				resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
				msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
				resp.ErrorMessage = &msg
				return resp, nil, true
			})
		},
		want: "invalid credentials with SASL mechanism SCRAM-SHA-512",
	}, {
		name: "certificate not for the dialled address",
		edit: func(k *secureKafka) { k.cfg.TLS.ServerName = "" },
		want: "x509: cannot validate certificate for 127.0.0.1",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newSecureKafka(t)
			k.seed(t)
			tt.edit(k)
			cfg := testConfig(t, k.cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			cfg.PollTimeout = 20 * time.Second
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()

			begin := time.Now()
			var out bytes.Buffer
			err := Check(ctx, cfg, &out, nil)
			if err == nil || !strings.Contains(out.String(), "FAIL kafka:secure") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check: err %v, output %q; want a failure saying %q", err, out.String(), tt.want)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("check took %s to fail", d)
			}

			begin = time.Now()
			id := queue.DLQRef{Broker: queue.Kafka, Cluster: "secure", Name: "orders.DLT"}.ID()
			_, err = Replay(ctx, cfg, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}}, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("replay: err %v, want a failure saying %q", err, tt.want)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("replay took %s to fail", d)
			}
		})
	}
}

// clientIDs records the client id in the first request of every
// connection a kfake listener accepts: what the broker sees, for quotas,
// ACLs and its logs.
type clientIDs struct {
	mu   sync.Mutex
	seen []string
}

func (c *clientIDs) listen(network, addr string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	return &idListener{Listener: l, ids: c}, nil
}

// take returns the ids seen since the last take.
func (c *clientIDs) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.seen
	c.seen = nil
	return out
}

type idListener struct {
	net.Listener
	ids *clientIDs
}

func (l *idListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idConn{Conn: conn, ids: l.ids}, nil
}

// idConn reads the request header: size (4 bytes), api key (2), version
// (2), correlation id (4), then the client id as an int16-length string in
// every header version.
type idConn struct {
	net.Conn
	ids  *clientIDs
	head []byte
	done bool
}

func (c *idConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.done {
		return n, err
	}
	c.head = append(c.head, p[:n]...)
	if len(c.head) < 14 {
		return n, err
	}
	l := int(int16(binary.BigEndian.Uint16(c.head[12:14])))
	if l >= 0 && len(c.head) < 14+l {
		return n, err
	}
	id := ""
	if l > 0 {
		id = string(c.head[14 : 14+l])
	}
	c.done = true
	c.ids.mu.Lock()
	c.ids.seen = append(c.ids.seen, id)
	c.ids.mu.Unlock()
	return n, err
}

// TestKafkaClientID proves that the configured client_id is what the
// broker sees on every connection: the collector's, and the replay
// backend's admin client, consumer and transactional producer.
func TestKafkaClientID(t *testing.T) {
	ids := &clientIDs{}
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.ListenFn(ids.listen))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"orders", "orders.DLT"} {
		if _, err := adm.CreateTopic(t.Context(), 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "orders.DLT", Value: []byte("dead")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs(), ClientID: "qw-prod"})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ids.take()

	check := func(what string) {
		t.Helper()
		got := ids.take()
		if len(got) == 0 || slices.ContainsFunc(got, func(id string) bool { return id != "qw-prod" }) {
			t.Errorf("%s: client ids %q, want only qw-prod", what, got)
		}
	}
	if err := Check(t.Context(), cfg, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	check("check")
	id := queue.DLQRef{Broker: queue.Kafka, Cluster: "prod", Name: "orders.DLT"}.ID()
	if _, err := Replay(t.Context(), cfg, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	check("replay")
}

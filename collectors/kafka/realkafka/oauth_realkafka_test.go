package realkafka

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// oauthSource is a collector of the node's OAUTHBEARER listener as app
// builds it from a config naming a Keycloak client and its token
// endpoint; group is the one group it watches.
func oauthSource(t *testing.T, addr, tokenURL string, c testenv.KeycloakClient, group string) *collector.Source {
	t.Helper()
	cl, err := brokerkafka.New(config.Kafka{
		Name:    "oauth",
		Brokers: []string{addr},
		SASL: &config.SASL{
			Mechanism: config.MechanismOAuthBearer, TokenURL: tokenURL,
			ClientID: c.ID, ClientSecret: c.Secret, Scope: "profile email",
		},
	}, config.DLQ{KafkaCursorGroup: testenv.Unique("cursor")}, kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	s, err := collector.New(collector.Options{Cluster: cl, IncludeGroup: func(name string) bool { return name == group }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestOAuthBearer polls the real broker through its OAUTHBEARER listener,
// which checks each token against Keycloak's keys, issuer and the
// expected audience: a client-credentials token from Keycloak reads the
// lag, and check lists the listener as the advertised broker.
func TestOAuthBearer(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	addr, idp := b.node.OAuth(t)
	topic := b.topic(2)
	b.produce(topic, 2, 5)
	g := testenv.Unique("oauth")
	b.commit(g, topic, map[int32]int64{0: 1, 1: 5})

	s := oauthSource(t, addr, idp.TokenURL(), testenv.KafkaOAuthClient, g)
	snap := poll(t, s)
	if got := kafkatest.Group(t, snap, g); got.TotalLag() != 4 || len(got.Partitions) != 2 {
		t.Errorf("over OAUTHBEARER: lag %d partitions %d; want 4 over 2", got.TotalLag(), len(got.Partitions))
	}
	brokers, err := s.Check(context.Background())
	if err != nil || len(brokers) != 1 || brokers[0] != addr {
		t.Errorf("check: %v %v; want the OAUTHBEARER listener %s advertised", brokers, err, addr)
	}
}

// TestOAuthBearerRefused: a token for another audience is refused by the
// broker with its reason (all Kafka tells a client is invalid_token), and
// a wrong client secret by Keycloak with its; either error names the
// mechanism.
func TestOAuthBearerRefused(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	addr, idp := b.node.OAuth(t)
	wrongSecret := testenv.KafkaOAuthClient
	wrongSecret.Secret = "not-the-secret"
	for _, tc := range []struct {
		name   string
		client testenv.KeycloakClient
		want   []string
	}{
		{"wrong audience", testenv.KafkaOAuthOtherAudience, []string{"sasl OAUTHBEARER refused by the broker", "SASL_AUTHENTICATION_FAILED", `{"status":"invalid_token"}`}},
		{"wrong secret", wrongSecret, []string{"sasl OAUTHBEARER: token from " + idp.TokenURL(), "unauthorized_client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oauthSource(t, addr, idp.TokenURL(), tc.client, "none")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := s.Poll(ctx)
			if err == nil {
				t.Fatal("poll succeeded; want it refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("poll error %q; want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tc.client.Secret) {
				t.Errorf("poll error %q shows the client secret", err)
			}
		})
	}
}

// TestOAuthBearerTokenRefresh keeps one collector polling for longer
// than its tokens live (20 s at Keycloak) on a listener that makes every
// connection authenticate again each 10 s: each re-authentication must
// present a valid token, so the polls go on succeeding only if expiring
// tokens are replaced. A proxy in front of the token endpoint counts
// the tokens Keycloak issued: three cover two refreshes.
func TestOAuthBearerTokenRefresh(t *testing.T) {
	t.Parallel()
	testenv.Slow(t, "polling through two token lifetimes")
	b := realBroker(t)
	addr, idp := b.node.OAuth(t)
	topic := b.topic(1)
	b.produce(topic, 1, 3)
	g := testenv.Unique("oauth-refresh")
	b.commit(g, topic, map[int32]int64{0: 1})

	var issued atomic.Int32
	tokenURL := countingProxy(t, idp.TokenURL(), &issued)
	s := oauthSource(t, addr, tokenURL, testenv.KafkaOAuthShortLived, g)
	deadline := time.Now().Add(2 * time.Minute)
	start := time.Now()
	for polls := 1; issued.Load() < 3; polls++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d tokens issued in 2 minutes; want 3", issued.Load())
		}
		if got := kafkatest.Group(t, poll(t, s), g); got.TotalLag() != 2 {
			t.Fatalf("poll %d after %s: lag %d; want 2", polls, time.Since(start).Round(time.Second), got.TotalLag())
		}
		time.Sleep(time.Second) // the poll interval of a long-running watch
	}
	// Tokens outliving their session: the last one was fetched well
	// after the first had expired.
	if time.Since(start) < testenv.KafkaOAuthShortLived.TokenLifespan {
		t.Errorf("3 tokens within %s; want them spread over their 20 s lifetimes", time.Since(start))
	}
	t.Logf("%d tokens issued over %s of polling", issued.Load(), time.Since(start).Round(time.Second))
}

// countingProxy is a reverse proxy to tokenURL that counts the tokens it
// passes back; it returns the proxy's token URL.
func countingProxy(t *testing.T, tokenURL string, issued *atomic.Int32) string {
	t.Helper()
	target, err := url.Parse(tokenURL)
	if err != nil {
		t.Fatal(err)
	}
	origin := &url.URL{Scheme: target.Scheme, Host: target.Host}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		// SetURL also sets the Host header to Keycloak's, whose issuer
		// the broker expects in the tokens.
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(origin) },
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusOK {
				issued.Add(1)
			}
			return nil
		},
	})
	t.Cleanup(proxy.Close)
	return proxy.URL + target.Path
}

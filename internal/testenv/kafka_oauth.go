package testenv

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// KafkaOAuthAudience is the aud the OAUTHBEARER listener expects.
const KafkaOAuthAudience = "kafka"

// kafkaReauth is how long the OAUTHBEARER listener lets a connection live
// before the client must authenticate again with a token that is still
// valid (connections.max.reauth.ms), so that a refresh test need not wait
// out a token's whole life on one connection.
const kafkaReauth = 10 * time.Second

// The realm's clients, by what the broker makes of their tokens.
var (
	// KafkaOAuthClient's tokens are accepted.
	KafkaOAuthClient = KeycloakClient{ID: "queuewatch", Secret: "queuewatch-oauth-secret", Audience: KafkaOAuthAudience}
	// KafkaOAuthShortLived's tokens are accepted and live 20 s, so a
	// client must fetch new ones during a long operation.
	KafkaOAuthShortLived = KeycloakClient{
		ID: "queuewatch-short", Secret: "queuewatch-short-secret", Audience: KafkaOAuthAudience,
		TokenLifespan: 20 * time.Second,
	}
	// KafkaOAuthOtherAudience's tokens are for another service: the
	// broker refuses them.
	KafkaOAuthOtherAudience = KeycloakClient{ID: "billing-api", Secret: "billing-api-secret", Audience: "billing"}
)

// withOAuth is set by KafkaWithOAuth: the package's nodes get an
// OAUTHBEARER listener that trusts a Keycloak started with the first node.
var withOAuth bool

// KafkaWithOAuth readies the package for OAUTHBEARER tests; call it from
// TestMain before the tests run. Before its first node starts, Keycloak
// starts with the KafkaOAuth* clients, and each node RealKafka starts gets
// a SASL_PLAINTEXT listener (OAuth) whose tokens Kafka's own
// OAuthBearerValidatorCallbackHandler checks against Keycloak's JWKS,
// issuer and KafkaOAuthAudience. StopKafka stops Keycloak too. Packages
// that do not ask pay nothing.
func KafkaWithOAuth() { withOAuth = true }

// KafkaMainWithOAuth is KafkaMain after KafkaWithOAuth.
func KafkaMainWithOAuth(m *testing.M) {
	KafkaWithOAuth()
	KafkaMain(m)
}

// OAuth is the node's OAUTHBEARER listener and the Keycloak its tokens
// come from. A Keycloak that is not installed or did not start goes to
// Require.
func (n *KafkaNode) OAuth(t testing.TB) (addr string, idp *Keycloak) {
	t.Helper()
	if !withOAuth {
		t.Fatal("the package's TestMain must call testenv.KafkaWithOAuth")
	}
	Require(t, "Keycloak "+KeycloakVersion, n.keycloakErr)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.oauthPort)), n.keycloak
}

// startOAuth starts the node's Keycloak and picks the listener's port; a
// failure is kept for OAuth to report, and the node starts without the
// listener.
func (n *KafkaNode) startOAuth() {
	if !withOAuth {
		return
	}
	ports, err := freePorts(1)
	if err != nil {
		n.keycloakErr = err
		return
	}
	n.keycloak, n.keycloakErr = startKeycloak([]KeycloakClient{KafkaOAuthClient, KafkaOAuthShortLived, KafkaOAuthOtherAudience})
	n.oauthPort = ports[0]
}

// oauthListener is the OAUTHBEARER listener's entries of listeners and
// listener.security.protocol.map, empty without Keycloak.
func (n *KafkaNode) oauthListener() (listener, protocol string) {
	if n.keycloak == nil {
		return "", ""
	}
	return fmt.Sprintf(",OAUTH://127.0.0.1:%d", n.oauthPort), ",OAUTH:SASL_PLAINTEXT"
}

// oauthProps configures the OAUTHBEARER listener: Kafka's validator with
// Keycloak's keys, issuer and the expected audience. The broker never
// logs in through it, but the login module wants a subject anyway.
func (n *KafkaNode) oauthProps() string {
	if n.keycloak == nil {
		return ""
	}
	return fmt.Sprintf(`listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kafka";
listener.name.oauth.oauthbearer.connections.max.reauth.ms=%d
sasl.oauthbearer.jwks.endpoint.url=%s
sasl.oauthbearer.expected.issuer=%s
sasl.oauthbearer.expected.audience=%s
`, kafkaReauth.Milliseconds(), n.keycloak.JWKSURL(), n.keycloak.Issuer(), KafkaOAuthAudience)
}

// oauthJVMArgs allow the broker to fetch Keycloak's JWKS: Kafka 4 fetches
// only URLs the JVM property org.apache.kafka.sasl.oauthbearer.allowed.urls
// lists.
func (n *KafkaNode) oauthJVMArgs() []string {
	if n.keycloak == nil {
		return nil
	}
	return []string{"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + n.keycloak.JWKSURL()}
}

// stopOAuth stops the node's Keycloak.
func (n *KafkaNode) stopOAuth() {
	if n.keycloak != nil {
		n.keycloak.Stop()
	}
}

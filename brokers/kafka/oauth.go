package kafka

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/queuewatch/queuewatch/config"
)

// tokenTimeout bounds one token request: franz-go authenticates with its
// client's context, which has no deadline, and an identity provider that
// does not answer must fail the connection rather than hang it.
const tokenTimeout = 30 * time.Second

// tokenSource fetches OAUTHBEARER tokens with the client-credentials grant
// and keeps the last one until it is about to expire. Every connection of
// every client of a cluster authenticates through it, and brokers that
// re-authenticate sessions (connections.max.reauth.ms) call it again, so
// a long replay presents a fresh token before the old one expires.
type tokenSource struct {
	cfg *clientcredentials.Config
	mu  sync.Mutex
	tok *oauth2.Token
}

// oauthMechanism is OAUTHBEARER for s: the client secret (or its file,
// read once here) and the token endpoint.
func oauthMechanism(s *config.SASL) (sasl.Mechanism, error) {
	secret := s.ClientSecret
	if s.ClientSecretFile != "" {
		b, err := os.ReadFile(s.ClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("sasl OAUTHBEARER: client_secret_file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	cfg := &clientcredentials.Config{
		ClientID: s.ClientID, ClientSecret: secret, TokenURL: s.TokenURL,
		Scopes: strings.Fields(s.Scope),
	}
	if s.Audience != "" {
		cfg.EndpointParams = url.Values{"audience": {s.Audience}}
	}
	ts := &tokenSource{cfg: cfg}
	return oauth.Oauth(ts.auth), nil
}

// auth is the token for one authentication.
func (ts *tokenSource) auth(ctx context.Context) (oauth.Auth, error) {
	tok, err := ts.token(ctx)
	if err != nil {
		return oauth.Auth{}, err
	}
	return oauth.Auth{Token: tok}, nil
}

// token is the cached token while oauth2 still calls it valid (it treats
// a token as expired ten seconds early, so a token handed to a broker has
// at least that long to live), else a new one from the token endpoint.
// The lock is held while fetching so that connections opened together
// share one request.
func (ts *tokenSource) token(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tok.Valid() {
		return ts.tok.AccessToken, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	tok, err := ts.cfg.Token(ctx)
	if err != nil {
		// oauth2's error carries the endpoint's error code and
		// description, never the client secret (it is sent in the
		// request, not echoed).
		return "", fmt.Errorf("sasl OAUTHBEARER: token from %s for client %s: %w", ts.cfg.TokenURL, ts.cfg.ClientID, err)
	}
	ts.tok = tok
	return tok.AccessToken, nil
}

// AuthError names the SASL mechanism in err when the broker refused the
// cluster's credentials or does not offer the mechanism, so that check
// says which sign-in failed; the broker's reason is in err. Other errors
// are returned as they are.
func (c *Cluster) AuthError(err error) error {
	if err == nil || c.cfg.SASL == nil {
		return err
	}
	mech := c.cfg.SASL.Mechanism
	switch {
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Errorf("sasl %s is not enabled on the broker's listener: %w", mech, err)
	case !errors.Is(err, kerr.SaslAuthenticationFailed):
		return err
	case mech == config.MechanismOAuthBearer:
		// Kafka tells the client only {"status":"invalid_token"}; which
		// check the token failed is in the broker's log.
		return fmt.Errorf("sasl OAUTHBEARER refused by the broker (its log names the failed check: audience, issuer, expiry or signature): %w", err)
	}
	return fmt.Errorf("sasl %s refused by the broker: %w", mech, err)
}

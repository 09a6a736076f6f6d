package web

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
)

func oidcConfig(key byte) config.Auth {
	a := config.Default().Auth
	a.Mode = config.AuthOIDC
	a.Session.Key = string(bytes.Repeat([]byte{"0123456789abcdef"[key%16]}, 64))
	a.Session.TTL = time.Hour
	a.OIDC = config.OIDC{
		Issuer: "http://127.0.0.1:1/dex", ClientID: "queuewatch", GroupsClaim: "groups",
		GroupRoles: map[string]config.Grant{"platform": {Role: config.RoleAdmin}, "team-a": {Role: config.RoleOperator}},
	}
	return a
}

// TestOIDCPagesRedirectAPIAnswers401: without a session a page sends the
// browser to the sign-in page (and back after), the API answers 401, and
// a bearer token still works beside OIDC.
func TestOIDCPagesRedirectAPIAnswers401(t *testing.T) {
	oidc := oidcConfig(3)
	oidc.Tokens = authConfig(t, config.AuthTokens).Tokens
	s := dlqServerAuth(oidc, newFakeDLQ())
	rec := send(s, http.MethodGet, "/replays?job=x")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/auth/login?next=%2Freplays%3Fjob%3Dx" {
		t.Errorf("page without a session = %d → %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := send(s, http.MethodGet, "/api/v1/dlqs"); rec.Code != http.StatusUnauthorized {
		t.Errorf("API without a session = %d", rec.Code)
	}
	if rec := send(s, http.MethodGet, "/api/v1/dlqs", bearerTok(apiToken)); rec.Code != http.StatusOK {
		t.Errorf("API with a token = %d", rec.Code)
	}
	login := send(s, http.MethodGet, "/auth/login?next=%2Freplays")
	if login.Code != http.StatusOK || !bytes.Contains(login.Body.Bytes(), []byte(`href="/auth/start?next=%2Freplays"`)) || !bytes.Contains(login.Body.Bytes(), []byte("Sign in with 127.0.0.1:1")) {
		t.Errorf("sign-in page = %d %s", login.Code, login.Body)
	}
	if rec := send(s, http.MethodGet, "/auth/start"); rec.Code != http.StatusBadGateway {
		t.Errorf("start with the provider down = %d %s", rec.Code, rec.Body)
	}
	if rec := send(s, http.MethodGet, "/auth/callback?state=x&code=y"); rec.Code != http.StatusBadRequest || !bytes.Contains(rec.Body.Bytes(), []byte("sign in again")) {
		t.Errorf("callback without a login = %d", rec.Code)
	}
}

package web

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
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

func sessionRequest(t *testing.T, o *oidcAuth, s session) *http.Request {
	t.Helper()
	v, err := o.seal.seal(purposeSession, s)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
	return r
}

// TestSessionCookie: a session sealed by one replica is accepted by
// another with the same key and refused by one with another key; a
// changed bit, an expired session, a login cookie offered as a session and
// a session whose groups no longer map to a role are refused; the role is
// worked out per request from the groups.
func TestSessionCookie(t *testing.T) {
	a, b, other := newOIDCAuth(oidcConfig(1)), newOIDCAuth(oidcConfig(1)), newOIDCAuth(oidcConfig(2))
	exp := time.Now().Add(time.Hour).Unix()
	r := sessionRequest(t, a, session{Name: "ann@example.com", Subject: "CiQ", Groups: []string{"team-a"}, Expires: exp})
	for name, o := range map[string]*oidcAuth{"the issuer": a, "a replica with the same key": b} {
		p, err := o.principal(r)
		if err != nil || p.Name != "ann@example.com" || p.Role != config.RoleOperator || p.Method != methodOIDC {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
	if _, err := other.principal(r); err == nil {
		t.Error("a replica with another key accepted the session")
	}

	c, _ := r.Cookie(sessionCookie)
	raw, _ := base64.RawURLEncoding.DecodeString(c.Value)
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 1
		tampered := httptest.NewRequest(http.MethodGet, "/", nil)
		tampered.AddCookie(&http.Cookie{Name: sessionCookie, Value: base64.RawURLEncoding.EncodeToString(bad)})
		if _, err := a.principal(tampered); err == nil {
			t.Fatalf("a session with byte %d changed was accepted", i)
		}
	}
	for name, req := range map[string]*http.Request{
		"expired":   sessionRequest(t, a, session{Name: "ann@example.com", Groups: []string{"platform"}, Expires: time.Now().Add(-time.Second).Unix()}),
		"no cookie": httptest.NewRequest(http.MethodGet, "/", nil),
		"garbage": func() *http.Request {
			q := httptest.NewRequest(http.MethodGet, "/", nil)
			q.AddCookie(&http.Cookie{Name: sessionCookie, Value: "not-a-session"})
			return q
		}(),
	} {
		if _, err := a.principal(req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	login, _ := a.seal.seal(purposeLogin, session{Name: "mallory", Groups: []string{"platform"}, Expires: exp})
	asSession := httptest.NewRequest(http.MethodGet, "/", nil)
	asSession.AddCookie(&http.Cookie{Name: sessionCookie, Value: login})
	if _, err := a.principal(asSession); err == nil {
		t.Error("a login cookie passed for a session")
	}
	noRole := sessionRequest(t, a, session{Name: "bob@example.com", Groups: []string{"gone"}, Expires: exp})
	if _, err := a.principal(noRole); err == nil {
		t.Error("a session whose groups map to no role was accepted")
	}
	p, _ := a.principal(sessionRequest(t, a, session{Name: "root@example.com", Groups: []string{"team-a", "platform"}, Expires: exp}))
	if p.Role != config.RoleAdmin {
		t.Errorf("the highest role of the groups: %s", p.Role)
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/dlq/x?after=2":            "/dlq/x?after=2",
		"":                          "/",
		"//evil.example/x":          "/",
		"/\\evil.example":           "/",
		"https://evil.example":      "/",
		"javascript:alert(1)":       "/",
		"/ok\r\nSet-Cookie: x=1":    "/",
		"/replays?job=job-1#frag-1": "/replays?job=job-1#frag-1",
		"/\t/evil.example/":         "/",
		"/\\/evil.example":          "/",
		"/x\x7f":                    "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOIDCPagesRedirectAPIAnswers401: without a session a page sends the
// browser to the sign-in page (and back after), the API answers 401, and
// a bearer token still works beside OIDC.
func TestOIDCPagesRedirectAPIAnswers401(t *testing.T) {
	auth := oidcConfig(3)
	auth.Tokens = authConfig(t, config.AuthTokens).Tokens
	s := dlqServerAuth(auth, newFakeDLQ())
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

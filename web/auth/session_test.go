package auth

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

func sessionRequest(t *testing.T, o *OIDC, s Session) *http.Request {
	t.Helper()
	v, err := o.seal.seal(purposeSession, s)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: SessionCookie, Value: v})
	return r
}

// TestSessionCookie: a session sealed by one replica is accepted by
// another with the same key and refused by one with another key; a
// changed bit, an expired session, a login cookie offered as a session and
// a session whose groups no longer map to a role are refused; the role is
// worked out per request from the groups.
func TestSessionCookie(t *testing.T) {
	a, b, other := NewOIDCAuth(oidcConfig(1)), NewOIDCAuth(oidcConfig(1)), NewOIDCAuth(oidcConfig(2))
	exp := time.Now().Add(time.Hour).Unix()
	r := sessionRequest(t, a, Session{Name: "ann@example.com", Subject: "CiQ", Groups: []string{"team-a"}, Expires: exp})
	for name, o := range map[string]*OIDC{"the issuer": a, "a replica with the same key": b} {
		p, err := o.Principal(r)
		if err != nil || p.Name != "ann@example.com" || p.Role != config.RoleOperator || p.Method != MethodOIDC {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
	if _, err := other.Principal(r); err == nil {
		t.Error("a replica with another key accepted the session")
	}

	c, _ := r.Cookie(SessionCookie)
	raw, _ := base64.RawURLEncoding.DecodeString(c.Value)
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 1
		tampered := httptest.NewRequest(http.MethodGet, "/", nil)
		tampered.AddCookie(&http.Cookie{Name: SessionCookie, Value: base64.RawURLEncoding.EncodeToString(bad)})
		if _, err := a.Principal(tampered); err == nil {
			t.Fatalf("a session with byte %d changed was accepted", i)
		}
	}
	for name, req := range map[string]*http.Request{
		"expired":   sessionRequest(t, a, Session{Name: "ann@example.com", Groups: []string{"platform"}, Expires: time.Now().Add(-time.Second).Unix()}),
		"no cookie": httptest.NewRequest(http.MethodGet, "/", nil),
		"garbage": func() *http.Request {
			q := httptest.NewRequest(http.MethodGet, "/", nil)
			q.AddCookie(&http.Cookie{Name: SessionCookie, Value: "not-a-session"})
			return q
		}(),
	} {
		if _, err := a.Principal(req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	login, _ := a.seal.seal(purposeLogin, Session{Name: "mallory", Groups: []string{"platform"}, Expires: exp})
	asSession := httptest.NewRequest(http.MethodGet, "/", nil)
	asSession.AddCookie(&http.Cookie{Name: SessionCookie, Value: login})
	if _, err := a.Principal(asSession); err == nil {
		t.Error("a login cookie passed for a session")
	}
	noRole := sessionRequest(t, a, Session{Name: "bob@example.com", Groups: []string{"gone"}, Expires: exp})
	if _, err := a.Principal(noRole); err == nil {
		t.Error("a session whose groups map to no role was accepted")
	}
	p, _ := a.Principal(sessionRequest(t, a, Session{Name: "root@example.com", Groups: []string{"team-a", "platform"}, Expires: exp}))
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

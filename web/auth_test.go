package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
)

const apiToken = "qw-test-token-1"

func authConfig(t *testing.T, mode string) config.Auth {
	t.Helper()
	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	sum := sha256.Sum256([]byte(apiToken))
	a := config.Default().Auth
	a.Mode = mode
	a.Users = []config.User{
		{Name: "alice", PasswordHash: hash("wonderland"), Role: config.RoleOperator},
		{Name: "victor", PasswordHash: hash("viewer-pw"), Role: config.RoleViewer},
	}
	a.Tokens = []config.Token{{Name: "ci-bot", TokenHash: "sha256:" + hex.EncodeToString(sum[:]), Role: config.RoleAdmin}}
	a.Proxy.TrustedCIDRs = []string{"10.0.0.0/8", "::1"}
	a.Proxy.GroupRoles = map[string]config.Role{"sre": config.RoleOperator, "platform-admins": config.RoleAdmin}
	return a
}

// authServer is the test server with auth and two state-changing test
// routes: one any user may call, one for operators.
func authServer(t *testing.T, mode string) *Server {
	t.Helper()
	s := testServer(true)
	s = New(Options{Monitor: s.opts.Monitor, Metrics: s.opts.Metrics, Auth: authConfig(t, mode)})
	ok := func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"ok": "yes"}) }
	s.e.POST("/api/v1/test/any", ok)
	s.e.POST("/api/v1/test/operator", ok, requireRole(config.RoleOperator))
	return s
}

type reqOpt func(r *http.Request)

func basic(user, pw string) reqOpt { return func(r *http.Request) { r.SetBasicAuth(user, pw) } }
func bearerTok(tok string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}
func peer(addr string) reqOpt { return func(r *http.Request) { r.RemoteAddr = addr } }
func header(k, v string) reqOpt {
	return func(r *http.Request) { r.Header.Set(k, v) }
}

func send(s *Server, method, target string, opts ...reqOpt) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for _, o := range opts {
		o(r)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func TestAuthModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      string
		opts      []reqOpt
		code      int
		who       string // shown in the header on success
		challenge string // WWW-Authenticate on 401
	}{
		{name: "none lets everyone in", mode: config.AuthNone, code: 200, who: "no login"},
		{name: "basic good password", mode: config.AuthBasic, opts: []reqOpt{basic("alice", "wonderland")}, code: 200, who: `alice</span> <span class="muted">(operator)`},
		{name: "basic bad password", mode: config.AuthBasic, opts: []reqOpt{basic("alice", "nope")}, code: 401, challenge: "Basic"},
		{name: "basic unknown user", mode: config.AuthBasic, opts: []reqOpt{basic("mallory", "wonderland")}, code: 401, challenge: "Basic"},
		{name: "basic no credentials", mode: config.AuthBasic, code: 401, challenge: "Basic"},
		{name: "basic mode accepts API tokens", mode: config.AuthBasic, opts: []reqOpt{bearerTok(apiToken)}, code: 200, who: "ci-bot"},
		{name: "token good", mode: config.AuthTokens, opts: []reqOpt{bearerTok(apiToken)}, code: 200, who: `ci-bot</span> <span class="muted">(admin)`},
		{name: "token bad", mode: config.AuthTokens, opts: []reqOpt{bearerTok("qw-test-token-2")}, code: 401, challenge: "Bearer"},
		{name: "token missing", mode: config.AuthTokens, code: 401, challenge: "Bearer"},
		{name: "proxy trusted peer, group role", mode: config.AuthProxy,
			opts: []reqOpt{peer("10.1.2.3:5555"), header("X-Forwarded-User", "bob"), header("X-Forwarded-Groups", "devs, platform-admins")},
			code: 200, who: `bob</span> <span class="muted">(admin)`},
		{name: "proxy trusted IPv6 peer, default role", mode: config.AuthProxy,
			opts: []reqOpt{peer("[::1]:5555"), header("X-Forwarded-User", "carol"), header("X-Forwarded-Groups", "devs")},
			code: 200, who: `carol</span> <span class="muted">(viewer)`},
		{name: "proxy untrusted peer", mode: config.AuthProxy,
			opts: []reqOpt{peer("192.168.1.9:5555"), header("X-Forwarded-User", "bob"), header("X-Forwarded-Groups", "platform-admins")},
			code: 403},
		{name: "proxy untrusted peer spoofing X-Forwarded-For", mode: config.AuthProxy,
			opts: []reqOpt{peer("192.168.1.9:5555"), header("X-Forwarded-For", "10.1.2.3"), header("X-Forwarded-User", "bob")},
			code: 403},
		{name: "proxy trusted peer without user", mode: config.AuthProxy, opts: []reqOpt{peer("10.1.2.3:5555")}, code: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := authServer(t, tc.mode)
			rec := send(s, "GET", "/", tc.opts...)
			if rec.Code != tc.code {
				t.Fatalf("GET / = %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
			if tc.who != "" && !strings.Contains(rec.Body.String(), tc.who) {
				t.Errorf("header does not show %q", tc.who)
			}
			if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, tc.challenge) || (tc.challenge == "") != (got == "") {
				t.Errorf("WWW-Authenticate = %q, want prefix %q", got, tc.challenge)
			}
			// The API answers the same, as JSON.
			api := send(s, "GET", "/api/v1/groups", tc.opts...)
			if api.Code != tc.code || !strings.HasPrefix(api.Header().Get("Content-Type"), "application/json") {
				t.Errorf("GET /api/v1/groups = %d %s", api.Code, api.Header().Get("Content-Type"))
			}
			if api.Code >= 400 {
				var e struct{ Error string }
				if err := json.Unmarshal(api.Body.Bytes(), &e); err != nil || e.Error == "" {
					t.Errorf("error body %q", api.Body.String())
				}
			}
		})
	}
}

func TestPublicPathsNeedNoLogin(t *testing.T) {
	s := authServer(t, config.AuthBasic)
	for target, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 404, "/static/app.css": 200} {
		// /metrics is http.NotFoundHandler in tests: 404, not 401, proves
		// it is reached without credentials.
		if rec := send(s, "GET", target); rec.Code != want {
			t.Errorf("%s = %d, want %d", target, rec.Code, want)
		}
	}
	if rec := send(s, "GET", "/api/v1/sources"); rec.Code != 401 {
		t.Errorf("API without login = %d", rec.Code)
	}
}

// csrfPair gets a CSRF cookie and token the way a browser does: from a page.
func csrfPair(t *testing.T, s *Server, opts ...reqOpt) (*http.Cookie, string) {
	t.Helper()
	rec := send(s, "GET", "/", opts...)
	var ck *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == csrfCookie {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("CSRF cookie %+v", ck)
	}
	if !strings.Contains(rec.Body.String(), `<meta name="csrf-token" content="`+ck.Value+`">`) {
		t.Fatal("page does not carry the CSRF token in its meta tag")
	}
	return ck, ck.Value
}

func TestCSRF(t *testing.T) {
	s := authServer(t, config.AuthBasic)
	alice := basic("alice", "wonderland")
	ck, tok := csrfPair(t, s, alice)
	withCookie := func(r *http.Request) { r.AddCookie(ck) }
	for _, tc := range []struct {
		name string
		opts []reqOpt
		code int
	}{
		{"no token", []reqOpt{alice, withCookie}, 403},
		{"no cookie", []reqOpt{alice, header(csrfHeader, tok)}, 403},
		{"wrong token", []reqOpt{alice, withCookie, header(csrfHeader, strings.Repeat("A", len(tok)))}, 403},
		{"cross-site with token", []reqOpt{alice, withCookie, header(csrfHeader, tok), header("Sec-Fetch-Site", "cross-site")}, 403},
		{"token and cookie", []reqOpt{alice, withCookie, header(csrfHeader, tok)}, 200},
		{"bearer token clients are exempt", []reqOpt{bearerTok(apiToken)}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := send(s, "POST", "/api/v1/test/any", tc.opts...)
			if rec.Code != tc.code {
				t.Fatalf("POST = %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
			if tc.code == 403 && !strings.Contains(rec.Body.String(), `"error":"missing or invalid CSRF token"`) {
				t.Errorf("403 body %q", rec.Body.String())
			}
		})
	}
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		if rec := send(s, m, "/api/v1/test/any", alice, withCookie); rec.Code != 403 {
			t.Errorf("%s without token = %d", m, rec.Code)
		}
	}
}

func TestRequireRole(t *testing.T) {
	s := authServer(t, config.AuthBasic)
	for _, tc := range []struct {
		user, pw string
		code     int
	}{
		{"victor", "viewer-pw", 403},
		{"alice", "wonderland", 200},
	} {
		t.Run(tc.user, func(t *testing.T) {
			creds := basic(tc.user, tc.pw)
			ck, tok := csrfPair(t, s, creds)
			rec := send(s, "POST", "/api/v1/test/operator", creds, func(r *http.Request) { r.AddCookie(ck) }, header(csrfHeader, tok))
			if rec.Code != tc.code {
				t.Fatalf("POST = %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
			if tc.code == 403 {
				var e struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || !strings.Contains(e.Error, "needs role operator") {
					t.Errorf("403 body %q", rec.Body.String())
				}
			}
		})
	}
	if rec := send(authServer(t, config.AuthTokens), "POST", "/api/v1/test/operator", bearerTok(apiToken)); rec.Code != 200 {
		t.Errorf("admin token on operator route = %d", rec.Code)
	}
}

func TestCheckListenAuth(t *testing.T) {
	none := config.Auth{Mode: config.AuthNone}
	basicAuth := config.Auth{Mode: config.AuthBasic}
	for _, tc := range []struct {
		listen   string
		auth     config.Auth
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:8080", none, false, true},
		{"[::1]:8080", none, false, true},
		{"localhost:8080", none, false, true},
		{"127.0.0.2:8080", none, false, true},
		{":8080", none, false, false},
		{"0.0.0.0:8080", none, false, false},
		{"10.0.0.5:8080", none, false, false},
		{"example.com:8080", none, false, false},
		{"0.0.0.0:8080", none, true, true},
		{"0.0.0.0:8080", basicAuth, false, true},
		{"nonsense", none, false, false},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			err := CheckListenAuth(tc.listen, tc.auth, tc.insecure)
			if (err == nil) != tc.ok {
				t.Errorf("CheckListenAuth(%q, %s, %v) = %v", tc.listen, tc.auth.Mode, tc.insecure, err)
			}
		})
	}
}

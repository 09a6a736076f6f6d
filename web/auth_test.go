package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/auth"
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
	a.Proxy.GroupRoles = map[string]config.Grant{"sre": {Role: config.RoleOperator}, "platform-admins": {Role: config.RoleAdmin}}
	return a
}

// authServer is the test server with auth and two state-changing test
// routes: one any user may call, one for operators.
func authServer(t *testing.T, mode string) *Server {
	t.Helper()
	s := testServer(true)
	s = New(Options{Monitor: s.opts.Monitor, Metrics: s.opts.Metrics, Auth: authConfig(t, mode)})
	ok := func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"ok": "yes"}) }
	s.e.POST("/api/v1/test/any", ok, s.authorize(viewer))
	s.e.POST("/api/v1/test/operator", ok, s.authorize(operator))
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
		{name: "none lets everyone in", mode: config.AuthNone, code: 200, who: "open access"},
		{name: "basic good password", mode: config.AuthBasic, opts: []reqOpt{basic("alice", "wonderland")}, code: 200, who: `alice</span> <span class="muted">(operator)`},
		{name: "basic bad password", mode: config.AuthBasic, opts: []reqOpt{basic("alice", "nope")}, code: 401, challenge: "Basic"},
		{name: "basic unknown user", mode: config.AuthBasic, opts: []reqOpt{basic("mallory", "wonderland")}, code: 401, challenge: "Basic"},
		{name: "basic no credentials", mode: config.AuthBasic, code: 401, challenge: "Basic"},
		{name: "basic mode accepts API tokens", mode: config.AuthBasic, opts: []reqOpt{bearerTok(apiToken)}, code: 200, who: "ci-bot"},
		{name: "token good", mode: config.AuthTokens, opts: []reqOpt{bearerTok(apiToken)}, code: 200, who: `ci-bot</span> <span class="muted">(admin)`},
		{name: "token bad", mode: config.AuthTokens, opts: []reqOpt{bearerTok("qw-test-token-2")}, code: 401, challenge: "Bearer"},
		{name: "token missing", mode: config.AuthTokens, code: 401, challenge: "Bearer"},
		{
			name: "proxy trusted peer, group role", mode: config.AuthProxy,
			opts: []reqOpt{peer("10.1.2.3:5555"), header("X-Forwarded-User", "bob"), header("X-Forwarded-Groups", "devs, platform-admins")},
			code: 200, who: `bob</span> <span class="muted">(admin)`,
		},
		{
			name: "proxy trusted IPv6 peer, default role", mode: config.AuthProxy,
			opts: []reqOpt{peer("[::1]:5555"), header("X-Forwarded-User", "carol"), header("X-Forwarded-Groups", "devs")},
			code: 200, who: `carol</span> <span class="muted">(viewer)`,
		},
		{
			name: "proxy untrusted peer", mode: config.AuthProxy,
			opts: []reqOpt{peer("192.168.1.9:5555"), header("X-Forwarded-User", "bob"), header("X-Forwarded-Groups", "platform-admins")},
			code: 403,
		},
		{
			name: "proxy untrusted peer spoofing X-Forwarded-For", mode: config.AuthProxy,
			opts: []reqOpt{peer("192.168.1.9:5555"), header("X-Forwarded-For", "10.1.2.3"), header("X-Forwarded-User", "bob")},
			code: 403,
		},
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

// TestCrossOrigin: in every auth mode, a state-changing request a browser
// marks as cross-origin is refused, even with valid credentials attached
// (that is the forgery), while a script's request without Origin or
// Sec-Fetch-Site and the UI's own same-origin request get through to
// authentication and the handler.
func TestCrossOrigin(t *testing.T) {
	creds := map[string][]reqOpt{
		config.AuthNone:   nil,
		config.AuthBasic:  {basic("alice", "wonderland")},
		config.AuthTokens: {bearerTok(apiToken)},
		config.AuthProxy:  {peer("10.1.2.3:5555"), header("X-Forwarded-User", "bob"), header("X-Forwarded-Groups", "sre")},
	}
	crossSite := header("Sec-Fetch-Site", "cross-site")
	sameSite := header("Sec-Fetch-Site", "same-site") // another subdomain is another origin
	evilOrigin := header("Origin", "https://evil.example")
	sameOrigin := []reqOpt{header("Sec-Fetch-Site", "same-origin"), header("Origin", "http://example.com")}
	for mode, auth := range creds {
		for _, tc := range []struct {
			name   string
			method string
			opts   []reqOpt
			code   int
		}{
			{"script without Origin", "POST", nil, 200},
			{"UI same-origin", "POST", sameOrigin, 200},
			{"old browser, Origin matches Host", "POST", []reqOpt{header("Origin", "http://example.com")}, 200},
			{"cross-site", "POST", []reqOpt{crossSite}, 403},
			{"cross-site with a matching Origin", "POST", []reqOpt{crossSite, header("Origin", "http://example.com")}, 403},
			{"same-site subdomain", "POST", []reqOpt{sameSite}, 403},
			{"old browser, foreign Origin", "POST", []reqOpt{evilOrigin}, 403},
			{"cross-site DELETE", "DELETE", []reqOpt{crossSite}, 403},
			{"cross-site PUT", "PUT", []reqOpt{crossSite}, 403},
			{"cross-site GET only reads", "GET", []reqOpt{crossSite}, 200},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				s := authServer(t, mode)
				target := "/api/v1/test/any"
				if tc.method == "GET" {
					target = "/api/v1/groups"
				}
				// httptest requests have Host example.com.
				rec := send(s, tc.method, target, append(slices.Clone(auth), tc.opts...)...)
				if tc.method != "GET" && tc.method != "POST" && tc.code == 403 && rec.Code == http.StatusMethodNotAllowed {
					t.Fatalf("%s reached routing: %d", tc.method, rec.Code)
				}
				if rec.Code != tc.code {
					t.Fatalf("%s = %d, want %d: %s", tc.method, rec.Code, tc.code, rec.Body.String())
				}
				if tc.code == 403 && !strings.Contains(rec.Body.String(), `"error":"cross-origin request refused`) {
					t.Errorf("403 body %q", rec.Body.String())
				}
			})
		}
	}
	// Without credentials a script still has to authenticate.
	if rec := send(authServer(t, config.AuthBasic), "POST", "/api/v1/test/any"); rec.Code != 401 {
		t.Errorf("POST without credentials = %d, want 401", rec.Code)
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
			rec := send(s, "POST", "/api/v1/test/operator", basic(tc.user, tc.pw))
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
			err := auth.CheckListenAuth(tc.listen, tc.auth, tc.insecure)
			if (err == nil) != tc.ok {
				t.Errorf("CheckListenAuth(%q, %s, %v) = %v", tc.listen, tc.auth.Mode, tc.insecure, err)
			}
		})
	}
}

package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/net/html"
)

// DexVersion is the Dex release dex-install.sh builds into .cache/bin/dex,
// pinned by its pseudo-version in testdata/dex/go.mod (Dex's module path
// has no /v2, so the proxy knows the v2.45.1 tag only by commit).
const DexVersion = "v2.45.1"

// dexStartTimeout bounds one start: well under a second on an idle
// machine, more on two busy shared cores.
const dexStartTimeout = 30 * time.Second

// DexUser is a static password user of a Dex started by StartDex. Users
// log in with Email (Dex's password connector asks for the email, not the
// username) and Password; Username is the ID token's name and
// preferred_username (scope profile) and Groups its groups (scope groups).
type DexUser struct {
	Email, Username, Password string
	Groups                    []string
}

// DexClient is a static OAuth 2.0 client of a Dex started by StartDex. A
// Public client (a browser or CLI app) has no secret to keep and must use
// PKCE; Dex still accepts only the listed RedirectURIs when there are any.
type DexClient struct {
	ID, Secret   string
	RedirectURIs []string
	Public       bool
}

// Dex is a real Dex OpenID Connect provider on a loopback port, with
// memory storage: its keys, codes and sessions die with the process.
type Dex struct {
	// Issuer is the issuer URL, http://127.0.0.1:PORT/dex, which is
	// also what go-oidc's NewProvider wants.
	Issuer  string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// ErrDexLoginRefused is what TryLogin returns when Dex shows its login
// form again instead of redirecting: the email or password is wrong.
var ErrDexLoginRefused = errors.New("dex refused the login")

// StartDex starts the Dex that internal/testenv/dex-install.sh built, with
// memory storage, the password connector (Dex's "local" connector) holding
// users as static passwords with their groups, the given static clients,
// and no approval screen, so that a successful login redirects straight to
// the client's redirect URI with the code. It returns once the discovery
// document answers and stops Dex when the test ends. A missing binary
// goes to Require; a Dex that does not start fails the test with the tail
// of its log.
func StartDex(t testing.TB, clients []DexClient, users []DexUser) *Dex {
	t.Helper()
	bin, err := DexBinary()
	Require(t, "Dex "+DexVersion, err)

	dir := t.TempDir()
	port := strconv.Itoa(FreePorts(t, 1)[0])
	d := &Dex{
		Issuer:  "http://127.0.0.1:" + port + "/dex",
		logPath: filepath.Join(dir, "dex.log"),
		exited:  make(chan struct{}),
	}
	conf, err := dexConfig(d.Issuer, "127.0.0.1:"+port, clients, users)
	if err != nil {
		t.Fatalf("dex config: %v", err)
	}
	confPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(d.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The process outlives this call: Cleanup stops it, not a context.
	d.cmd = exec.CommandContext(context.Background(), bin, "serve", confPath)
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	// Dex must not outlive a test binary killed by its timeout.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	// Wait's error is the exit status, expected to be a signal here; the
	// child holds its own copy of the log file.
	go func() { _ = d.cmd.Wait(); _ = logFile.Close(); close(d.exited) }()
	t.Cleanup(d.stop)
	if err := d.waitServing(); err != nil {
		t.Fatalf("dex on %s: %v; log tail:\n%s", d.Issuer, err, d.LogTail())
	}
	return d
}

// DexBinary is the path of the Dex binary dex-install.sh built; an error
// says how to build it.
func DexBinary() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "bin", "dex")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("dex not installed (run internal/testenv/dex-install.sh): %w", err)
	}
	return p, nil
}

// LogTail is the end of Dex's log (a few kilobytes), for failure
// messages: Dex logs why it refused a request there, not to the client.
func (d *Dex) LogTail() string {
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return fmt.Sprintf("(no dex log: %v)", err)
	}
	return tail(string(b), 4000)
}

// dexConfig is Dex's configuration file. Dex reads YAML, of which JSON is
// a subset, so encoding/json writes it without a YAML dependency.
func dexConfig(issuer, listen string, clients []DexClient, users []DexUser) ([]byte, error) {
	type staticClient struct {
		ID           string   `json:"id"`
		Secret       string   `json:"secret,omitempty"`
		Name         string   `json:"name"`
		RedirectURIs []string `json:"redirectURIs"`
		Public       bool     `json:"public"`
	}
	type staticPassword struct {
		Email             string   `json:"email"`
		Hash              string   `json:"hash"`
		Username          string   `json:"username"`
		PreferredUsername string   `json:"preferredUsername"`
		UserID            string   `json:"userID"`
		Groups            []string `json:"groups"`
	}
	var cs []staticClient
	for _, c := range clients {
		cs = append(cs, staticClient{ID: c.ID, Secret: c.Secret, Name: c.ID, RedirectURIs: c.RedirectURIs, Public: c.Public})
	}
	var ps []staticPassword
	for _, u := range users {
		// Dex refuses hashes below bcrypt's default cost (10), so each
		// costs tens of milliseconds here and at every login.
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
		if err != nil {
			return nil, fmt.Errorf("hash the password of %s: %w", u.Email, err)
		}
		// A stable user id (the sub claim's source) that does not
		// depend on the order of users.
		sum := sha256.Sum256([]byte(u.Email))
		ps = append(ps, staticPassword{
			Email: u.Email, Hash: string(hash), Username: u.Username, PreferredUsername: u.Username,
			UserID: hex.EncodeToString(sum[:8]), Groups: u.Groups,
		})
	}
	return json.MarshalIndent(map[string]any{
		"issuer":  issuer,
		"storage": map[string]any{"type": "memory"},
		"web":     map[string]any{"http": listen},
		"logger":  map[string]any{"level": "debug", "format": "text"},
		"oauth2": map[string]any{
			"skipApprovalScreen": true,
			"responseTypes":      []string{"code"},
		},
		// The password connector, which Dex names "local": its login
		// form is at /dex/auth/local/login.
		"enablePasswordDB": true,
		"staticPasswords":  ps,
		"staticClients":    cs,
	}, "", "  ")
}

// waitServing polls until the discovery document names the issuer.
func (d *Dex) waitServing() error {
	deadline := time.Now().Add(dexStartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		err := d.ping(client)
		if err == nil {
			return nil
		}
		select {
		case <-d.exited:
			return errors.New("dex exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no discovery document after %s: %w", dexStartTimeout, err)
		}
	}
}

func (d *Dex) ping(client *http.Client) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, d.Issuer+"/.well-known/openid-configuration", http.NoBody)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discovery answered %s", resp.Status)
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return fmt.Errorf("discovery document: %w", err)
	}
	if doc.Issuer != d.Issuer {
		return fmt.Errorf("discovery names issuer %q, want %q", doc.Issuer, d.Issuer)
	}
	return nil
}

func (d *Dex) stop() {
	// An error means the process is already gone, which exited reports.
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// Login logs user in with password the way a browser would, without one:
// it opens authURL (a client's AuthCodeURL on this Dex), fills in and
// posts Dex's login form, and returns the URL Dex finally redirects to,
// the client's redirect URI with code and state (or error) in its query,
// without requesting it. Any failure, a wrong password included, fails
// the test with the tail of Dex's log; TryLogin returns it instead.
func (d *Dex) Login(t testing.TB, authURL, user, password string) (redirectedTo *url.URL) {
	t.Helper()
	u, err := d.TryLogin(t.Context(), authURL, user, password)
	if err != nil {
		t.Fatalf("dex login as %s: %v; dex log tail:\n%s", user, err, d.LogTail())
	}
	return u
}

// TryLogin is Login returning its failure: ErrDexLoginRefused (wrapped)
// when Dex shows the form again, as it does for a wrong email or password.
//
// The browser's part, step by step: GET authURL, which Dex (with one
// connector) redirects to /dex/auth/local?…, which redirects to
// /dex/auth/local/login?back=&state=<auth request id>; that page holds a
// form (method post, action the same path and query) with the fields
// "login" (the email) and "password". A good login answers 303 See Other
// to the client's redirect URI with ?code=…&state=…; a bad one answers 200
// with the form again. Redirects are followed only while they stay under
// the issuer, and cookies are kept in a jar, as a browser would.
func (d *Dex) TryLogin(ctx context.Context, authURL, user, password string) (*url.URL, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	var leftDex *url.URL
	client := &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !d.owns(req.URL) {
				leftDex = req.URL
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("more than 10 redirects within dex")
			}
			return nil
		},
	}
	page, pageURL, err := d.get(ctx, client, authURL, &leftDex)
	if err != nil {
		return nil, err
	}
	if leftDex != nil {
		// Dex answered without a login, e.g. with an error for the
		// client such as an unknown redirect URI or scope.
		return leftDex, nil
	}
	action, fields, err := loginForm(page)
	if err != nil {
		return nil, fmt.Errorf("login page %s: %w", pageURL, err)
	}
	target, err := pageURL.Parse(action)
	if err != nil {
		return nil, fmt.Errorf("login form action %q: %w", action, err)
	}
	fields.Set("login", user)
	fields.Set("password", password)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), strings.NewReader(fields.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post the login form to %s: %w", target, err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if leftDex != nil {
		return leftDex, nil
	}
	if _, _, err := loginForm(body); err == nil {
		return nil, fmt.Errorf("%w: the login form came back (%s)", ErrDexLoginRefused, resp.Status)
	}
	return nil, fmt.Errorf("the login form's post ended at %s with %s, not at a redirect URI: %s", resp.Request.URL, resp.Status, tail(string(body), 500))
}

// owns reports whether u is one of this Dex's pages.
func (d *Dex) owns(u *url.URL) bool {
	return strings.HasPrefix(u.String(), d.Issuer+"/")
}

// get fetches rawURL with client, returning the final page and its URL;
// *leftDex is set when a redirect left Dex.
func (d *Dex) get(ctx context.Context, client *http.Client, rawURL string, leftDex **url.URL) ([]byte, *url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, http.NoBody)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("get %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if *leftDex == nil && resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("get %s: %s at %s: %s", rawURL, resp.Status, resp.Request.URL, tail(string(bytes.TrimSpace(body)), 500))
	}
	return body, resp.Request.URL, nil
}

// loginForm finds the form holding a password field in page and returns
// its action and the values of its other inputs (none today, but a
// hidden field added by a later Dex would travel along).
func loginForm(page []byte) (action string, fields url.Values, err error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return "", nil, err
	}
	var found bool
	var walk func(n *html.Node, form *html.Node)
	walk = func(n *html.Node, form *html.Node) {
		if n.Type == html.ElementNode && n.Data == "form" {
			form = n
			fields = url.Values{}
		}
		if n.Type == html.ElementNode && n.Data == "input" && form != nil && !found {
			name, value := attr(n, "name"), attr(n, "value")
			if name != "" {
				fields.Set(name, value)
			}
			if attr(n, "type") == "password" {
				found, action = true, attr(form, "action")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if found {
				return
			}
			walk(c, form)
		}
	}
	walk(doc, nil)
	if !found {
		return "", nil, errors.New("no form with a password field")
	}
	return action, fields, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KeycloakVersion is the Keycloak release keycloak-install.sh unpacks and
// builds into .cache/keycloak-<version>, as pinned in
// testdata/keycloak/pom.xml. Keycloak is the identity provider of the
// OAUTHBEARER tests because Dex v2.45.1 has no client-credentials grant.
const KeycloakVersion = "25.0.6"

// KeycloakRealm is the realm holding the OAUTHBEARER clients.
const KeycloakRealm = "kafka"

// keycloakStartTimeout bounds one start: about 25 s on two busy cores.
const keycloakStartTimeout = 2 * time.Minute

// KeycloakClient is a confidential client of the realm that may use the
// client-credentials grant. Its access tokens carry Audience in aud, and
// live TokenLifespan when it is set (the realm's five minutes otherwise).
type KeycloakClient struct {
	ID, Secret, Audience string
	TokenLifespan        time.Duration
}

// Keycloak is a real Keycloak on a loopback port with an in-memory
// database: its realm, clients and keys die with the process.
type Keycloak struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL     string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// Issuer is the iss of the realm's tokens.
func (k *Keycloak) Issuer() string { return k.URL + "/realms/" + KeycloakRealm }

// TokenURL is the realm's token endpoint.
func (k *Keycloak) TokenURL() string { return k.Issuer() + "/protocol/openid-connect/token" }

// JWKSURL is where the realm publishes the keys that sign its tokens.
func (k *Keycloak) JWKSURL() string { return k.Issuer() + "/protocol/openid-connect/certs" }

// KeycloakHome is the folder keycloak-install.sh filled; an error says how
// to fill it.
func KeycloakHome() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "keycloak-"+KeycloakVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return "", fmt.Errorf("keycloak %s not installed (run internal/testenv/keycloak-install.sh): %w", KeycloakVersion, err)
	}
	return dir, nil
}

// startKeycloak starts the installed Keycloak, creates the realm with the
// clients and returns once their tokens can be had. It is not tied to a
// test: the Kafka nodes that trust it outlive every test.
func startKeycloak(clients []KeycloakClient) (*Keycloak, error) {
	home, err := KeycloakHome()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "qw-keycloak-*.log")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ports[0])
	k := &Keycloak{URL: "http://127.0.0.1:" + port, logPath: logFile.Name(), exited: make(chan struct{})}
	// The server was built for an in-memory database by the install
	// script, so --optimized skips the build; the fixed hostname makes
	// the issuer the same whoever asks.
	// The management interface has a port of its own (9000 by default):
	// two test packages running Keycloak at once would both want it.
	k.cmd = exec.CommandContext(context.Background(), filepath.Join(home, "bin", "kc.sh"), "start", "--optimized",
		"--http-enabled=true", "--http-host=127.0.0.1", "--http-port="+port,
		"--http-management-port="+strconv.Itoa(ports[1]), "--hostname="+k.URL)
	// Each server keeps its transaction log in a directory of its own:
	// test packages run in parallel, and two Keycloaks sharing the
	// install's data/ would share one object store.
	txlog, err := os.MkdirTemp("", "qw-keycloak-txlog-*")
	if err != nil {
		return nil, err
	}
	k.cmd.Env = append(os.Environ(), "KEYCLOAK_ADMIN=admin", "KEYCLOAK_ADMIN_PASSWORD=admin",
		"JAVA_OPTS_APPEND=-XX:TieredStopAtLevel=1 -Dquarkus.transaction-manager.object-store.directory="+txlog)
	k.cmd.Stdout, k.cmd.Stderr = logFile, logFile
	// Keycloak must not outlive a test binary killed by its timeout.
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := k.cmd.Start(); err != nil {
		_ = logFile.Close()
		_ = os.RemoveAll(txlog)
		return nil, fmt.Errorf("start keycloak: %w", err)
	}
	go func() { _ = k.cmd.Wait(); _ = logFile.Close(); _ = os.RemoveAll(txlog); close(k.exited) }()
	if err := k.setUp(clients); err != nil {
		logTail := k.LogTail() // before Stop removes the log
		k.Stop()
		return nil, fmt.Errorf("keycloak on %s: %w; log tail:\n%s", k.URL, err, logTail)
	}
	return k, nil
}

// setUp waits for the admin account and creates the realm.
func (k *Keycloak) setUp(clients []KeycloakClient) error {
	ctx, cancel := context.WithTimeout(context.Background(), keycloakStartTimeout)
	defer cancel()
	admin, err := k.adminToken(ctx)
	if err != nil {
		return err
	}
	body, err := json.Marshal(keycloakRealm(clients))
	if err != nil {
		return err
	}
	return k.post(ctx, k.URL+"/admin/realms", admin, body)
}

// adminToken polls until the master realm's admin can log in, which is
// when the server serves.
func (k *Keycloak) adminToken(ctx context.Context) (string, error) {
	form := url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {"admin"}, "password": {"admin"}}
	var last error
	for {
		tok, err := k.token(ctx, k.URL+"/realms/master/protocol/openid-connect/token", form)
		if err == nil {
			return tok, nil
		}
		last = err
		select {
		case <-k.exited:
			return "", errors.New("keycloak exited")
		case <-ctx.Done():
			return "", fmt.Errorf("not serving: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// token is the access token a token endpoint returns for form.
func (k *Keycloak) token(ctx context.Context, endpoint string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return "", fmt.Errorf("token: %s: %s", resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.AccessToken, nil
}

// post sends an admin API request and wants 201 Created.
func (k *Keycloak) post(ctx context.Context, endpoint, bearer string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("POST %s: %s: %s", endpoint, resp.Status, b)
	}
	return nil
}

// keycloakRealm is the realm's representation: each client a service
// account (the client-credentials grant) whose tokens name its audience.
func keycloakRealm(clients []KeycloakClient) map[string]any {
	var cs []map[string]any
	for _, c := range clients {
		attrs := map[string]string{}
		if c.TokenLifespan > 0 {
			attrs["access.token.lifespan"] = strconv.Itoa(int(c.TokenLifespan.Seconds()))
		}
		cs = append(cs, map[string]any{
			"clientId": c.ID, "secret": c.Secret, "enabled": true, "publicClient": false,
			"clientAuthenticatorType": "client-secret", "serviceAccountsEnabled": true,
			"standardFlowEnabled": false, "directAccessGrantsEnabled": false,
			"attributes": attrs,
			"protocolMappers": []map[string]any{{
				"name": "audience", "protocol": "openid-connect", "protocolMapper": "oidc-audience-mapper",
				"config": map[string]string{"included.custom.audience": c.Audience, "access.token.claim": "true"},
			}},
		})
	}
	return map[string]any{"realm": KeycloakRealm, "enabled": true, "clients": cs}
}

// LogTail is the end of Keycloak's log, for failure messages.
func (k *Keycloak) LogTail() string {
	b, err := os.ReadFile(k.logPath)
	if err != nil {
		return fmt.Sprintf("(no keycloak log: %v)", err)
	}
	return tail(string(b), 4000)
}

// Stop ends Keycloak and removes its log.
func (k *Keycloak) Stop() {
	if k.cmd.Process != nil {
		_ = k.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-k.exited:
		case <-time.After(20 * time.Second):
			_ = k.cmd.Process.Kill()
			<-k.exited
		}
	}
	_ = os.Remove(k.logPath)
}

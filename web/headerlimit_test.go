package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/web/api"
)

// TestOversizedRequestAnswersTheErrorShape sends request lines and
// headers over the limit to a served server: the API answers 431 in its
// one JSON error shape and a page a plain-text 431, with the security
// headers of every answer; a request just under the limit is served.
func TestOversizedRequestAnswersTheErrorShape(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- testServer(true).Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	long := strings.Repeat("x", maxHeaderBytes+8<<10)
	for _, tc := range []struct {
		name, path, header string
		code               int
		json               bool
	}{
		{name: "api path", path: "/api/v1/groups/prod/" + long, code: 431, json: true},
		{name: "api header", path: "/api/v1/groups", header: "X-Long: " + long, code: 431, json: true},
		{name: "page path", path: "/kafka/prod/groups/" + long, code: 431},
		{name: "under the limit", path: "/api/v1/groups/prod/" + long[:maxHeaderBytes/2], code: 404, json: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawGet(t, l.Addr().String(), tc.path, tc.header)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tc.code, body)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no security headers: %v", resp.Header)
			}
			var e api.Error
			isJSON := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && json.Unmarshal(body, &e) == nil && e.Error != ""
			if isJSON != tc.json {
				t.Errorf("JSON error %v, want %v: %s %.200s", isJSON, tc.json, resp.Header.Get("Content-Type"), body)
			}
		})
	}
}

// rawGet sends a GET of path (not escaped, as a client would send a long
// one) with an extra header line, and reads the answer.
func rawGet(t *testing.T, addr, path, header string) *http.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n"
	if header != "" {
		req += header + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

package web

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/api"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/ui"
	"github.com/queuewatch/queuewatch/web/view"
)

// Options configure the server: what its surfaces read (view.Options).
type Options = view.Options

// ShardPlace is where a cluster another shard polls is watched.
type ShardPlace = view.ShardPlace

// Server is queuewatch's HTTP server: the middleware chain and the route
// table over its two surfaces, the JSON API (package api) and the pages
// (package ui), which read through one view of the data (package view).
type Server struct {
	e    *echo.Echo
	opts Options
	view *view.Server
	api  *api.Server
	ui   *ui.Server
	auth *auth.Authenticator
	// needs are the route table's needs by "METHOD path" (routes.go).
	needs map[string]need
}

// New builds the server and its routes.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	v := view.New(opts, assetVersion())
	s := &Server{e: e, opts: opts, view: v, api: api.New(v), ui: ui.New(v)}
	e.HTTPErrorHandler = s.handleError
	// Order matters: headers on every answer (errors included), then
	// oversized requests are refused, then cross-origin browser requests
	// are refused before anything looks at the credentials the browser
	// attached, then who is asking.
	s.auth = auth.NewAuthenticator(opts.Auth)
	e.Use(securityHeaders, limitHeaders, auth.CrossOrigin(), s.auth.Middleware(s.isPublic), compress(), s.shardElsewhere)
	s.addRoutes()
	return s
}

// ServeHTTP makes the server usable with httptest.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.e.ServeHTTP(w, r) }

// maxHeaderBytes bounds a request's line and headers. net/http answers a
// request over its own limit with a plain-text 431 that no handler sees,
// so the server lets net/http read up to readHeaderBytes (its default)
// and limitHeaders answers over maxHeaderBytes in the errors' one shape.
// Only a request over readHeaderBytes still gets net/http's answer.
const (
	maxHeaderBytes  = 64 << 10
	readHeaderBytes = http.DefaultMaxHeaderBytes
)

// limitHeaders refuses a request whose line and headers are over
// maxHeaderBytes, with the 4 KiB of slack net/http allowed when it
// enforced that limit itself.
func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + len(r.Host) + 12
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4
			}
		}
		if n > maxHeaderBytes+4096 {
			return echo.NewHTTPError(http.StatusRequestHeaderFieldsTooLarge, "request line and headers over 64 KiB")
		}
		return next(c)
	}
}

// Serve serves on l until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           s.e,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    readHeaderBytes,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) readyz(c echo.Context) error {
	if !s.opts.Monitor.Ready() {
		return c.String(http.StatusServiceUnavailable, "waiting for the first poll of every source\n")
	}
	return c.String(http.StatusOK, "ready\n")
}

// securityHeaders sets headers that keep anything a message contains from
// running in the operator's browser, and the UI from being framed.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// compress gzips pages, JSON and assets (htmx and uPlot shrink to a
// third). /metrics is left alone: the collectors serve a pre-compressed
// exposition themselves.
func compress() echo.MiddlewareFunc {
	return middleware.GzipWithConfig(middleware.GzipConfig{
		Level:     5,
		MinLength: 1024,
		Skipper:   func(c echo.Context) bool { return c.Request().URL.Path == "/metrics" },
	})
}

// handleError answers JSON for the API and a plain page elsewhere, without
// echoing anything from the request. API errors are one shape, apiError.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, body := http.StatusInternalServerError, api.Error{Error: "internal error"}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		switch m := he.Message.(type) {
		case string:
			body.Error = m
		case api.Error:
			body = m
		default:
			body.Error = http.StatusText(code)
		}
	}
	if code >= 500 {
		s.opts.Logger.Error("request failed", "path", c.Path(), "err", err)
	}
	if isAPI(c) {
		body.Detail = cmp.Or(body.Detail, routeDetail(err))
		_ = c.JSON(code, body)
		return
	}
	if s.pageRequest(c, code) {
		_ = view.Render(c, code, components.ErrorPage(s.ui.Chrome(c, errorTitle(code), ""), code, body.Error))
		return
	}
	_ = c.String(code, body.Error+"\n")
}

// pageRequest reports whether an error answers a signed-in person's page
// request, which gets the product's error page; probes, assets, scripts
// and the sign-in challenge get plain text.
func (s *Server) pageRequest(c echo.Context, code int) bool {
	_, signedIn := auth.PrincipalFrom(c.Request().Context())
	return signedIn && code != http.StatusUnauthorized && c.Request().Method == http.MethodGet &&
		!ui.Partial(c) && !s.isPublic(c)
}

// errorTitle names an error page by its status.
func errorTitle(code int) string {
	switch {
	case code == http.StatusNotFound:
		return "Not found"
	case code == http.StatusForbidden:
		return "Not allowed"
	case code < 500:
		return "Cannot show this page"
	}
	return "Something failed"
}

// routeDetail explains echo's own answers for a path or method the API
// does not have.
func routeDetail(err error) string {
	if errors.Is(err, echo.ErrNotFound) || errors.Is(err, echo.ErrMethodNotAllowed) {
		return "the API's paths and methods are described at /api/v1/openapi.json"
	}
	return ""
}

func isAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return len(p) >= 5 && p[:5] == "/api/"
}

// CheckListenAuth refuses to serve without authentication anywhere but
// on loopback (auth.CheckListenAuth).
func CheckListenAuth(listen string, a config.Auth, insecureNoAuth bool) error {
	return auth.CheckListenAuth(listen, a, insecureNoAuth)
}

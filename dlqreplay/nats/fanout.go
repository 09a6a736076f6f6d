package nats

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// SubjectConsumers names stream's consumers whose filter takes subject: a
// message replayed to subject is delivered to each of them.
func (b *Backend) SubjectConsumers(ctx context.Context, stream, subject string) ([]string, error) {
	cl, err := b.opts.Cluster.NewClient(ctx, "dlq consumers", nil)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	infos, _, err := cl.Consumers(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("list consumers of %s: %w", stream, err)
	}
	var out []string
	for _, ci := range infos {
		if takes(ci.Config, subject) {
			out = append(out, ci.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// takes reports whether a consumer's filter (none: every subject) takes
// subject.
func takes(cfg jetstream.ConsumerConfig, subject string) bool {
	filters := cfg.FilterSubjects
	if cfg.FilterSubject != "" {
		filters = append(filters, cfg.FilterSubject)
	}
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if subjectMatches(f, subject) {
			return true
		}
	}
	return false
}

// subjectMatches matches a subject against a filter with NATS wildcards:
// '*' is one token, '>' the rest (one token or more).
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		switch {
		case f == ">":
			return len(st) > i
		case i >= len(st):
			return false
		case f != "*" && f != st[i]:
			return false
		}
	}
	return len(ft) == len(st)
}

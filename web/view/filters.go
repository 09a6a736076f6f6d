package view

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/store"
)

// FilterStore keeps the filters saved on DLQs, shared by every replica
// (*store.Store).
type FilterStore interface {
	SaveFilter(ctx context.Context, f store.SavedFilter) error
	SavedFilters(ctx context.Context, dlq string) ([]store.SavedFilter, error)
	DeleteFilter(ctx context.Context, dlq, name string) (bool, error)
}

// MaxFilterName bounds a saved filter's name.
const MaxFilterName = 64

var errNoFilters = echo.NewHTTPError(http.StatusServiceUnavailable, "saved filters need the store, which this server was not given")

// HasFilters reports whether this server keeps saved filters.
func (s *Server) HasFilters() bool { return s.opts.Filters != nil }

// Filters lists the filters saved on DLQ id, as the principal may see
// them: an expression that reads a value masked there reads [masked] to
// someone who may not unmask (its literals may be the clear values).
func (d DLQs) Filters(ctx context.Context, id string) ([]store.SavedFilter, error) {
	if d.s.opts.Filters == nil {
		return nil, errNoFilters
	}
	fs, err := d.s.opts.Filters.SavedFilters(ctx, id)
	if err != nil {
		return nil, err
	}
	p := d.s.opts.Inspect.Policy(id)
	if p == nil || d.s.canUnmask(d.c, id) {
		return fs, nil
	}
	for i := range fs {
		if whereMasked(p, fs[i].Where) {
			fs[i].Where = masking.Redacted
		}
	}
	return fs, nil
}

// SaveFilter saves a CEL filter under name on DLQ id for everyone who
// reads it, once it compiles and, unless the principal may unmask, reads
// no masked value (CheckMaskedWhere). It replaces a filter of that name.
func (d DLQs) SaveFilter(ctx context.Context, id, name, where string) (store.SavedFilter, error) {
	if d.s.opts.Filters == nil {
		return store.SavedFilter{}, errNoFilters
	}
	if err := checkFilterName(name); err != nil {
		return store.SavedFilter{}, err
	}
	if strings.TrimSpace(where) == "" {
		return store.SavedFilter{}, echo.NewHTTPError(http.StatusBadRequest, "where is required: the CEL expression to save")
	}
	if err := d.s.CheckMaskedWhere(d.c, id, where); err != nil {
		return store.SavedFilter{}, err
	}
	f := store.SavedFilter{DLQ: id, Name: name, Where: where, Who: Who(ctx), At: time.Now().UTC().Truncate(time.Millisecond)}
	return f, d.s.opts.Filters.SaveFilter(ctx, f)
}

// DeleteFilter removes the filter name of DLQ id: 404 when there is none.
func (d DLQs) DeleteFilter(ctx context.Context, id, name string) error {
	if d.s.opts.Filters == nil {
		return errNoFilters
	}
	ok, err := d.s.opts.Filters.DeleteFilter(ctx, id, name)
	if err == nil && !ok {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("no filter %q is saved on this DLQ", name))
	}
	return err
}

func checkFilterName(name string) error {
	if name == "" || len(name) > MaxFilterName || strings.TrimSpace(name) != name ||
		strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == '/' }) {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("filter name %q: 1 to %d characters, no slash, control character or surrounding space", name, MaxFilterName))
	}
	return nil
}

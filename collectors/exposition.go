package collectors

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// exposition caches the text exposition of everything the Collector exports.
// That output changes only when a poll finishes, so it is built at most once
// per poll (on the first scrape after it) and a scrape costs a copy, however
// many scrapers there are. It is built with textSink rather than
// client_golang's registry: for 18,000 group-partitions the registry's
// gather-and-encode takes hundreds of milliseconds of CPU.
type exposition struct {
	c *Collector
	// vecs holds the few metrics kept in client_golang vectors (the poll
	// duration histogram and error counters), encoded the ordinary way.
	vecs *prometheus.Registry

	// current is what scrapes serve. It is replaced whole, never modified,
	// so a scrape never waits for a rebuild: it gets the previous poll's
	// output until the new one is ready.
	current atomic.Pointer[encoded]

	build sync.Mutex // one rebuild at a time
	sizes map[*family]int
}

// encoded is one generation's exposition: first the plain text as chunks to
// write in order, for the moment its gzipped copy is being built, then that
// copy alone.
type encoded struct {
	gen   uint64
	plain [][]byte
	gz    []byte
}

func newExposition(c *Collector) *exposition {
	vecs := prometheus.NewRegistry()
	vecs.MustRegister(c.metrics.duration, c.metrics.errors)
	return &exposition{c: c, vecs: vecs}
}

// latest returns the newest built exposition, building one if there is none.
func (e *exposition) latest() (*encoded, error) {
	if cur := e.current.Load(); cur != nil {
		return cur, nil
	}
	return e.rebuild(e.c.generation.Load())
}

// rebuild encodes generation gen unless something at least as new is
// already published.
func (e *exposition) rebuild(gen uint64) (*encoded, error) {
	e.build.Lock()
	defer e.build.Unlock()
	if cur := e.current.Load(); cur != nil && cur.gen >= gen {
		return cur, nil
	}
	vecs, err := encodeText(e.vecs)
	if err != nil {
		return nil, err
	}
	text := newTextSink(e.sizes)
	e.c.emit(text)
	e.sizes = text.sizes()
	plain := append([][]byte{vecs}, text.chunks()...)
	// The plain text is served at once and the gzipped copy follows:
	// compressing 12 MB of it takes a tenth of a second, which the first
	// data after a start need not wait for.
	e.current.Store(&encoded{gen: gen, plain: plain})
	gz, err := gzipChunks(plain)
	if err != nil {
		return nil, err
	}
	// Only the compressed copy is kept: Prometheus asks for it, and
	// the plain text, 12 MB at 100,000 group-partitions, was the largest
	// thing held between polls. Plain scrapes decompress it.
	enc := &encoded{gen: gen, gz: gz}
	e.current.Store(enc)
	return enc, nil
}

func encodeText(g prometheus.Gatherer) ([]byte, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, fmt.Errorf("encode %s: %w", mf.GetName(), err)
		}
	}
	return buf.Bytes(), nil
}

// gzipChunks compresses at BestSpeed: the exposition is label-heavy text
// that compresses about 20× even so, and this runs once per poll.
func gzipChunks(chunks [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	for _, c := range chunks {
		if _, err := zw.Write(c); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Handler serves /metrics: the process's own metrics from process, gathered
// live, followed by the collector's cached exposition. With gzip the body is
// two gzip members, which RFC 1952 readers (Prometheus, Go, browsers, curl)
// decode as one stream.
func (c *Collector) Handler(process prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc, err := c.exposition.latest()
		if err != nil {
			http.Error(w, "encode metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		self, err := encodeText(process)
		if err != nil {
			http.Error(w, "encode process metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		h.Add("Vary", "Accept-Encoding")
		if enc.gz == nil {
			_, _ = w.Write(self)
			for _, c := range enc.plain {
				_, _ = w.Write(c)
			}
			return
		}
		if !acceptsGzip(r) {
			_, _ = w.Write(self)
			if zr, err := gzip.NewReader(bytes.NewReader(enc.gz)); err == nil {
				_, _ = io.Copy(w, zr)
			}
			return
		}
		selfGz, err := gzipChunks([][]byte{self})
		if err != nil {
			http.Error(w, "compress metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h.Set("Content-Encoding", "gzip")
		_, _ = w.Write(selfGz)
		_, _ = w.Write(enc.gz)
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

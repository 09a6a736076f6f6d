// Package inspect prepares dead letters for display: keys and bodies in a
// schema registry's wire format are decoded, then the DLQ's masking rules
// are applied, before a page, the API, a download or the archive view
// shows them; and it records who read them (the body-read audit).
//
// Everything here works on copies for display. Replay, move and restore
// read the DLQ themselves and send the bytes on the wire.
package inspect

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// Decoder decodes one body (Decode) or key (DecodeKey); ok is false when
// b is not in the decoder's format (it is then shown as JSON, text or hex).
type Decoder interface {
	Decode(ctx context.Context, b []byte) (d queue.Decoded, ok bool)
	DecodeKey(ctx context.Context, b []byte) (d queue.Decoded, ok bool)
}

// ReadLog keeps the body-read audit (*store.Store).
type ReadLog interface {
	RecordBodyRead(ctx context.Context, r store.BodyRead) error
	BodyReads(ctx context.Context, q store.ReadQuery) ([]store.BodyRead, error)
}

// Options configure an Inspector. Every field may be zero.
type Options struct {
	// Decoders by cluster, keyed by DecoderKey.
	Decoders map[string]Decoder
	Masker   *masking.Masker
	Reads    ReadLog
	// BodyReads is config.Audit.BodyReads: auto, all or off.
	BodyReads string
	Logger    *slog.Logger
}

// DecoderKey keys a cluster's decoder.
func DecoderKey(b queue.Broker, cluster string) string { return string(b) + ":" + cluster }

// Inspector decodes, masks and audits reads. A nil *Inspector shows
// messages as read and records nothing.
type Inspector struct {
	opts Options
}

// New returns an Inspector.
func New(opts Options) *Inspector {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BodyReads == "" {
		opts.BodyReads = config.BodyReadsAuto
	}
	return &Inspector{opts: opts}
}

// Policy is the masking of a DLQ; nil when nothing of it is masked.
func (in *Inspector) Policy(dlqID string) *masking.Policy {
	if in == nil {
		return nil
	}
	return in.opts.Masker.For(dlqID)
}

// Messages returns msgs of the DLQ dlqID as they may be shown: decoded,
// then masked unless clear (the caller checked the unmask permission).
// msgs are not changed.
func (in *Inspector) Messages(ctx context.Context, dlqID string, msgs []queue.Message, inClear bool) []queue.Message {
	out := make([]queue.Message, len(msgs))
	copy(out, msgs)
	if in == nil {
		return out
	}
	dec := in.decoder(dlqID)
	policy := in.Policy(dlqID)
	for i := range out {
		m := &out[i]
		if dec != nil {
			m.Decoded = decode(ctx, dec.Decode, m.Body)
			m.KeyDecoded = decode(ctx, dec.DecodeKey, m.Key)
		}
		if !inClear {
			*m = policy.Message(*m)
		}
	}
	return out
}

func decode(ctx context.Context, dec func(context.Context, []byte) (queue.Decoded, bool), b []byte) *queue.Decoded {
	if len(b) == 0 {
		return nil
	}
	d, ok := dec(ctx, b)
	if !ok {
		return nil
	}
	return &d
}

func (in *Inspector) decoder(dlqID string) Decoder {
	ref, err := queue.ParseDLQID(dlqID)
	if err != nil {
		return nil
	}
	return in.opts.Decoders[DecoderKey(ref.Broker, ref.Cluster)]
}

// Surfaces a body is read on, as the audit names them.
const (
	SurfacePage     = "page"
	SurfaceAPI      = "api"
	SurfaceMessage  = "message"
	SurfaceDownload = "download"
	SurfaceArchive  = "archive"
	// SurfaceSearch: the messages a search across DLQs showed.
	SurfaceSearch = "search"
)

// Read records that who read the messages ids of dlqID on surface, when
// the audit asks for it: a clear read always, a masked one as
// audit.body_reads says. Only a clear read's failure is returned: clear
// values are not shown unless the view is on record. A masked read's is
// logged.
func (in *Inspector) Read(ctx context.Context, who, dlqID, surface string, inClear bool, ids []string) error {
	if in == nil || len(ids) == 0 {
		return nil
	}
	switch in.opts.BodyReads {
	case config.BodyReadsOff:
		if !inClear {
			return nil
		}
	case config.BodyReadsAuto:
		if !inClear && in.Policy(dlqID) == nil {
			return nil
		}
	}
	if in.opts.Reads == nil {
		if inClear {
			return errors.New("no audit store to record a clear view in")
		}
		return nil
	}
	r := store.BodyRead{At: time.Now(), Who: who, DLQ: dlqID, Surface: surface, Clear: inClear, Messages: ids}
	err := in.opts.Reads.RecordBodyRead(context.WithoutCancel(ctx), r)
	if err != nil && !inClear {
		in.opts.Logger.Error("body read not audited", "dlq", dlqID, "who", who, "surface", surface, "err", err)
		return nil
	}
	return err
}

// Reads lists the newest body reads that q selects.
func (in *Inspector) Reads(ctx context.Context, q store.ReadQuery) ([]store.BodyRead, error) {
	if in == nil || in.opts.Reads == nil {
		return nil, nil
	}
	return in.opts.Reads.BodyReads(ctx, q)
}

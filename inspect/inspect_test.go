package inspect

import (
	"context"
	"errors"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

type readLog struct {
	reads []store.BodyRead
	err   error
}

func (l *readLog) RecordBodyRead(_ context.Context, r store.BodyRead) error {
	if l.err != nil {
		return l.err
	}
	l.reads = append(l.reads, r)
	return nil
}

func (l *readLog) BodyReads(context.Context, store.ReadQuery) ([]store.BodyRead, error) {
	return l.reads, nil
}

// TestReadAudit: auto records the DLQs a rule covers, all every DLQ, off
// none; a clear read is recorded whatever the setting, and its failure is
// returned while a masked read's is not.
func TestReadAudit(t *testing.T) {
	p, _ := jsonpath.Parse("$.card")
	masker := masking.New([]masking.Rule{{DLQs: nil, Fields: []jsonpath.Path{p}}}, nil)
	ctx := context.Background()
	for _, tt := range []struct {
		mode   string
		masker *masking.Masker
		want   int // of a masked and a clear read
	}{
		{config.BodyReadsAuto, masker, 2},
		{config.BodyReadsAuto, nil, 1},
		{config.BodyReadsAll, nil, 2},
		{config.BodyReadsOff, masker, 1},
	} {
		log := &readLog{}
		in := New(Options{Masker: tt.masker, Reads: log, BodyReads: tt.mode})
		if err := in.Read(ctx, "alice", "kafka:c::x.DLT", SurfacePage, false, []string{"0@1"}); err != nil {
			t.Fatal(err)
		}
		if err := in.Read(ctx, "ada", "kafka:c::x.DLT", SurfaceMessage, true, []string{"0@1"}); err != nil {
			t.Fatal(err)
		}
		if len(log.reads) != tt.want || !log.reads[len(log.reads)-1].Clear {
			t.Errorf("%s (masking %v): recorded %+v", tt.mode, tt.masker != nil, log.reads)
		}
	}
	down := New(Options{Masker: masker, Reads: &readLog{err: errors.New("down")}})
	if err := down.Read(ctx, "alice", "q", SurfaceAPI, false, []string{"a"}); err != nil {
		t.Errorf("a masked read's audit failure was returned: %v", err)
	}
	if err := down.Read(ctx, "ada", "q", SurfaceMessage, true, []string{"a"}); err == nil {
		t.Error("a clear read's audit failure was swallowed")
	}
	if err := New(Options{Masker: masker}).Read(ctx, "ada", "q", SurfaceMessage, true, []string{"a"}); err == nil {
		t.Error("a clear read with no audit store was allowed")
	}
}

// TestMessagesDecodeThenMask: a decoder's value is masked, the input is
// not changed, and a nil Inspector shows messages as read.
func TestMessagesDecodeThenMask(t *testing.T) {
	p, _ := jsonpath.Parse("$.card")
	in := New(Options{
		Decoders: map[string]Decoder{DecoderKey(queue.Kafka, "prod"): fixedDecoder{}},
		Masker:   masking.New([]masking.Rule{{Fields: []jsonpath.Path{p}}}, nil),
	})
	msgs := []queue.Message{{ID: "0@1", Body: []byte{0, 0, 0, 0, 1, 9}, Key: []byte("k")}}
	got := in.Messages(context.Background(), "kafka:prod::x.DLT", msgs, false)
	if got[0].Decoded == nil || string(got[0].Decoded.Value) != `{"card":"[masked]","id":1}` || got[0].Masked != 1 {
		t.Fatalf("shown %+v", got[0].Decoded)
	}
	if got[0].KeyDecoded == nil || got[0].KeyDecoded.Schema.Subject != "x-key" {
		t.Fatalf("key %+v", got[0].KeyDecoded)
	}
	if msgs[0].Decoded != nil || len(msgs[0].Body) != 6 {
		t.Fatal("the input was changed")
	}
	inClear := in.Messages(context.Background(), "kafka:prod::x.DLT", msgs, true)
	if string(inClear[0].Decoded.Value) != `{"card":"4111","id":1}` {
		t.Fatalf("clear %s", inClear[0].Decoded.Value)
	}
	var none *Inspector
	if got := none.Messages(context.Background(), "x", msgs, false); got[0].Decoded != nil || none.Policy("x") != nil {
		t.Fatal("a nil Inspector changed the messages")
	}
}

type fixedDecoder struct{}

func (fixedDecoder) Decode(context.Context, []byte) (queue.Decoded, bool) {
	return queue.Decoded{Format: "avro", Schema: queue.SchemaRef{ID: 1, Subject: "x-value"}, Value: []byte(`{"card":"4111","id":1}`)}, true
}

func (fixedDecoder) DecodeKey(context.Context, []byte) (queue.Decoded, bool) {
	return queue.Decoded{Format: "avro", Schema: queue.SchemaRef{ID: 2, Subject: "x-key"}, Value: []byte(`"k"`)}, true
}

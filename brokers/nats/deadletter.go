package nats

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/queue"
)

// The subjects on which JetStream announces that a consumer gave up on a
// message; the stream and consumer names follow as two more tokens.
// JetStream keeps no dead letter of its own: the advisory, with the stream
// sequence, is all there is.
const (
	AdvisoryMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	AdvisoryTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
)

// Reasons a message was dead-lettered, as the HeaderReason header and the
// DLQ's failure groups show them.
const (
	ReasonMaxDeliveries = "max_deliveries"
	ReasonTerminated    = "terminated"
)

// Headers on a captured copy. They name where and why the original died;
// the original's own headers follow unchanged, except its Nats-* publish
// directives (a Nats-Msg-Id, Nats-Expected-*, Nats-TTL would act on the
// dead-letter stream), which are dropped, the message id being kept as
// HeaderMsgID.
const (
	HeaderStream     = "Qw-Dead-Stream"
	HeaderSequence   = "Qw-Dead-Sequence"
	HeaderSubject    = "Qw-Dead-Subject"
	HeaderConsumer   = "Qw-Dead-Consumer"
	HeaderDeliveries = "Qw-Dead-Deliveries"
	HeaderReason     = "Qw-Dead-Reason"
	// HeaderTermReason is the reason a client gave with AckTerm.
	HeaderTermReason = "Qw-Dead-Term-Reason"
	// HeaderTime is the advisory's time (RFC 3339): when it died.
	HeaderTime = "Qw-Dead-Time"
	// HeaderStored is when the original was stored in its stream.
	HeaderStored = "Qw-Dead-Stored"
	// HeaderMsgID is the original's Nats-Msg-Id.
	HeaderMsgID = "Qw-Dead-Msg-Id"
	// HeaderPayloadLost is "true" when the original was gone before it
	// could be copied (WorkQueue or Limits retention removed it): the copy
	// is the advisory alone.
	HeaderPayloadLost = "Qw-Dead-Payload-Lost"
	// HeaderCaptureError says why a copy has no payload although its
	// original may still exist: capture could not read it and gave up.
	HeaderCaptureError = "Qw-Dead-Capture-Error"
)

// captureHeaders are the headers capture adds, in display order.
var captureHeaders = []string{
	HeaderStream, HeaderSequence, HeaderSubject, HeaderConsumer, HeaderDeliveries,
	HeaderReason, HeaderTermReason, HeaderTime, HeaderStored, HeaderMsgID, HeaderPayloadLost, HeaderCaptureError,
}

// IsCaptureHeader reports whether key is a header capture added.
func IsCaptureHeader(key string) bool { return slices.Contains(captureHeaders, key) }

// Advisory is the JSON of a max-deliveries or terminated advisory (the
// server's JSConsumerDeliveryExceededAdvisory and
// JSConsumerDeliveryTerminatedAdvisory share these fields).
type Advisory struct {
	Type       string    `json:"type"`
	ID         string    `json:"id"`
	Time       time.Time `json:"timestamp"`
	Stream     string    `json:"stream"`
	Consumer   string    `json:"consumer"`
	StreamSeq  uint64    `json:"stream_seq"`
	Deliveries uint64    `json:"deliveries"`
	// Reason is AckTerm's reason (terminated advisories only).
	Reason string `json:"reason,omitempty"`
	Domain string `json:"domain,omitempty"`
}

// ParseAdvisory decodes an advisory received on subject.
func ParseAdvisory(subject string, data []byte) (Advisory, string, error) {
	var a Advisory
	if err := json.Unmarshal(data, &a); err != nil {
		return Advisory{}, "", fmt.Errorf("advisory on %s: %w", subject, err)
	}
	reason := ""
	switch {
	case strings.HasPrefix(subject, AdvisoryMaxDeliveries+"."):
		reason = ReasonMaxDeliveries
	case strings.HasPrefix(subject, AdvisoryTerminated+"."):
		reason = ReasonTerminated
	default:
		return Advisory{}, "", fmt.Errorf("subject %s is no dead-letter advisory", subject)
	}
	if a.Stream == "" || a.Consumer == "" || a.StreamSeq == 0 {
		return Advisory{}, "", fmt.Errorf("advisory on %s names no stream, consumer or sequence", subject)
	}
	return a, reason, nil
}

// DeadLetterSubject is the subject of stream's dead-letter stream that
// keeps consumer's dead letters from stream: "<dead-letter stream>.<stream>.<consumer>".
// Stream and consumer names hold no '.', so the subject splits back.
func DeadLetterSubject(deadLetters, stream, consumer string) string {
	return deadLetters + "." + stream + "." + consumer
}

// SplitDeadLetterSubject undoes DeadLetterSubject.
func SplitDeadLetterSubject(deadLetters, subject string) (stream, consumer string, ok bool) {
	rest, ok := strings.CutPrefix(subject, deadLetters+".")
	if !ok {
		return "", "", false
	}
	stream, consumer, ok = strings.Cut(rest, ".")
	return stream, consumer, ok && stream != "" && consumer != "" && !strings.Contains(consumer, ".")
}

// DLQName is the name of consumer's DLQ in stream: "<stream>.<consumer>".
// It is stream-qualified always, so it names the same dead letters for
// the life of the consumer, whatever consumers of the same name other
// streams get (names hold no '.', so it splits back).
func DLQName(stream, consumer string) string { return stream + "." + consumer }

// SplitDLQName undoes DLQName; ok is false for a name that is no DLQ's:
// not two parts, a part empty, or a wildcard or white space in one (a
// name like ">" would otherwise select every dead letter of the cluster).
func SplitDLQName(name string) (stream, consumer string, ok bool) {
	stream, consumer, ok = strings.Cut(name, ".")
	for _, p := range []string{stream, consumer} {
		if p == "" || strings.ContainsAny(p, "*>. \t\r\n") {
			return "", "", false
		}
	}
	return stream, consumer, ok
}

// DLQConsumer is the consumer part of a DLQ name.
func DLQConsumer(name string) string {
	if _, consumer, ok := strings.Cut(name, "."); ok {
		return consumer
	}
	return name
}

// captureMsgID is the copy's Nats-Msg-Id: the advisory's own id, so the
// same advisory captured again after a crash is dropped by the
// dead-letter stream's duplicate window. Stream and sequence alone would
// not do: a stream deleted and created again numbers its messages from 1
// again, and its new dead letters would be dropped as duplicates.
func captureMsgID(a Advisory) string {
	if a.ID == "" {
		return "qw-dead:" + a.Stream + ":" + strconv.FormatUint(a.StreamSeq, 10) + ":" + a.Consumer
	}
	return "qw-dead:" + a.ID
}

// ReplayMsgID is a replayed copy's Nats-Msg-Id: from the original stream
// and sequence, the replay count and the captured copy's sequence in the
// dead-letter stream, so a publish retried after a lost ack (same copy,
// same count) is dropped by the target stream's duplicate window, while a
// different dead letter never is (the copy sequence tells apart messages
// of a stream that was created again, and the same message dead-lettered
// by two consumers).
func ReplayMsgID(stream string, seq uint64, replayCount int64, copySeq uint64) string {
	return "qw-replay:" + stream + ":" + strconv.FormatUint(seq, 10) + ":" + strconv.FormatInt(replayCount, 10) +
		":" + strconv.FormatUint(copySeq, 10)
}

// copyMsg builds the captured copy of an advisory's original; orig is nil
// when the original is gone.
func copyMsg(deadLetters string, a Advisory, reason string, orig *jetstream.RawStreamMsg) *nats.Msg {
	m := nats.NewMsg(DeadLetterSubject(deadLetters, a.Stream, a.Consumer))
	if orig != nil {
		for k, vs := range orig.Header {
			switch {
			case k == jetstream.MsgIDHeader:
				m.Header.Set(HeaderMsgID, orig.Header.Get(k))
			case strings.HasPrefix(k, "Nats-") || IsCaptureHeader(k):
				// Publish directives and response headers, or the
				// capture headers of an earlier death: replaced below.
			default:
				m.Header[k] = vs
			}
		}
		m.Data = orig.Data
		m.Header.Set(HeaderSubject, orig.Subject)
		m.Header.Set(HeaderStored, orig.Time.UTC().Format(time.RFC3339Nano))
	} else {
		m.Header.Set(HeaderPayloadLost, "true")
	}
	m.Header.Set(HeaderStream, a.Stream)
	m.Header.Set(HeaderSequence, strconv.FormatUint(a.StreamSeq, 10))
	m.Header.Set(HeaderConsumer, a.Consumer)
	m.Header.Set(HeaderDeliveries, strconv.FormatUint(a.Deliveries, 10))
	m.Header.Set(HeaderReason, reason)
	if a.Reason != "" {
		m.Header.Set(HeaderTermReason, a.Reason)
	}
	t := a.Time
	if t.IsZero() {
		t = time.Now()
	}
	m.Header.Set(HeaderTime, t.UTC().Format(time.RFC3339Nano))
	m.Header.Set(jetstream.MsgIDHeader, captureMsgID(a))
	return m
}

// DeadLetter is a captured copy read back from the dead-letter stream.
type DeadLetter struct {
	// Seq is the copy's sequence in the dead-letter stream.
	Seq uint64
	// Stream, StreamSeq and Subject name the original.
	Stream    string
	StreamSeq uint64
	Subject   string
	Consumer  string
	// Lost: the payload was gone before capture.
	Lost    bool
	Message queue.Message
}

// DecodeDeadLetter reads a captured copy: the message as the DLQ page and
// the replay pipeline see it, with the capture headers decoded into its
// death facts. Its ID is "<stream>@<sequence>" of the original.
func DecodeDeadLetter(raw *jetstream.RawStreamMsg) DeadLetter {
	h := raw.Header
	d := DeadLetter{
		Seq: raw.Sequence, Stream: h.Get(HeaderStream), Subject: h.Get(HeaderSubject),
		Consumer: h.Get(HeaderConsumer), Lost: h.Get(HeaderPayloadLost) == "true",
	}
	d.StreamSeq, _ = strconv.ParseUint(h.Get(HeaderSequence), 10, 64)
	at := raw.Time
	if t, err := time.Parse(time.RFC3339Nano, h.Get(HeaderTime)); err == nil {
		at = t
	}
	m := queue.Message{
		ID:        d.Stream + "@" + strconv.FormatUint(d.StreamSeq, 10),
		Position:  int64(raw.Sequence),
		Timestamp: at,
		Body:      raw.Data,
	}
	// Capture headers first, in a fixed order, then the original's.
	for _, k := range captureHeaders {
		for _, v := range h.Values(k) {
			m.Headers = append(m.Headers, queue.Header{Key: k, Value: []byte(v)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		// Nats-* headers on a copy are the capture's own publish
		// directives (the original's were dropped).
		if IsCaptureHeader(k) || strings.HasPrefix(k, "Nats-") {
			continue
		}
		for _, v := range h.Values(k) {
			m.Headers = append(m.Headers, queue.Header{Key: k, Value: []byte(v)})
		}
	}
	deliveries, _ := strconv.ParseInt(h.Get(HeaderDeliveries), 10, 64)
	m.Death = queue.DeathInfo{
		Framework: "nats",
		Deaths: []queue.Death{{
			Queue: d.Stream, Reason: h.Get(HeaderReason), Count: deliveries, Time: at,
			RoutingKeys: nonEmpty(d.Subject),
		}},
		OriginalTopic:    d.Subject,
		ConsumerGroup:    d.Consumer,
		ExceptionMessage: h.Get(HeaderTermReason),
	}
	d.Message = m
	return d
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

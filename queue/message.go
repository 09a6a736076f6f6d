package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is one dead-lettered message (a RabbitMQ message or a Kafka record)
// as read from a DLQ, decoded for display and selection. Bytes are kept as
// they were on the wire: nothing here is re-encoded or made valid UTF-8.
type Message struct {
	// ID identifies the message within its DLQ: the AMQP message-id when it
	// has one (else a digest of its content), or "partition@offset" in Kafka.
	ID string
	// Position is the message's place in the DLQ: 0 is the head of a
	// RabbitMQ classic or quorum queue; the offset in a RabbitMQ stream or
	// a Kafka partition.
	Position  int64
	Partition int32
	Timestamp time.Time
	// Key is the Kafka record key; nil for RabbitMQ.
	Key []byte
	// Properties are the AMQP basic properties that are set, by name
	// (content_type, message_id, delivery_mode, ...).
	Properties map[string]string
	Headers    []Header
	Body       []byte
	// DeliveryCount is how many times a quorum queue already delivered the
	// message (x-delivery-count); 0 elsewhere.
	DeliveryCount int64
	Death         DeathInfo

	// Decoded and KeyDecoded are the body and the key decoded through a
	// schema registry, for display; nil when not in a registry's format.
	Decoded, KeyDecoded *Decoded
	// Masked counts the values masking replaced for display. When it is
	// not 0, Body, Key, header values and the decoded forms are masked
	// copies, never to be sent to a broker.
	Masked int
}

// Header is one message header. Key and Value are the bytes on the wire;
// Kind says how an AMQP value was rendered into Value (numbers as decimal,
// times as RFC 3339, tables and arrays as JSON); Kafka headers are "bytes".
type Header struct {
	Key   string
	Value []byte
	Kind  string
}

// Text renders the value for display: valid UTF-8 as is, anything else as
// hex prefixed with "0x" so that no byte is lost or misread.
func (h Header) Text() string { return PrintableBytes(h.Value) }

// Number is the value of a numeric dead-letter header (Spring's binary
// big-endian partition, offset and timestamp, Connect's decimal ones) as
// the Deaths tab reads it, in decimal; ok is false for any other header.
func (h Header) Number() (n int64, ok bool) {
	switch h.Key {
	case "kafka_dlt-original-partition", "kafka_dlt-original-offset", "kafka_dlt-original-timestamp",
		"__connect.errors.partition", "__connect.errors.offset", "dead-letter-partition", "dead-letter-offset":
		return headerInt(h.Key, h.Value)
	}
	return 0, false
}

// PrintableBytes is b as text when it is valid UTF-8 without control
// characters other than tab and newline, else "0x" and its hex.
func PrintableBytes(b []byte) string {
	if utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }) {
		return string(b)
	}
	return "0x" + hex.EncodeToString(b)
}

// Header returns the value of the first header named key.
func (m *Message) Header(key string) ([]byte, bool) {
	for _, h := range m.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return nil, false
}

// Body kinds returned by BodyView.
const (
	BodyJSON   = "json"
	BodyText   = "text"
	BodyBinary = "binary"
	BodyEmpty  = "empty"
)

// BodyView renders the body for display: JSON pretty-printed, UTF-8 text as
// is, anything else as hex. At most limit bytes of the body are rendered
// (0 means no limit); truncated reports that the full body must be
// downloaded to be seen.
func (m *Message) BodyView(limit int) (kind, text string, truncated bool) {
	b := m.Body
	if len(b) == 0 {
		return BodyEmpty, "", false
	}
	if limit > 0 && len(b) > limit {
		b, truncated = b[:limit], true
	}
	// A text content type is honoured: "42" sent as text/plain is text.
	if !truncated && !isTextType(m.ContentType()) && json.Valid(b) {
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			return BodyJSON, out.String(), false
		}
	}
	if utf8.Valid(trimPartialRune(b, truncated)) {
		return BodyText, string(b), truncated
	}
	return BodyBinary, hex.Dump(b), truncated
}

// ContentType is the media type the sender declared, without parameters:
// the AMQP content_type property, else a Content-Type (or SQS-style
// contentType) header; "" when none.
func (m *Message) ContentType() string {
	ct := m.Properties["content_type"]
	if ct == "" {
		for _, h := range m.Headers {
			if strings.EqualFold(h.Key, "content-type") || strings.EqualFold(h.Key, "contenttype") {
				ct = string(h.Value)
				break
			}
		}
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// isTextType reports a text/* media type.
func isTextType(mt string) bool { return strings.HasPrefix(mt, "text/") }

// trimPartialRune drops a rune cut in half by truncation so that valid text
// is still seen as text.
func trimPartialRune(b []byte, truncated bool) []byte {
	if !truncated {
		return b
	}
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// Death is one entry of RabbitMQ's x-death header: the queue a message died
// in, why, and how often.
type Death struct {
	Queue       string
	Reason      string // rejected, expired, maxlen, delivery_limit
	Exchange    string
	RoutingKeys []string
	Count       int64
	// Own is how many of Count were queuewatch's own (an SQS receive
	// count rises at every browse; this process counts its receives).
	Own  int64
	Time time.Time
}

// DeathInfo is everything the broker and the failing framework recorded
// about why a message was dead-lettered.
type DeathInfo struct {
	// Deaths is RabbitMQ's x-death list, most recent first.
	Deaths []Death
	// FirstQueue, FirstReason and FirstExchange are x-first-death-*.
	FirstQueue, FirstReason, FirstExchange string

	// Framework names who wrote the failure headers: rabbitmq,
	// spring-amqp, spring-kafka, kafka-connect or smallrye.
	Framework string
	// OriginalExchange and OriginalRoutingKey are Spring AMQP's
	// x-original-exchange and x-original-routingKey.
	OriginalExchange, OriginalRoutingKey string
	// OriginalTopic, OriginalPartition and OriginalOffset locate the
	// record that failed (Kafka); HasOriginalOffset tells whether the
	// partition and offset are known.
	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
	HasOriginalOffset bool
	OriginalTimestamp time.Time
	// OriginalTimestampType is Spring Kafka's CreateTime or LogAppendTime.
	OriginalTimestampType string
	ConsumerGroup         string
	// Connector, TaskID and Stage are Kafka Connect's: the connector and
	// task that failed and the stage (VALUE_CONVERTER, TASK_PUT, ...);
	// ExecutingClass is the class that was running (the converter,
	// transformation or connector).
	Connector      string
	TaskID         int32
	HasTaskID      bool
	Stage          string
	ExecutingClass string

	// ExceptionClass is the exception that failed the message, which
	// failures are grouped by: the listener's own exception, not the
	// wrapper a listener container puts around it (WrapperClass), and not
	// its cause (CauseClass).
	ExceptionClass   string
	CauseClass       string
	WrapperClass     string
	ExceptionMessage string
	StackTrace       string
}

// Source is where the message failed: the queue of its most recent death,
// else the first death's queue, else the original topic.
func (d *DeathInfo) Source() string {
	switch {
	case len(d.Deaths) > 0 && d.Deaths[0].Queue != "":
		return d.Deaths[0].Queue
	case d.FirstQueue != "":
		return d.FirstQueue
	}
	return d.OriginalTopic
}

// Reason is why the message died: the broker's reason when there is one,
// else the stage or "exception" when a framework recorded an exception.
func (d *DeathInfo) Reason() string {
	switch {
	case len(d.Deaths) > 0 && d.Deaths[0].Reason != "":
		return d.Deaths[0].Reason
	case d.FirstReason != "":
		return d.FirstReason
	case d.Stage != "":
		return strings.ToLower(d.Stage)
	case d.ExceptionClass != "" || d.ExceptionMessage != "":
		return "exception"
	}
	return ""
}

// Signature is the failure signature messages are grouped by.
func (d *DeathInfo) Signature() FailureSignature {
	return FailureSignature{Source: d.Source(), Reason: d.Reason(), ExceptionClass: d.ExceptionClass}
}

// FailureSignature groups messages that failed the same way.
type FailureSignature struct {
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	ExceptionClass string `json:"exception_class"`
}

// Key is the signature as one string, usable in URLs and selections:
// source, reason and exception class joined by "|".
func (s FailureSignature) Key() string {
	return s.Source + "|" + s.Reason + "|" + s.ExceptionClass
}

// FailureGroup counts the messages sharing one failure signature.
type FailureGroup struct {
	Signature FailureSignature `json:"signature"`
	Count     int              `json:"count"`
	FirstSeen time.Time        `json:"first_seen"`
	LastSeen  time.Time        `json:"last_seen"`
}

// GroupFailures groups messages by failure signature, largest group first
// (ties by key). First and last seen are the message timestamps.
func GroupFailures(msgs []Message) []FailureGroup {
	idx := map[string]int{}
	var out []FailureGroup
	for i := range msgs {
		sig := msgs[i].Death.Signature()
		j, ok := idx[sig.Key()]
		if !ok {
			j = len(out)
			idx[sig.Key()] = j
			out = append(out, FailureGroup{Signature: sig})
		}
		g, ts := &out[j], msgs[i].Timestamp
		g.Count++
		if !ts.IsZero() && (g.FirstSeen.IsZero() || ts.Before(g.FirstSeen)) {
			g.FirstSeen = ts
		}
		if ts.After(g.LastSeen) {
			g.LastSeen = ts
		}
	}
	slices.SortStableFunc(out, func(a, b FailureGroup) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Signature.Key(), b.Signature.Key())
	})
	return out
}

// DecodeDeath reads the failure headers that RabbitMQ, Spring AMQP, Spring
// Kafka, Kafka Connect and SmallRye Reactive Messaging write. deaths is the
// already decoded x-death list (its AMQP encoding is the broker client's
// business). Spring Kafka writes partition and offset as big-endian binary
// ints; Connect and SmallRye as decimal strings; both are understood.
func DecodeDeath(headers []Header, deaths []Death) DeathInfo {
	d := DeathInfo{Deaths: deaths}
	if len(deaths) > 0 {
		d.Framework = "rabbitmq"
	}
	for _, h := range headers {
		v := string(h.Value)
		switch h.Key {
		case "x-first-death-queue":
			d.FirstQueue = v
		case "x-first-death-reason":
			d.FirstReason = v
		case "x-first-death-exchange":
			d.FirstExchange = v
		case "x-exception-message":
			d.Framework, d.ExceptionMessage = "spring-amqp", v
		case "x-exception-stacktrace":
			d.Framework, d.StackTrace = "spring-amqp", v
		case "x-original-exchange":
			d.OriginalExchange = v
		case "x-original-routingKey":
			d.OriginalRoutingKey = v
		case "kafka_dlt-original-topic", "__connect.errors.topic", "dead-letter-topic":
			d.OriginalTopic = v
		case "kafka_dlt-original-partition", "__connect.errors.partition", "dead-letter-partition":
			if n, ok := headerInt(h.Key, h.Value); ok {
				d.OriginalPartition = int32(n)
			}
		case "kafka_dlt-original-offset", "__connect.errors.offset", "dead-letter-offset":
			if n, ok := headerInt(h.Key, h.Value); ok {
				d.OriginalOffset, d.HasOriginalOffset = n, true
			}
		case "kafka_dlt-original-timestamp":
			if n, ok := headerInt(h.Key, h.Value); ok {
				d.OriginalTimestamp = time.UnixMilli(n)
			}
		case "kafka_dlt-original-timestamp-type":
			d.OriginalTimestampType = v
		case "kafka_dlt-original-consumer-group":
			d.ConsumerGroup = v
		case "kafka_dlt-exception-cause-fqcn":
			d.CauseClass = v
		case "__connect.errors.task.id":
			if n, err := strconv.ParseInt(v, 10, 32); err == nil {
				d.TaskID, d.HasTaskID = int32(n), true
			}
		case "__connect.errors.class.name":
			d.ExecutingClass = v
		case "kafka_dlt-exception-fqcn", "__connect.errors.exception.class.name", "dead-letter-exception-class-name":
			d.ExceptionClass = v
		case "kafka_dlt-exception-message", "__connect.errors.exception.message", "dead-letter-reason":
			d.ExceptionMessage = v
		case "kafka_dlt-exception-stacktrace", "__connect.errors.exception.stacktrace", "dead-letter-cause":
			if d.StackTrace == "" {
				d.StackTrace = v
			}
		case "__connect.errors.connector.name":
			d.Connector = v
		case "__connect.errors.stage":
			d.Stage = v
		}
		switch {
		case strings.HasPrefix(h.Key, "kafka_dlt-"):
			d.Framework = "spring-kafka"
		case strings.HasPrefix(h.Key, "__connect.errors."):
			d.Framework = "kafka-connect"
		case strings.HasPrefix(h.Key, "dead-letter-"):
			d.Framework = "smallrye"
		}
	}
	d.unwrapException()
	return d
}

// listenerWrappers are the exceptions listener containers wrap whatever a
// listener throws in. Spring Kafka names the wrapper in
// kafka_dlt-exception-fqcn and the listener's exception only as its cause;
// Spring AMQP's stack trace starts with its own wrapper. Grouping by them
// would put every failure of a service in one group.
var listenerWrappers = map[string]bool{
	"org.springframework.kafka.listener.ListenerExecutionFailedException":      true,
	"org.springframework.amqp.rabbit.support.ListenerExecutionFailedException": true,
}

// unwrapException makes ExceptionClass the exception that failed the
// message: the cause a listener wrapper names, else the class in the stack
// trace whose message the framework recorded, else the stack's root cause;
// CauseClass is then that exception's cause when the stack shows one.
func (d *DeathInfo) unwrapException() {
	if listenerWrappers[d.ExceptionClass] && d.CauseClass != "" {
		d.WrapperClass, d.ExceptionClass, d.CauseClass = d.ExceptionClass, d.CauseClass, ""
	}
	chain := exceptionChain(d.StackTrace)
	if len(chain) > 1 && listenerWrappers[chain[0].class] {
		d.WrapperClass, chain = chain[0].class, chain[1:]
	}
	at := -1
	for i, l := range chain {
		if d.ExceptionClass != "" && l.class == d.ExceptionClass ||
			d.ExceptionClass == "" && d.ExceptionMessage != "" && l.message == d.ExceptionMessage {
			at = i
			break
		}
	}
	if d.ExceptionClass == "" && len(chain) > 0 {
		if at < 0 {
			at = len(chain) - 1
		}
		d.ExceptionClass = chain[at].class
	}
	if d.CauseClass == "" && at >= 0 && at+1 < len(chain) {
		d.CauseClass = chain[at+1].class
	}
}

// headerInt reads an integer header written either as a big-endian binary
// int (4 or 8 bytes, Spring Kafka) or as decimal text.
func headerInt(key string, b []byte) (int64, bool) {
	// Spring's binary ints can happen to be ASCII digits, so its headers
	// are read as binary first.
	if !strings.HasPrefix(key, "kafka_dlt-") || (len(b) != 4 && len(b) != 8) {
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return n, true
		}
	}
	switch len(b) {
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b))), true
	case 8:
		return int64(binary.BigEndian.Uint64(b)), true
	}
	return 0, false
}

// chainLink is one exception of a Java stack trace: the first line's or a
// "Caused by:" line's class and message.
type chainLink struct{ class, message string }

// exceptionChain reads the exceptions of a Java stack trace, outermost
// first ("com.example.Bad: message", then each "Caused by: ..."). Lines
// that do not name a class end the chain.
func exceptionChain(stack string) []chainLink {
	var out []chainLink
	for i, line := range strings.Split(stack, "\n") {
		line = strings.TrimRight(line, "\r")
		if i > 0 {
			var ok bool
			if line, ok = strings.CutPrefix(line, "Caused by: "); !ok {
				continue
			}
		}
		class, message, _ := strings.Cut(line, ": ")
		class = strings.TrimSpace(strings.TrimSuffix(class, ":"))
		if class == "" || strings.ContainsAny(class, " \t") || !strings.Contains(class, ".") {
			if i == 0 {
				return nil
			}
			continue
		}
		out = append(out, chainLink{class: class, message: message})
	}
	return out
}

// Decoded is a key or body decoded through a schema registry, for display
// only: replay, move and restore always send the bytes on the wire.
type Decoded struct {
	// Format is avro, protobuf or json-schema.
	Format string `json:"format"`
	// Schema names the registry schema the bytes were written with.
	Schema SchemaRef `json:"schema"`
	// Value is the decoded value as JSON; nil when Error says why not.
	Value json.RawMessage `json:"value,omitempty"`
	// Error says why the bytes could not be decoded (registry down,
	// unknown schema id, corrupt payload); the raw bytes are shown instead.
	Error string `json:"error,omitempty"`
}

// SchemaRef identifies a schema in a registry.
type SchemaRef struct {
	ID      int    `json:"id"`
	Subject string `json:"subject,omitempty"`
	Version int    `json:"version,omitempty"`
}

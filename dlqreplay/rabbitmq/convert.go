package rabbitmq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// Headers queuewatch adds to every replayed copy; the names and the count's
// encoding (queue.FormatReplayCount: decimal text) live in queue.
const (
	HeaderReplayCount = queue.HeaderReplayCount
	HeaderReplayID    = queue.HeaderReplayID
)

// message decodes a delivery for display and selection. position is its
// place from the head of the queue.
func message(d *amqp.Delivery, position int64) queue.Message {
	m := queue.Message{Position: position, Properties: properties(d), Body: d.Body, Timestamp: d.Timestamp}
	keys := make([]string, 0, len(d.Headers))
	for k := range d.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, kind := render(d.Headers[k])
		m.Headers = append(m.Headers, queue.Header{Key: k, Value: v, Kind: kind})
	}
	m.DeliveryCount, _ = toInt(d.Headers["x-delivery-count"])
	m.Death = queue.DecodeDeath(m.Headers, rabbit.Deaths(d.Headers))
	m.Timestamp, _ = rabbit.DeadLetteredAt(d)
	m.ID = d.MessageId
	if m.ID == "" {
		m.ID = digest(d)
	}
	return m
}

// digest identifies a message without a message-id by its content. The
// broker-maintained x-delivery-count is left out so the ID is stable.
func digest(d *amqp.Delivery) string {
	h := sha256.New()
	h.Write(d.Body)
	keys := make([]string, 0, len(d.Headers))
	for k := range d.Headers {
		if k != "x-delivery-count" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := render(d.Headers[k])
		fmt.Fprintf(h, "\x00%s\x00%s", k, v)
	}
	fmt.Fprintf(h, "\x00%d\x00%s", d.Timestamp.UnixNano(), d.CorrelationId)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:12])
}

func properties(d *amqp.Delivery) map[string]string {
	p := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	set("content_type", d.ContentType)
	set("content_encoding", d.ContentEncoding)
	if d.DeliveryMode != 0 {
		p["delivery_mode"] = strconv.Itoa(int(d.DeliveryMode))
	}
	if d.Priority != 0 {
		p["priority"] = strconv.Itoa(int(d.Priority))
	}
	set("correlation_id", d.CorrelationId)
	set("reply_to", d.ReplyTo)
	set("expiration", d.Expiration)
	set("message_id", d.MessageId)
	if !d.Timestamp.IsZero() {
		p["timestamp"] = strconv.FormatInt(d.Timestamp.Unix(), 10)
	}
	set("type", d.Type)
	set("user_id", d.UserId)
	set("app_id", d.AppId)
	set("exchange", d.Exchange)
	set("routing_key", d.RoutingKey)
	return p
}

// render turns an AMQP field value into bytes for display and archive:
// strings and byte arrays as they are, numbers in decimal, times in RFC
// 3339, tables and arrays as JSON.
func render(v any) ([]byte, string) {
	switch x := v.(type) {
	case nil:
		return nil, "void"
	case string:
		return []byte(x), "string"
	case []byte:
		return x, "bytes"
	case bool:
		return []byte(strconv.FormatBool(x)), "bool"
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64:
		n, _ := toInt(x)
		return []byte(strconv.FormatInt(n, 10)), "int"
	case float32:
		return []byte(strconv.FormatFloat(float64(x), 'g', -1, 32)), "float"
	case float64:
		return []byte(strconv.FormatFloat(x, 'g', -1, 64)), "float"
	case time.Time:
		return []byte(x.UTC().Format(time.RFC3339)), "time"
	case amqp.Decimal:
		return []byte(fmt.Sprintf("%de-%d", x.Value, x.Scale)), "decimal"
	case amqp.Table, []any:
		b, err := json.Marshal(jsonable(x))
		if err != nil {
			return []byte(fmt.Sprint(x)), "table"
		}
		if _, ok := x.([]any); ok {
			return b, "array"
		}
		return b, "table"
	}
	return []byte(fmt.Sprint(v)), "unknown"
}

// jsonable makes nested AMQP values JSON-encodable without losing bytes:
// byte arrays that are not UTF-8 become 0x-hex strings.
func jsonable(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case []byte:
		return queue.PrintableBytes(x)
	case string:
		return queue.PrintableBytes([]byte(x))
	case amqp.Decimal:
		return fmt.Sprintf("%de-%d", x.Value, x.Scale)
	}
	return v
}

// unrender is render's inverse for restoring archived headers.
func unrender(h queue.Header) any {
	s := string(h.Value)
	switch h.Kind {
	case "void":
		return nil
	case "bytes":
		return h.Value
	case "bool":
		b, _ := strconv.ParseBool(s)
		return b
	case "int":
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	case "float":
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case "time":
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return s
		}
		return t
	case "table", "array":
		var v any
		if json.Unmarshal(h.Value, &v) != nil {
			return h.Value
		}
		return fromJSON(v)
	}
	return s
}

func fromJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		t := amqp.Table{}
		for k, e := range x {
			t[k] = fromJSON(e)
		}
		return t
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}

// toInt reads an integer header value of any encoding.
func toInt(v any) (int64, bool) { return rabbit.HeaderInt(v) }

// copyOf is the publishing that replays d: every property and header kept
// (x-death too, so a second death is counted by the broker), the replay
// count and id set to rp's, the count as decimal text like on every
// broker (versions before issue 21 wrote an AMQP long-long here; readers
// accept both). x-delivery-count belongs to the queue that delivered it
// and is dropped. user_id is kept only when it is the publishing user,
// since the broker refuses any other. With no rp.ID the replay headers
// are left as they were.
func copyOf(d *amqp.Delivery, rp dlqreplay.Replay, user string) amqp.Publishing {
	h := amqp.Table{}
	for k, v := range d.Headers {
		if k != "x-delivery-count" {
			h[k] = v
		}
	}
	if rp.ID != "" { // a copy that is no replay (saved at the delivery limit) is left as it was
		h[HeaderReplayCount] = queue.FormatReplayCount(rp.Count)
		h[HeaderReplayID] = rp.ID
	}
	p := amqp.Publishing{
		Headers: h, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode,
		Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, AppId: d.AppId, Body: d.Body,
	}
	if d.UserId == user {
		p.UserId = d.UserId
	}
	return p
}

// archivedPublishing rebuilds a publishing from an archived message.
func archivedPublishing(a dlqreplay.Archived, user string) amqp.Publishing {
	p := amqp.Publishing{Body: a.Body, Headers: amqp.Table{}}
	for _, h := range a.Headers {
		if h.Key != "x-delivery-count" {
			p.Headers[h.Key] = unrender(h)
		}
	}
	pr := a.Properties
	p.ContentType, p.ContentEncoding = pr["content_type"], pr["content_encoding"]
	if n, err := strconv.Atoi(pr["delivery_mode"]); err == nil {
		p.DeliveryMode = uint8(n)
	}
	if n, err := strconv.Atoi(pr["priority"]); err == nil {
		p.Priority = uint8(n)
	}
	p.CorrelationId, p.ReplyTo, p.Expiration = pr["correlation_id"], pr["reply_to"], pr["expiration"]
	p.MessageId, p.Type, p.AppId = pr["message_id"], pr["type"], pr["app_id"]
	if n, err := strconv.ParseInt(pr["timestamp"], 10, 64); err == nil {
		p.Timestamp = time.Unix(n, 0)
	}
	if pr["user_id"] == user {
		p.UserId = pr["user_id"]
	}
	return p
}

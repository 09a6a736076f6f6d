package selexpr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// The variables an expression reads.
const (
	VarID         = "id"         // string: the message id
	VarKey        = "key"        // string: the key as text (0x-hex when binary)
	VarHeaders    = "headers"    // map(string, string): header values as text, the first of a name
	VarProperties = "properties" // map(string, string): AMQP properties (content_type, …)
	VarBody       = "body"       // string: the body as text (0x-hex when binary)
	VarValue      = "value"      // dyn: the decoded value, else the JSON body, else null
	VarFailure    = "failure"    // map(string, string): source, reason, group, exception_class, …
	VarDeliveries = "deliveries" // int: deliveries a quorum queue counted
	VarReplays    = "replays"    // int: x-queuewatch-replay-count
	VarTimestamp  = "timestamp"  // timestamp: the message time the selection's since/until bound
	VarAge        = "age"        // duration: now - timestamp
)

var variables = map[string]bool{
	VarID: true, VarKey: true, VarHeaders: true, VarProperties: true, VarBody: true, VarValue: true,
	VarFailure: true, VarDeliveries: true, VarReplays: true, VarTimestamp: true, VarAge: true,
}

// Input is one message as an expression sees it, at a time (for age).
type Input struct {
	Message *queue.Message
	Now     time.Time
}

// activation binds the variables uses names (decoding a body costs most
// of an evaluation, and most expressions read little of a message).
func (in Input) activation(uses map[string]bool) map[string]any {
	m := in.Message
	out := make(map[string]any, len(uses))
	for v := range uses {
		switch v {
		case VarID:
			out[v] = m.ID
		case VarKey:
			out[v] = queue.PrintableBytes(m.Key)
		case VarHeaders:
			headers := make(map[string]string, len(m.Headers))
			for _, h := range m.Headers {
				if _, ok := headers[h.Key]; !ok {
					headers[h.Key] = h.Text()
				}
			}
			out[v] = headers
		case VarProperties:
			props := m.Properties
			if props == nil {
				props = map[string]string{}
			}
			out[v] = props
		case VarBody:
			out[v] = queue.PrintableBytes(m.Body)
		case VarValue:
			out[v] = value(m)
		case VarFailure:
			out[v] = failure(&m.Death)
		case VarDeliveries:
			out[v] = m.DeliveryCount
		case VarReplays:
			out[v] = m.ReplayCount()
		case VarTimestamp:
			out[v] = m.Timestamp
		case VarAge:
			out[v] = in.Now.Sub(m.Timestamp)
		}
	}
	return out
}

// failure is the failure facts by the names the API's failure object
// gives them.
func failure(d *queue.DeathInfo) map[string]string {
	return map[string]string{
		"group": d.Signature().Key(), "source": d.Source(), "reason": d.Reason(),
		"framework": d.Framework, "exception_class": d.ExceptionClass,
		"exception_message": d.ExceptionMessage, "cause_class": d.CauseClass,
		"first_queue": d.FirstQueue, "original_topic": d.OriginalTopic,
		"original_exchange": d.OriginalExchange, "consumer_group": d.ConsumerGroup,
		"connector": d.Connector, "stage": d.Stage,
	}
}

// value is the message's decoded value (a schema registry's, where the
// message was decoded), else its body when that is JSON, else nil.
func value(m *queue.Message) any {
	b := m.Body
	if m.Decoded != nil && m.Decoded.Value != nil {
		b = m.Decoded.Value
	}
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil
	}
	return v
}

// decodeJSON decodes b with integers as int64 (an order id of 19 digits
// stays exact) and other numbers as float64.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

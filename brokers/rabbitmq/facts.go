package rabbitmq

import (
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/queue"
)

// Queue types as the management API and x-queue-type name them.
const (
	TypeClassic = "classic"
	TypeQuorum  = "quorum"
	TypeStream  = "stream"
)

// DeliveryLimit is a quorum queue's explicit delivery limit: the
// x-delivery-limit argument and a policy's delivery-limit both apply, and
// the lower wins. ok is false when neither sets one. RabbitMQ 4 enforces a
// default limit that neither shows: EffectiveDeliveryLimit (and
// Queue.DeliveryLimit, Cluster.DeliveryLimit) include it.
//
// Example: argument 10 and policy 3 give (3, true); no argument and no
// policy give (0, false).
func DeliveryLimit(args, policy map[string]any) (limit int64, ok bool) {
	for _, v := range []any{args["x-delivery-limit"], policy["delivery-limit"]} {
		n, isInt := HeaderInt(v)
		if !isInt || n < 0 {
			continue
		}
		if !ok || n < limit {
			limit, ok = n, true
		}
	}
	return limit, ok
}

// HeaderInt reads an integer from an AMQP table value (any integer type),
// a JSON number, or a decimal string.
func HeaderInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// Deaths decodes the x-death header, a list of tables, most recent death
// first; entries that are not tables are skipped.
func Deaths(headers amqp.Table) []queue.Death {
	list, _ := headers["x-death"].([]any)
	out := make([]queue.Death, 0, len(list))
	for _, e := range list {
		t, ok := e.(amqp.Table)
		if !ok {
			continue
		}
		d := queue.Death{}
		d.Queue, _ = t["queue"].(string)
		d.Reason, _ = t["reason"].(string)
		d.Exchange, _ = t["exchange"].(string)
		d.Count, _ = HeaderInt(t["count"])
		d.Time, _ = t["time"].(time.Time)
		keys, _ := t["routing-keys"].([]any)
		for _, k := range keys {
			if s, ok := k.(string); ok {
				d.RoutingKeys = append(d.RoutingKeys, s)
			}
		}
		out = append(out, d)
	}
	return out
}

// DeadLetteredAt is when a message was last dead-lettered (x-death[0].time),
// else its timestamp property; ok is false when it has neither.
func DeadLetteredAt(d *amqp.Delivery) (time.Time, bool) {
	if deaths := Deaths(d.Headers); len(deaths) > 0 && !deaths[0].Time.IsZero() {
		return deaths[0].Time, true
	}
	return d.Timestamp, !d.Timestamp.IsZero()
}

package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// poisonRate is the share of orders and payments the producer makes
// unprocessable, so the failing consumers dead-letter about 2% of traffic.
const poisonRate = 0.02

// traffic generates the demo's business records. Sequence numbers make keys
// and ids unique and readable; a traffic value is used by one goroutine at a
// time (the seeding in Start, then the producer service).
type traffic struct {
	order, payment, event, stock int64
}

// topicRate is one produced topic's average rate at Speed 1, in records per
// second, and the phase of its sine wave so topics do not peak together.
type topicRate struct {
	topic string
	rate  float64
	phase float64
}

// produceRates sum to about 95 records per second at Speed 1.
var produceRates = []topicRate{
	{TopicOrders, 30, 0},
	{TopicPayments, 15, math.Pi / 2},
	{TopicEvents, 40, math.Pi},
	{TopicInventory, 10, 3 * math.Pi / 2},
}

// record returns the next record for topic; poison asks for one the
// consumers of that topic will fail to process (orders and payments only).
func (t *traffic) record(topic string, poison bool) *kgo.Record {
	switch topic {
	case TopicOrders:
		return t.orderRecord(poison)
	case TopicPayments:
		return t.paymentRecord(poison)
	case TopicEvents:
		return t.eventRecord()
	default:
		return t.stockRecord()
	}
}

type order struct {
	Order    int64   `json:"order"`
	Customer string  `json:"customer"`
	Total    float64 `json:"total"`
	Currency string  `json:"currency"`
	Items    int     `json:"items"`
	Status   string  `json:"status"`
}

func (t *traffic) orderRecord(poison bool) *kgo.Record {
	t.order++
	o := order{
		Order:    100000 + t.order,
		Customer: fmt.Sprintf("cust-%04d", rand.IntN(5000)),
		Total:    cents(5 + rand.Float64()*250),
		Currency: pick("EUR", "EUR", "USD", "GBP"),
		Items:    1 + rand.IntN(6),
		Status:   "created",
	}
	value := mustJSON(o)
	if poison {
		// Half of the poison is a truncated body (a producer bug), half a
		// well-formed order that breaks a business rule.
		if rand.IntN(2) == 0 {
			value = value[:len(value)/2]
		} else {
			o.Total = -o.Total
			value = mustJSON(o)
		}
	}
	return &kgo.Record{Topic: TopicOrders, Key: []byte("order-" + strconv.FormatInt(o.Order, 10)), Value: value}
}

type payment struct {
	Payment string  `json:"payment"`
	Order   int64   `json:"order"`
	Amount  float64 `json:"amount"`
	Method  string  `json:"method"`
	Status  string  `json:"status"`
}

func (t *traffic) paymentRecord(poison bool) *kgo.Record {
	t.payment++
	p := payment{
		Payment: fmt.Sprintf("pay-%07d", t.payment),
		Order:   100000 + rand.Int64N(t.order+1),
		Amount:  cents(5 + rand.Float64()*250),
		Method:  pick("card", "card", "sepa", "paypal"),
		Status:  pick("authorized", "captured", "captured", "refunded"),
	}
	value := mustJSON(p)
	if poison {
		// A legacy service still writes key=value text, which the sink's
		// JSON converter cannot read.
		value = fmt.Appendf(nil, "payment=%s;amount=%.2f;method=%s", p.Payment, p.Amount, p.Method)
	}
	return &kgo.Record{Topic: TopicPayments, Key: []byte(p.Payment), Value: value}
}

type event struct {
	Event   string `json:"event"`
	User    string `json:"user"`
	Path    string `json:"path"`
	Session int64  `json:"session"`
}

func (t *traffic) eventRecord() *kgo.Record {
	t.event++
	e := event{
		Event:   pick("page_view", "page_view", "page_view", "add_to_cart", "checkout", "search"),
		User:    fmt.Sprintf("user-%05d", rand.IntN(20000)),
		Path:    pick("/", "/cart", "/search", "/product/42", "/product/7", "/checkout"),
		Session: t.event / 20,
	}
	return &kgo.Record{Topic: TopicEvents, Key: []byte(e.User), Value: mustJSON(e)}
}

type stock struct {
	SKU       string `json:"sku"`
	Warehouse string `json:"warehouse"`
	Delta     int    `json:"delta"`
	Seq       int64  `json:"seq"`
}

func (t *traffic) stockRecord() *kgo.Record {
	t.stock++
	s := stock{
		SKU:       fmt.Sprintf("SKU-%04d", rand.IntN(800)),
		Warehouse: pick("ams-1", "fra-2", "dub-1"),
		Delta:     rand.IntN(21) - 12,
		Seq:       t.stock,
	}
	return &kgo.Record{Topic: TopicInventory, Key: []byte(s.SKU), Value: mustJSON(s)}
}

type ledgerEntry struct {
	Entry    string  `json:"entry"`
	Account  string  `json:"account"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

func ledgerRecord(txn int64, i int) *kgo.Record {
	e := ledgerEntry{
		Entry:    fmt.Sprintf("txn-%06d-%d", txn, i),
		Account:  fmt.Sprintf("acc-%03d", rand.IntN(300)),
		Amount:   cents(rand.Float64()*400 - 200),
		Currency: "EUR",
	}
	return &kgo.Record{Topic: TopicLedger, Key: []byte(e.Account), Value: mustJSON(e)}
}

// mustJSON encodes demo structs, which contain only strings and numbers and
// therefore cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode demo record: %v", err))
	}
	return b
}

func cents(f float64) float64 { return math.Round(f*100) / 100 }

func pick(options ...string) string { return options[rand.IntN(len(options))] }

package selexpr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestMatch(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	m := &queue.Message{
		ID: "m-1", Key: []byte("order-123"), Timestamp: now.Add(-90 * time.Minute),
		Properties: map[string]string{"content_type": "application/json"},
		Headers: []queue.Header{
			{Key: "x-tenant", Value: []byte("acme")},
			{Key: "x-tenant", Value: []byte("second")},
			{Key: "x-queuewatch-replay-count", Value: []byte("2")},
		},
		Body:  []byte(`{"order":{"id":1234567890123456789,"total":19.5,"items":[{"sku":"a"}]}}`),
		Death: queue.DeathInfo{Deaths: []queue.Death{{Queue: "orders", Reason: "rejected"}}, ExceptionClass: "java.lang.IllegalStateException"},
	}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`key == "order-123"`, true},
		{`headers["x-tenant"] == "acme"`, true}, // the first of a name
		{`"x-card" in headers`, false},
		{`properties.content_type == "application/json"`, true},
		{`value.order.id == 1234567890123456789`, true}, // exact, not a float
		{`value.order.total > 19.0 && value.order.total < 20.0`, true},
		{`value.order.items.exists(i, i.sku == "a")`, true},
		{`body.contains("\"sku\":\"a\"")`, true},
		{`failure.source == "orders" && failure.reason == "rejected"`, true},
		{`failure.exception_class.endsWith("IllegalStateException")`, true},
		{`age > duration("1h") && age < duration("2h")`, true},
		{`timestamp < timestamp("2026-12-07T11:00:00Z")`, true},
		{`replays == 2 && deliveries == 0`, true},
		{`id == "m-2"`, false},
		{`value.missing == 1`, false}, // an evaluation error selects nothing
	} {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := p.Match(Input{Message: m, Now: now})
			if got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompileErrorNamesThePosition(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		{`key == `, "line 1, column 8"},
		{"key == \"a\" &&\n  nosuch == 1", "line 2, column 3: undeclared reference to 'nosuch'"},
		{`key`, "not a bool"},
		{strings.Repeat("a", MaxLength+1), "more than 4096"},
	} {
		_, err := Compile(tc.expr)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Error(), tc.want) {
			t.Errorf("Compile(%.20q) = %v, want an *Error with %q", tc.expr, err, tc.want)
		}
	}
}

func TestCompiledOnce(t *testing.T) {
	a, err := Compile(`key == "x"`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Compile(`key == "x"`)
	if a != b {
		t.Error("the same source compiled twice")
	}
}

func TestCostLimit(t *testing.T) {
	// Each level of nesting multiplies the work by the list's length:
	// 100^4 comparisons is far past the limit.
	p, err := Compile(`[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100].all(a, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100].all(b, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100].all(c, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100].all(d, a+b+c+d > 0))))`)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := p.Match(Input{Message: &queue.Message{}, Now: time.Now()})
	if ok || err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Fatalf("match = %v, %v; want the cost limit's error", ok, err)
	}
}

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string
	}{
		{`value.order.id == "123"`, `[value.order.id]`},
		{`headers["x-tenant"] == "a" && key == "k"`, `[headers.x-tenant key]`},
		{`value.items[0].card == "x"`, `[value.items.0.card]`},
		{`headers[key] == "a"`, `[headers key]`},
		{`"4111" in headers`, `[headers]`},
		{`has(value.card)`, `[value.card]`},
		{`value.items.exists(i, i.card == "x")`, `[value.items]`},
	} {
		p, err := Compile(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range p.Refs() {
			s := r.Var
			for _, st := range r.Path {
				if st.IsKey {
					s += "." + st.Key
				} else {
					s += fmt.Sprintf(".%d", st.Index)
				}
			}
			got = append(got, s)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s: refs %v, want %s", tc.expr, got, tc.want)
		}
	}
}

// BenchmarkMatch is one evaluation of a typical selection on a message
// with a 1 KiB JSON body (decoding the body is most of it).
func BenchmarkMatch(b *testing.B) {
	body := `{"order":{"id":"123","total":19.5,"items":[` + strings.Repeat(`{"sku":"A-1","qty":1},`, 40) + `{"sku":"B"}]}}`
	m := &queue.Message{ID: "m-1", Body: []byte(body), Timestamp: time.Now(), Headers: []queue.Header{{Key: "x-tenant", Value: []byte("acme")}}}
	p, err := Compile(`value.order.id == "123" && headers["x-tenant"] == "acme" && age < duration("1h")`)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Message: m, Now: time.Now()}
	for b.Loop() {
		if ok, err := p.Match(in); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

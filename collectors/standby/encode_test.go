package standby

import (
	"reflect"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestEncodeKeepsEveryField: a snapshot with every exported field of every
// nested type set decodes equal to itself, so a standby serves what the
// owner polled. A field added later that JSON would drop (an error, an
// interface, an unexported field) fails here.
func TestEncodeKeepsEveryField(t *testing.T) {
	var snap queue.Snapshot
	fill(t, reflect.ValueOf(&snap).Elem(), 0)
	snap.Err, snap.PolledBy = nil, "" // a stored snapshot is a good poll's, by nobody yet
	data, err := Encode(Record{At: snap.Time, Snapshot: &snap})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got.Snapshot, snap) || !got.At.Equal(snap.Time) {
		t.Errorf("decoded snapshot differs:\n got %+v\nwant %+v", *got.Snapshot, snap)
	}
	if _, err := Decode(data[:len(data)/2]); err == nil {
		t.Error("a truncated snapshot decoded")
	}
	// A failed poll travels as its error.
	data, err = Encode(Record{At: snap.Time, Err: "broker unreachable"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Decode(data); err != nil || got.Snapshot != nil || got.Err != "broker unreachable" {
		t.Errorf("a failed poll decoded as %+v, %v", got, err)
	}
}

// fill sets every field reachable from v to a non-zero value: slices get
// one element, pointers a value.
func fill(t *testing.T, v reflect.Value, depth int) {
	t.Helper()
	if depth > 8 {
		t.Fatalf("%s nests too deep to fill", v.Type())
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 6, 1, 2, 3, 4000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s.%s is unexported: JSON would drop it", v.Type(), v.Type().Field(i).Name)
			}
			fill(t, f, depth+1)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0), depth+1)
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, depth+1)
		fill(t, e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Interface:
		if v.Type() == reflect.TypeFor[error]() {
			if depth == 1 {
				return // Snapshot.Err: a stored snapshot is a good poll's
			}
			t.Fatalf("an error field in %s: JSON cannot decode it", v.Type())
		}
		if v.Type().NumMethod() == 0 {
			// RabbitMQ's queue arguments: the management API's JSON
			// values, which JSON keeps as they are.
			v.Set(reflect.ValueOf("x-any"))
			return
		}
		t.Fatalf("%s is an interface: JSON cannot decode it", v.Type())
	default:
		t.Fatalf("cannot fill a %s", v.Type())
	}
}

package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// decodeJSON reads a JSON request body strictly: at most maxRequestBody
// bytes (413 beyond), no unknown fields, no null anywhere and nothing
// after the value (400).
func decodeJSON(c echo.Context, v any) error {
	r := c.Request()
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, MaxRequestBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", MaxRequestBody))
	}
	if err == nil {
		err = strictDecode(data, v)
	}
	switch {
	case errors.Is(err, io.EOF):
		return echo.NewHTTPError(http.StatusBadRequest, "request body is empty: want a JSON object")
	case err != nil:
		return echo.NewHTTPError(http.StatusBadRequest, "invalid JSON: "+err.Error())
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	var generic any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return err
	}
	if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	// encoding/json leaves a field alone when it is null, so a null would
	// be taken as "not given"; the document allows none, so it is refused
	// rather than silently meaning the default.
	if path, ok := findNull(generic, ""); ok {
		return fmt.Errorf("null is not allowed (%s)", cmp.Or(path, "the body"))
	}
	normal, err := json.Marshal(integralNumbers(generic))
	if err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(normal))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// findNull returns the path of the first null in a decoded JSON value.
func findNull(v any, path string) (string, bool) {
	switch x := v.(type) {
	case nil:
		return path, true
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if found, ok := findNull(e, p); ok {
				return found, true
			}
		}
	case []any:
		for i, e := range x {
			if found, ok := findNull(e, path+"["+strconv.Itoa(i)+"]"); ok {
				return found, true
			}
		}
	}
	return "", false
}

// integralNumbers rewrites numbers with an integer value (7.0, 7e0) as
// integers: JSON Schema counts them as integers, encoding/json refuses
// them for an integer field.
func integralNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		// Parsing as a float first bounds the exponent big.Float is given.
		if f, err := x.Float64(); err != nil || math.Abs(f) >= 1<<63 || f != math.Trunc(f) {
			return v
		}
		f, ok := new(big.Float).SetPrec(256).SetString(string(x))
		if ok && f.IsInt() {
			i, _ := f.Int(nil)
			return json.Number(i.String())
		}
	case map[string]any:
		for k, e := range x {
			x[k] = integralNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = integralNumbers(e)
		}
	}
	return v
}

// check refuses what the replay engine would otherwise ignore without a
// word: a target of an unknown kind on a delete, which takes no target.
func (r *replayRequest) check() error {
	if m := r.mode(); r.Mode != nil && m != dlqreplay.ModePipeline && m != dlqreplay.ModeNative {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("mode %q: want pipeline or native", m))
	}
	if r.Target.Kind == nil {
		return nil
	}
	switch k := *r.Target.Kind; k {
	case dlqreplay.TargetOriginal, dlqreplay.TargetOriginalExchange, dlqreplay.TargetNamed:
		return nil
	default:
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("target kind %q: want original, exchange or queue", k))
	}
}

// mode is the request's mode, "" when it gives none.
func (r *replayRequest) mode() dlqreplay.Mode {
	if r.Mode == nil {
		return ""
	}
	return *r.Mode
}

// boolQuery reads an optional query parameter that is true or false, as
// the API document has it: anything else is 400 rather than a guess.
func boolQuery(c echo.Context, name string, def bool) (bool, error) {
	switch v := c.QueryParam(name); {
	case v == "" && !c.QueryParams().Has(name):
		return def, nil
	case v == "true":
		return true, nil
	case v == "false":
		return false, nil
	}
	return false, echo.NewHTTPError(http.StatusBadRequest, name+" must be true or false")
}

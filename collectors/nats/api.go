package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// apiPrefix is the JetStream API subject prefix of the connected account
// (brokers/nats connects without a domain or a custom prefix).
const apiPrefix = "$JS.API."

// errNoMessage is the server's answer to a get past the last matching
// message (JetStream error code 10037).
var errNoMessage = errors.New("no message found")

// apiError is the error object of every JetStream API response.
type apiError struct {
	Code        int    `json:"code"`
	ErrCode     uint16 `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s (code %d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// paged is the paging part of every list response.
type paged struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

type streamListResponse struct {
	Error *apiError `json:"error"`
	paged
	Streams []*jetstream.StreamInfo `json:"streams"`
	// Missing names streams whose leader did not answer the meta leader
	// in time (clustered servers).
	Missing []string `json:"missing"`
}

type consumerListResponse struct {
	Error *apiError `json:"error"`
	paged
	Consumers []*jetstream.ConsumerInfo `json:"consumers"`
	Missing   []string                  `json:"missing"`
}

type msgGetResponse struct {
	Error   *apiError `json:"error"`
	Message struct {
		Seq  uint64    `json:"seq"`
		Time time.Time `json:"time"`
	} `json:"message"`
}

// api makes raw JetStream API requests over one connection and counts them.
// Raw requests let one CONSUMER.LIST per stream do the work without the
// extra STREAM.INFO that nats.go's Stream handle costs.
type api struct {
	nc       *nats.Conn
	requests *atomic.Int64
}

func (a api) request(ctx context.Context, subject string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s: %w", subject, err)
	}
	a.requests.Add(1)
	msg, err := a.nc.RequestWithContext(ctx, apiPrefix+subject, body)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("decode %s: %w", subject, err)
	}
	return nil
}

// streams lists every stream's info, page by page.
func (a api) streams(ctx context.Context) ([]*jetstream.StreamInfo, []string, error) {
	var out []*jetstream.StreamInfo
	var missing []string
	for {
		var resp streamListResponse
		if err := a.request(ctx, "STREAM.LIST", map[string]int{"offset": len(out)}, &resp); err != nil {
			return nil, nil, err
		}
		if resp.Error != nil {
			return nil, nil, fmt.Errorf("STREAM.LIST: %w", resp.Error)
		}
		out = append(out, resp.Streams...)
		missing = append(missing, resp.Missing...)
		if len(resp.Streams) == 0 || len(out) >= resp.Total {
			return out, missing, nil
		}
	}
}

// consumers lists every consumer of stream with its info, page by page.
func (a api) consumers(ctx context.Context, stream string) ([]*jetstream.ConsumerInfo, []string, error) {
	var out []*jetstream.ConsumerInfo
	var missing []string
	subject := "CONSUMER.LIST." + stream
	for {
		var resp consumerListResponse
		if err := a.request(ctx, subject, map[string]int{"offset": len(out)}, &resp); err != nil {
			return nil, nil, err
		}
		if resp.Error != nil {
			return nil, nil, fmt.Errorf("%s: %w", subject, resp.Error)
		}
		out = append(out, resp.Consumers...)
		missing = append(missing, resp.Missing...)
		if len(resp.Consumers) == 0 || len(out) >= resp.Total {
			return out, missing, nil
		}
	}
}

// next returns the sequence and store time of the first message of stream
// at or after seq whose subject matches subject (a filter with wildcards).
// It returns errNoMessage when there is none.
func (a api) next(ctx context.Context, stream string, seq uint64, subject string) (uint64, time.Time, error) {
	var resp msgGetResponse
	req := struct {
		Seq  uint64 `json:"seq"`
		Next string `json:"next_by_subj"`
	}{seq, subject}
	subj := "STREAM.MSG.GET." + stream
	if err := a.request(ctx, subj, req, &resp); err != nil {
		return 0, time.Time{}, err
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == 10037 {
			return 0, time.Time{}, errNoMessage
		}
		return 0, time.Time{}, fmt.Errorf("%s: %w", subj, resp.Error)
	}
	return resp.Message.Seq, resp.Message.Time, nil
}

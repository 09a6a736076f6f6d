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
// (Connect connects without a domain or a custom prefix).
const apiPrefix = "$JS.API."

// ErrNoMessage is the server's answer to a get past the last matching
// message (JetStream error code 10037).
var ErrNoMessage = errors.New("no message found")

// APIError is the error object of every JetStream API response: the
// server's refusal of a request it understood.
type APIError struct {
	Code        int    `json:"code"`
	ErrCode     uint16 `json:"err_code"`
	Description string `json:"description"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (code %d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// paged is the paging part of every list response.
type paged struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

type streamListResponse struct {
	Error *APIError `json:"error"`
	paged
	Streams []*jetstream.StreamInfo `json:"streams"`
	// Missing names streams whose leader did not answer the meta leader
	// in time (clustered servers).
	Missing []string `json:"missing"`
}

type consumerListResponse struct {
	Error *APIError `json:"error"`
	paged
	Consumers []*jetstream.ConsumerInfo `json:"consumers"`
	Missing   []string                  `json:"missing"`
}

// msgGetRequest is a STREAM.MSG.GET request: the first message at or
// after Seq, or StartTime, whose subject matches NextFor.
type msgGetRequest struct {
	Seq       uint64     `json:"seq,omitempty"`
	NextFor   string     `json:"next_by_subj,omitempty"`
	StartTime *time.Time `json:"start_time,omitempty"`
}

type msgGetResponse struct {
	Error   *APIError `json:"error"`
	Message struct {
		Seq  uint64    `json:"seq"`
		Time time.Time `json:"time"`
	} `json:"message"`
}

// Client is a connection to the cluster with its JetStream context, and
// the JetStream API requests nats.go has no call for, or costs more for,
// made raw: a poll's listings and lookups (one CONSUMER.LIST per stream
// does the work without the extra STREAM.INFO that nats.go's Stream
// handle costs), and the consumer resets and pauses of offsets/nats.
// Those requests are counted. The caller closes it. It is the one raw
// JetStream API client: every package that needs one uses it.
type Client struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	requests *atomic.Int64
}

// NewClient connects (see Connect) and counts the client's raw requests
// in requests.
func (c *Cluster) NewClient(ctx context.Context, purpose string, requests *atomic.Int64) (*Client, error) {
	nc, js, err := c.Connect(ctx, purpose)
	if err != nil {
		return nil, err
	}
	if requests == nil {
		requests = new(atomic.Int64)
	}
	return &Client{nc: nc, js: js, requests: requests}, nil
}

// JetStream is the client's JetStream context.
func (cl *Client) JetStream() jetstream.JetStream { return cl.js }

// IsConnected reports whether the connection is up (Connect's
// connections do not reconnect by themselves).
func (cl *Client) IsConnected() bool { return cl.nc.IsConnected() }

// Close closes the connection.
func (cl *Client) Close() { cl.nc.Close() }

func (cl *Client) request(ctx context.Context, subject string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s: %w", subject, err)
	}
	cl.requests.Add(1)
	msg, err := cl.nc.RequestWithContext(ctx, apiPrefix+subject, body)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("decode %s: %w", subject, err)
	}
	return nil
}

// Streams lists every stream's info, page by page, and the streams whose
// leader did not answer the meta leader in time.
func (cl *Client) Streams(ctx context.Context) ([]*jetstream.StreamInfo, []string, error) {
	var out []*jetstream.StreamInfo
	var missing []string
	for {
		var resp streamListResponse
		if err := cl.request(ctx, "STREAM.LIST", map[string]int{"offset": len(out)}, &resp); err != nil {
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

// Consumers lists every consumer of stream with its info, page by page,
// and the consumers whose leader did not answer in time.
func (cl *Client) Consumers(ctx context.Context, stream string) ([]*jetstream.ConsumerInfo, []string, error) {
	var out []*jetstream.ConsumerInfo
	var missing []string
	subject := "CONSUMER.LIST." + stream
	for {
		var resp consumerListResponse
		if err := cl.request(ctx, subject, map[string]int{"offset": len(out)}, &resp); err != nil {
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

// NextMsg returns the sequence and store time of the first message of
// stream at or after seq whose subject matches subject (a filter with
// wildcards). It returns ErrNoMessage when there is none.
func (cl *Client) NextMsg(ctx context.Context, stream string, seq uint64, subject string) (uint64, time.Time, error) {
	return cl.msgGet(ctx, stream, msgGetRequest{Seq: seq, NextFor: subject})
}

// MsgAt returns the sequence and store time of the first message of
// stream stored at or after at whose subject matches subject. It returns
// ErrNoMessage when there is none.
func (cl *Client) MsgAt(ctx context.Context, stream string, at time.Time, subject string) (uint64, time.Time, error) {
	return cl.msgGet(ctx, stream, msgGetRequest{StartTime: &at, NextFor: subject})
}

func (cl *Client) msgGet(ctx context.Context, stream string, req msgGetRequest) (uint64, time.Time, error) {
	var resp msgGetResponse
	subj := "STREAM.MSG.GET." + stream
	if err := cl.request(ctx, subj, req, &resp); err != nil {
		return 0, time.Time{}, err
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == 10037 {
			return 0, time.Time{}, ErrNoMessage
		}
		return 0, time.Time{}, fmt.Errorf("%s: %w", subj, resp.Error)
	}
	return resp.Message.Seq, resp.Message.Time, nil
}

// ServerVersion is the version of the server the client is connected to.
func (cl *Client) ServerVersion() string { return cl.nc.ConnectedServerVersion() }

// ResetConsumer resets consumer of stream to deliver from seq next
// (CONSUMER.RESET, nats-server 2.12) and returns the sequence the server
// reset it to. The server's refusal is an *APIError.
func (cl *Client) ResetConsumer(ctx context.Context, stream, consumer string, seq uint64) (uint64, error) {
	var resp struct {
		Error    *APIError `json:"error"`
		ResetSeq uint64    `json:"reset_seq"`
	}
	if err := cl.request(ctx, "CONSUMER.RESET."+stream+"."+consumer, map[string]uint64{"seq": seq}, &resp); err != nil {
		return 0, err
	}
	if resp.Error != nil {
		return 0, resp.Error
	}
	return resp.ResetSeq, nil
}

// PauseConsumer pauses consumer of stream until until, or resumes it when
// until is nil (CONSUMER.PAUSE, nats-server 2.11), and returns whether it
// is paused and until when. The server's refusal is an *APIError.
func (cl *Client) PauseConsumer(ctx context.Context, stream, consumer string, until *time.Time) (bool, time.Time, error) {
	req := map[string]time.Time{}
	if until != nil {
		req["pause_until"] = until.UTC()
	}
	var resp struct {
		Error      *APIError `json:"error"`
		Paused     bool      `json:"paused"`
		PauseUntil time.Time `json:"pause_until"`
	}
	if err := cl.request(ctx, "CONSUMER.PAUSE."+stream+"."+consumer, req, &resp); err != nil {
		return false, time.Time{}, err
	}
	if resp.Error != nil {
		return false, time.Time{}, resp.Error
	}
	return resp.Paused, resp.PauseUntil, nil
}

package dlqreplay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/selexpr"
)

// Sentinel errors callers branch on (the API maps them to HTTP statuses).
var (
	// ErrJobRunning: another job holds the DLQ (409). The error is a
	// *ConflictError that names the running job when it is known.
	ErrJobRunning = errors.New("a job is already running on this dlq")
	// ErrUnknownDLQ: the DLQ ID is malformed or names no configured cluster (404).
	ErrUnknownDLQ = errors.New("unknown dlq")
	// ErrNoReplay: the DLQ's broker has no replay backend (Options.NoReplay):
	// its DLQs are listed and measured but cannot be browsed or replayed.
	// It is an ErrUnknownDLQ (404) whose message says why.
	ErrNoReplay = fmt.Errorf("%w: its broker has no replay backend", ErrUnknownDLQ)
	// ErrInvalidRequest: the request cannot be run as given (400).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrTargetMissing: the target queue, exchange or topic does not exist;
	// nothing was moved to it (422).
	ErrTargetMissing = errors.New("target does not exist")
	// ErrDeliveryLimit: browsing a quorum DLQ would spend the delivery limit
	// of its messages and so was refused (409).
	ErrDeliveryLimit = errors.New("browsing would spend the queue's delivery limit")
	// ErrJobNotFound: no job or archive entry has that ID (404).
	ErrJobNotFound = errors.New("job not found")
	// ErrLeaseLost: a shared Store no longer holds the job as running:
	// another replica found it stopped heartbeating and marked it
	// interrupted, so another job may hold its DLQ now. The job stops.
	ErrLeaseLost = errors.New("job was marked interrupted by another replica")
)

// ConflictError is ErrJobRunning with the job that holds the DLQ. JobID is
// empty when another queuewatch instance holds it and its ID is unknown.
type ConflictError struct {
	DLQ   string
	JobID string
}

func (e *ConflictError) Error() string {
	if e.JobID == "" {
		return fmt.Sprintf("dlq %s: %v (held by another instance)", e.DLQ, ErrJobRunning)
	}
	return fmt.Sprintf("dlq %s: %v: job %s", e.DLQ, ErrJobRunning, e.JobID)
}

// Is makes errors.Is(err, ErrJobRunning) true.
func (e *ConflictError) Is(target error) bool { return target == ErrJobRunning }

// Ref names one DLQ; it is the parsed form of a DLQ ID (queue.DLQRef).
type Ref = queue.DLQRef

// ParseID parses a DLQ ID (queue.ParseDLQID); a malformed one is
// ErrUnknownDLQ.
func ParseID(id string) (Ref, error) {
	r, err := queue.ParseDLQID(id)
	if err != nil {
		return Ref{}, fmt.Errorf("%w: %w", ErrUnknownDLQ, err)
	}
	return r, nil
}

// Action is what a job does with the selected messages.
type Action string

// Job actions.
const (
	// ActionReplay sends messages back where they failed (or to Target).
	ActionReplay Action = "replay"
	// ActionMove sends messages to another queue or topic (Target.Name).
	ActionMove Action = "move"
	// ActionDelete archives messages in the audit store, then removes them.
	ActionDelete Action = "delete"
	// ActionRestore publishes archived messages again; see Service.Restore.
	ActionRestore Action = "restore"
)

// TargetKind chooses where replayed messages go.
type TargetKind string

// Target kinds.
const (
	// TargetOriginal (the default): RabbitMQ publishes to x-death[0].queue
	// through the default exchange, so only that queue gets the copy;
	// Kafka produces to the original topic from the dead-letter headers,
	// or the DLQ name without its suffix (orders.DLT → orders).
	TargetOriginal TargetKind = "original"
	// TargetOriginalExchange (RabbitMQ): the exchange and routing keys the
	// message was first published with (x-death, or Spring's
	// x-original-exchange/x-original-routingKey).
	TargetOriginalExchange TargetKind = "exchange"
	// TargetNamed: the queue (RabbitMQ, via the default exchange) or topic
	// (Kafka) in Name.
	TargetNamed TargetKind = "queue"
)

// Target is where a replay or move sends messages.
type Target struct {
	Kind TargetKind `json:"kind,omitempty"`
	Name string     `json:"name,omitempty"`
}

// Selection chooses the messages a job acts on. Criteria combine with AND;
// at least one must be given (All selects everything).
type Selection struct {
	All bool     `json:"all,omitempty"`
	IDs []string `json:"ids,omitempty"`
	// IDCount is how many ids the selection names. The service sets it
	// (a request's own is ignored); lists of jobs carry it without the
	// ids, which only the job itself returns (see Summary).
	IDCount int `json:"id_count,omitempty"`
	// Group is a failure signature key (queue.FailureSignature.Key).
	Group string `json:"group,omitempty"`
	// Headers must all be present with exactly these values (compared with
	// queue.Header.Text, so binary values are matched by their 0x-hex form).
	Headers map[string]string `json:"headers,omitempty"`
	// Since and Until bound the message timestamp (Since inclusive, Until
	// exclusive): the time of death for RabbitMQ (x-death[0].time, else
	// the timestamp property), the record timestamp for Kafka.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Where is a CEL expression over the message (selexpr: key, headers,
	// properties, body, value, failure, age, …) that is true for the
	// messages selected. A message whose evaluation fails (a missing
	// field) is not selected.
	Where string `json:"where,omitempty"`
	// Limit stops the job after this many selected messages (0: no limit).
	Limit int `json:"limit,omitempty"`
}

// Bounds of a selection by ids: a page of the DLQ page holds at most 1,000
// messages, and "all", a group, headers or a time range select more
// without naming each. A job's ids are stored once, apart from the rest of
// its row, and lists carry only their count, but one job's detail still
// returns them whole.
const (
	MaxSelectionIDs     = 10_000
	MaxSelectionIDBytes = 256 << 10
)

// Validate reports a selection that would select nothing by accident, or
// that is past the bounds.
func (s Selection) Validate() error {
	if len(s.IDs) > MaxSelectionIDs {
		return fmt.Errorf("selection names %d ids, more than %d: select by all, group, headers or a time range instead: %w", len(s.IDs), MaxSelectionIDs, ErrInvalidRequest)
	}
	if n := idBytes(s.IDs); n > MaxSelectionIDBytes {
		return fmt.Errorf("selection ids take %d bytes, more than %d: %w", n, MaxSelectionIDBytes, ErrInvalidRequest)
	}
	if !s.All && len(s.IDs) == 0 && s.Group == "" && len(s.Headers) == 0 && s.Since.IsZero() && s.Until.IsZero() && s.Where == "" {
		return fmt.Errorf("selection is empty (set all, ids, group, headers, where or a time range): %w", ErrInvalidRequest)
	}
	if s.Where != "" {
		if _, err := selexpr.Compile(s.Where); err != nil {
			return fmt.Errorf("selection where: %w: %w", err, ErrInvalidRequest)
		}
	}
	if s.Limit < 0 {
		return fmt.Errorf("selection limit %d is negative: %w", s.Limit, ErrInvalidRequest)
	}
	if s.IDCount < 0 {
		return fmt.Errorf("selection id_count %d is negative (the server counts the ids; leave it out): %w", s.IDCount, ErrInvalidRequest)
	}
	if slices.Contains(s.IDs, "") {
		return fmt.Errorf("selection ids contain an empty id: %w", ErrInvalidRequest)
	}
	return nil
}

// Counted is the selection with IDCount set from its ids, as a job
// records it.
func (s Selection) Counted() Selection {
	s.IDCount = len(s.IDs)
	return s
}

// Summary is the selection as lists show it: the ids' count, not the ids
// (up to MaxSelectionIDBytes per job, times every job of a list).
func (s Selection) Summary() Selection {
	if len(s.IDs) > 0 {
		s.IDCount = len(s.IDs)
	}
	s.IDs = nil
	return s
}

func idBytes(ids []string) int {
	n := 0
	for _, id := range ids {
		n += len(id)
	}
	return n
}

// Match reports whether m meets every criterion (Limit aside).
func (s Selection) Match(m *queue.Message) bool {
	if len(s.IDs) > 0 && !slices.Contains(s.IDs, m.ID) {
		return false
	}
	if s.Group != "" && m.Death.Signature().Key() != s.Group {
		return false
	}
	for k, want := range s.Headers {
		v, ok := m.Header(k)
		if !ok || queue.PrintableBytes(v) != want {
			return false
		}
	}
	if !s.Since.IsZero() && m.Timestamp.Before(s.Since) {
		return false
	}
	if !s.Until.IsZero() && !m.Timestamp.Before(s.Until) {
		return false
	}
	return s.matchWhere(m)
}

// matchWhere evaluates Where on m (compiled once: selexpr keeps the
// program); Validate refused one that does not compile.
func (s Selection) matchWhere(m *queue.Message) bool {
	if s.Where == "" {
		return true
	}
	p, err := selexpr.Compile(s.Where)
	if err != nil {
		return false
	}
	ok, _ := p.Match(selexpr.Input{Message: m, Now: time.Now()})
	return ok
}

// Result is what happened to one message.
type Result string

// Per-message results.
const (
	ResultMoved       Result = "moved"   // copy confirmed in the target, DLQ copy removed
	ResultDeleted     Result = "deleted" // archived, then removed from the DLQ
	ResultFailed      Result = "failed"  // left in the DLQ; Reason says why
	ResultSkipped     Result = "skipped" // left in the DLQ on purpose (poison, already done)
	ResultWouldMove   Result = "would_move"
	ResultWouldDelete Result = "would_delete"
)

// Outcome is one message's line in a job's receipt.
type Outcome struct {
	MessageID string `json:"message_id"`
	Result    Result `json:"result"`
	// Target is where the copy went (or would go): "exchange/routing-key"
	// for RabbitMQ ("/queue" for the default exchange), the topic for Kafka.
	Target string `json:"target,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Source is where the message had failed (for the replay metric).
	Source string `json:"source,omitempty"`
	// PossibleDuplicate: the copy is in the target, but after a fault the
	// original may also still be in the DLQ.
	PossibleDuplicate bool `json:"possible_duplicate,omitempty"`
}

// PoisonReason starts the reason of a message the poison guard left in
// the DLQ: it was replayed max_replays times already.
const PoisonReason = "poison: "

// Poisoned reports whether the poison guard left o's message in the DLQ
// (a skip of its own, apart from "already sent by an earlier job").
func (o Outcome) Poisoned() bool {
	return o.Result == ResultSkipped && strings.HasPrefix(o.Reason, PoisonReason)
}

// BrowseOptions pages through a DLQ without changing it.
type BrowseOptions struct {
	// Limit is the page size (default 50, at most 1000).
	Limit int
	// After is the Next token of the previous page ("" for the head).
	After string
	// GroupOver asks for the failure groups of the DLQ's first GroupOver
	// messages (at most MaxGroupOver), read from its head, rather than of
	// the page alone: a group then counts its messages beyond the page.
	// The service reads the head once more when the page is not it, and
	// keeps the page's groups when one more read would cost what a look
	// must not (Page.SafeBrowsesLeft, Page.CachedAt, a backend whose
	// Browse moves what it read). Backends ignore it.
	GroupOver int
	// Where, a CEL expression (Selection.Where), filters the DLQ: the page
	// holds the matches among whole pages of MaxBrowse messages read from
	// After, until Limit matches are found or WhereScan messages were read
	// (so it may hold more than Limit). Groups are the matches'.
	Where string
}

// Bounds of a filtered browse: pages of MaxBrowse messages, at most
// WhereScan messages read.
const (
	MaxBrowse = 1000
	WhereScan = 5 * MaxBrowse
)

// MaxGroupOver bounds BrowseOptions.GroupOver: one read of a page.
const MaxGroupOver = 1000

// Page is one page of a DLQ.
type Page struct {
	Messages []queue.Message `json:"messages"`
	// Next is the After token for the next page; empty at the end.
	Next string `json:"next,omitempty"`
	// Groups are the failure groups of this page's messages, or with
	// GroupsHead those of the DLQ's first GroupsOf messages.
	Groups []queue.FailureGroup `json:"groups"`
	// GroupsOf is how many messages Groups counted; GroupsHead says they
	// were the DLQ's first ones (BrowseOptions.GroupOver), and GroupsWhole
	// that they were all the DLQ held when read.
	GroupsOf    int  `json:"groups_of"`
	GroupsHead  bool `json:"groups_head,omitempty"`
	GroupsWhole bool `json:"groups_whole,omitempty"`
	// SafeBrowsesLeft is how many more times this page can be read before
	// a read would bring one of its messages to the queue's delivery
	// limit (a quorum queue spends one delivery per look); nil when
	// browsing spends nothing that is limited.
	SafeBrowsesLeft *int `json:"safe_browses_left,omitempty"`
	// CachedAt is set when the page was not read from the queue but
	// served from the last read (at that time), because reading again
	// would have spent a message's last safe delivery.
	CachedAt time.Time `json:"cached_at,omitzero"`
	// Scanned is how many messages a filtered page (BrowseOptions.Where)
	// read to find its messages.
	Scanned int `json:"scanned,omitempty"`
}

// Restored is the broker's answer for one archived message a
// Backend.Restore published.
type Restored struct {
	// ID is the archive ID.
	ID int64
	// Duplicate: the broker confirmed the publish but dropped it as a
	// duplicate of a copy it already holds (a JetStream PubAck with
	// Duplicate set: an earlier restore of the same row stored it), so no
	// new copy was stored. The restore reports it skipped, not moved, and
	// marks the row restored: the copy the broker holds is the row's.
	Duplicate bool
}

// Archived is a message a delete saved in the Store before removing it
// from its DLQ; Backend.Restore publishes it again.
type Archived struct {
	// ID is the archive ID the Store gave it.
	ID int64
	// RestoreID is a random id the Store gave the row, unique across
	// instances and data_dirs (unlike ID, which every store counts from
	// 1): a restored copy's dedup id at a broker that drops duplicates.
	RestoreID  string
	JobID      string
	DLQ        string
	MessageID  string
	ArchivedAt time.Time
	Properties map[string]string
	// Headers keep their raw bytes, so binary keys and values survive.
	Headers []queue.Header
	Key     []byte
	Body    []byte
	// Deleted is set once the session settled the message's removal from
	// its DLQ. A message the delete could not remove (or whose removal a
	// crash left unsettled) keeps its row unset, and Service.Restore never
	// publishes it: it may still be in the DLQ, and a copy would be a
	// duplicate.
	Deleted bool
	// RestoredAt and RestoredTo (a DLQ-style ID) are set once a restore
	// confirmed the message in its target.
	RestoredAt time.Time
	RestoredTo string
}

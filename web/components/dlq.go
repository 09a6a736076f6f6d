package components

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// DLQData is what the DLQ page shows.
type DLQData struct {
	// Readers read the DLQ's sources, as the viewer may see them;
	// Grafana is its dashboard's address ("" without grafana_url).
	Readers []queue.Reader
	Grafana string
	Chrome  Chrome
	// ID is the DLQ ID; Broker, Cluster, VHost and Name its parts.
	ID, Broker, Cluster, VHost, Name string
	// DLQ is the latest poll's view (depth, age, sources); nil when the
	// last poll does not list it.
	DLQ *queue.DLQ
	// Headroom is how long until the broker deletes the oldest dead
	// letter, shown when known; HeadroomSoon, when that is below
	// alerts.retention_headroom_low, puts its sentence in a banner.
	Headroom     queue.Headroom
	HeadroomSoon bool
	Inflow       string
	Trend        Spark
	// CanReplay (operator) and CanDelete (admin) decide which actions are
	// shown; ReplayAPI is where they are posted.
	CanReplay, CanDelete bool
	ReplayAPI            string
	// PreviewAPI answers what a request would do, recording nothing: the
	// confirmation dialog asks it when it opens.
	PreviewAPI string
	// Rate prefills the rate field (messages per second, "" unlimited).
	Rate string
	// Notice says why messages are not listed; RunningJob is the job that
	// holds the DLQ, whose progress the page follows.
	Notice     string
	RunningJob string
	Messages   []MessageView
	Groups     []queue.FailureGroup
	// GroupsOf, GroupsHead and GroupsWhole say which messages Groups
	// count (dlqreplay.Page): the first GroupsOf of the DLQ, all of it,
	// or the page's.
	GroupsOf                int
	GroupsHead, GroupsWhole bool
	// GroupSample is an exception message of each failure group, by key.
	GroupSample map[string]string
	// Targets names where jobs went when the job itself does not say
	// (a replay to the original queue), by job ID.
	Targets map[string]string
	// After is this page's token, Next the following page's.
	After, Next string
	Limit       int
	Jobs        []dlqreplay.Job
	// SafeBrowsesLeft and CachedAt are the page's dlqreplay.Page fields:
	// how many more looks a quorum queue's delivery limit allows, and
	// when a page shown from the last read was read.
	SafeBrowsesLeft *int
	CachedAt        time.Time
	// Fanout lists, for a NATS DLQ, the original subjects other consumers
	// read too.
	Fanout []Fanout
	// CanNative: the DLQ's broker can move it back itself (a native
	// redrive, dlqreplay.ModeNative) and the user may replay.
	CanNative bool
	// CanUnmask: the DLQ has masking rules and the viewer may show one
	// message in clear; Unmasked is the message shown in clear, if any.
	CanUnmask bool
	Unmasked  string
	// GroupBy is the body path the page groups by (?group_by=), and
	// FieldGroups its groups, or GroupByError why the path is wrong.
	GroupBy      string
	GroupByError string
	FieldGroups  []inspect.FieldGroup
	// Where is the page's CEL filter (?where=), Scanned how many messages
	// it read, and WhereError why the filter was refused.
	Where      string
	Scanned    int
	WhereError string
	// Filters are the filters saved on the DLQ, shared by everyone who
	// reads it (their Where reads [masked] where the viewer may not see
	// what it names); FiltersAPI is where they are saved, when the viewer
	// may save them (an operator of the DLQ), else empty.
	Filters    []store.SavedFilter
	FiltersAPI string
}

// FilterURL is this DLQ's page filtered by where.
func (d DLQData) FilterURL(where string) string {
	return DLQURL(d.ID) + "?" + url.Values{"where": {where}}.Encode()
}

// UnmaskURL is this page showing message id in clear.
func (d DLQData) UnmaskURL(id string) string {
	q := url.Values{"unmask": {id}}
	if d.After != "" {
		q.Set("after", d.After)
	}
	if d.Limit != 0 {
		q.Set("limit", strconv.Itoa(d.Limit))
	}
	return DLQURL(d.ID) + "?" + q.Encode()
}

// NativeName names the broker that runs a native redrive, for people
// ("SQS"): its name as the DLQ ID has it, in capitals.
func (d DLQData) NativeName() string {
	if d.Broker == string(queue.PubSub) {
		return "Pub/Sub seek"
	}
	return strings.ToUpper(d.Broker)
}

// FanOutNote warns where a replay reaches more readers than the one that
// failed: a Pub/Sub republish goes to the source's topic, so every
// subscription of that topic gets a copy; "" elsewhere.
func (d DLQData) FanOutNote() string {
	if d.Broker != string(queue.PubSub) {
		return ""
	}
	return "A replay republishes each message to the source subscription's topic: every subscription of that topic gets a copy, not only the one that failed. " +
		"To redeliver to that one subscription only, seek it instead (Redrive with Pub/Sub seek): it goes back to the earliest dead letter's publish time, " +
		"after a snapshot taken as the undo, and redelivers everything published since, acked or not."
}

// NativeTarget is where a native redrive sends the messages: the DLQ's
// single source, as the last poll found it.
func (d DLQData) NativeTarget() string {
	if d.DLQ != nil && len(d.DLQ.Sources) == 1 {
		return d.DLQ.Sources[0]
	}
	return "its source queue"
}

// LookNote says how many more times the page can be read before a look
// would spend a message's last safe delivery, or that it is the last read
// shown again; "" when looking spends nothing limited.
func (d DLQData) LookNote() string {
	switch {
	case d.Broker == string(queue.SQS) && len(d.Messages) > 0:
		return "each look receives these messages (their receive count rises) and puts them at the back of the queue: SQS has no read-only browse and no order, so the next look starts further on"
	case !d.CachedAt.IsZero():
		return "as read at " + Stamp(d.CachedAt) + ": reading again would spend a message's last safe delivery"
	case d.SafeBrowsesLeft == nil:
		return ""
	case *d.SafeBrowsesLeft == 1:
		return "1 more safe look (delivery limit)"
	}
	return strconv.Itoa(*d.SafeBrowsesLeft) + " more safe looks (delivery limit)"
}

// MessageView is one message of the DLQ page with its display forms.
type MessageView struct {
	Idx int
	M   *queue.Message
	// Size is the body's size on the wire (M.Body may be a masked copy).
	Size     int
	Preview  string
	BodyKind string
	BodyText string
	// Truncated says the body view stops before the body does.
	Truncated    bool
	Hex          string
	HexTruncated bool
	ReplayCount  int64
	DownloadURL  string
}

// Limits of what the inspector renders; the download has everything.
const (
	InspectorBodyLimit = 16 << 10
	InspectorHexLimit  = 2 << 10
	previewRunes       = 110
)

// Preview is a body's first line, shortened, for the message list; binary
// bodies are described rather than shown.
func Preview(kind string, body []byte) string {
	switch kind {
	case queue.BodyEmpty:
		return "(empty)"
	case queue.BodyBinary:
		return "binary · " + Bytes(len(body))
	}
	s := string(body[:min(len(body), previewRunes*4)])
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > previewRunes {
		return string(r[:previewRunes]) + "…"
	}
	return s
}

// depthReadTitle is the hover text of a DepthRead's sentence: why the
// counts may be older than the page.
func depthReadTitle(r queue.DepthRead) string {
	s := "read at " + Stamp(r.At) + "; "
	if r.AfterJob != "" {
		return s + "read again when job " + r.AfterJob + " ended, between two reads of the whole account (every " + queue.HumanDuration(r.Every) + ")"
	}
	return s + "the whole account is read every " + queue.HumanDuration(r.Every) + " to keep its request bill low; the queues a DLQ job touches are read again when it ends"
}

// Stamp is a time's exact value for a hover title.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// DefaultTarget names where a plain replay sends messages: the single
// source queue or topic when there is one.
func (d DLQData) DefaultTarget() string {
	if d.DLQ != nil && len(d.DLQ.Sources) == 1 {
		return d.DLQ.Sources[0]
	}
	return queue.Broker(d.Broker).Terms().Origin
}

// Selectable tells whether rows get checkboxes: only for someone who may
// act on them.
func (d DLQData) Selectable() bool { return d.CanReplay && len(d.Messages) > 0 }

// NextURL and FirstURL page through the DLQ from its head.
func (d DLQData) NextURL() string {
	v := url.Values{}
	v.Set("after", d.Next)
	if d.Limit != 0 {
		v.Set("limit", strconv.Itoa(d.Limit))
	}
	if d.Where != "" {
		v.Set("where", d.Where)
	}
	return DLQURL(d.ID) + "?" + v.Encode()
}

// FirstURL is the head of the DLQ.
func (d DLQData) FirstURL() string { return DLQURL(d.ID) }

// GroupsScope says which messages the failure groups count: the whole
// DLQ, its first messages (when it holds more than the bound), or only
// the page shown (where one more look would cost: a quorum queue's
// delivery limit, SQS). A group's replay always covers the whole DLQ, and
// its dialog counts it.
func (d DLQData) GroupsScope() string {
	n := Exact(int64(d.GroupsOf)) + " " + Plural(d.GroupsOf, "message", "messages")
	switch {
	case d.GroupsWhole:
		return "of all " + n + " in the DLQ"
	case d.GroupsHead && d.DLQ != nil && d.DLQ.Messages > int64(d.GroupsOf):
		return "of the first " + n + " (the DLQ holds " + Exact(d.DLQ.Messages) + "); a group's replay covers the whole DLQ and its dialog counts it"
	case d.GroupsHead:
		return "of the first " + n + "; a group's replay covers the whole DLQ and its dialog counts it"
	}
	return "of the " + n + " shown; a group's replay covers the whole DLQ and its dialog counts it"
}

// GroupName names a failure group for people: its reason, exception class
// and source, "rejected · java.lang.IllegalStateException ← orders".
func GroupName(s queue.FailureSignature) string {
	out := groupLabel(s)
	if s.ExceptionClass != "" {
		out += " · " + s.ExceptionClass
	}
	if s.Source != "" {
		out += " ← " + s.Source
	}
	return out
}

func groupLabel(s queue.FailureSignature) string {
	r := s.Reason
	if r == "" {
		r = "unknown reason"
	}
	return r
}

func deathsLabel(m *queue.Message) string {
	if ds := m.Death.Deaths; len(ds) > 0 && ds[0].Count > 0 {
		return "×" + strconv.FormatInt(ds[0].Count, 10)
	}
	return ""
}

func routing(d queue.Death) string {
	ex := d.Exchange
	if ex == "" {
		ex = "(default exchange)"
	}
	return ex + " → " + strings.Join(d.RoutingKeys, ", ")
}

// JobsData is what the replays page shows.
type JobsData struct {
	Chrome Chrome
	// Reads are the newest body reads (the body-read audit).
	Reads     []store.BodyRead
	Table     Table
	Running   []dlqreplay.Job
	Jobs      []dlqreplay.Job
	Total     int
	CanCancel bool
	CanDelete bool
	// NoCancel lists running jobs whose DLQ the viewer may not act on
	// (a scoped grant): their Cancel button is not shown.
	NoCancel map[string]bool
	// Receipt is the job picked with ?job=, its outcomes cut to
	// ReceiptLimit.
	Receipt     *dlqreplay.Receipt
	ReceiptMore int
	Archived    []ArchivedView
	// Rate prefills the restore's rate field, as DLQData.Rate.
	Rate   string
	Notice string
	// Targets is as in DLQData.
	Targets map[string]string
	// Resets are the newest offset-reset applies; ResetsOff says the
	// server has no offset resets.
	Resets    []ResetView
	ResetsOff bool
}

// ReceiptLimit is how many outcomes the replays page lists.
const ReceiptLimit = 500

// ArchivedView is one archived message with its display forms.
type ArchivedView struct {
	A       *dlqreplay.Archived
	Preview string
	Size    int
	// Restorable: the viewer is an admin of the message's DLQ.
	Restorable bool
}

// JobURL is the replays page with one job's receipt open.
func JobURL(id string) string { return "/replays?job=" + url.QueryEscape(id) }

// JobTarget describes where a job sent messages.
func JobTarget(j dlqreplay.Job) string {
	switch {
	case j.Action == dlqreplay.ActionDelete:
		return "archive"
	case j.Target.Kind == dlqreplay.TargetOriginalExchange:
		return "original exchange"
	case j.Target.Name != "":
		return j.Target.Name
	}
	return "original queue"
}

func jobTarget(j dlqreplay.Job, targets map[string]string) string {
	if t := targets[j.ID]; t != "" {
		return t
	}
	return JobTarget(j)
}

// headerNumber is a numeric dead-letter header in decimal where its
// bytes are not (Spring's binary ints), as the Deaths tab reads it; ""
// for any other header.
func headerNumber(h queue.Header) string {
	n, ok := h.Number()
	if !ok {
		return ""
	}
	if d := strconv.FormatInt(n, 10); d != h.Text() {
		return d
	}
	return ""
}

// receivesText is a death's count: "×5", and for SQS "×5 · 2 of them
// queuewatch's browses" when this queuewatch received it too.
func receivesText(x queue.Death) string {
	s := "×" + strconv.FormatInt(x.Count, 10)
	if x.Own > 0 {
		s += " · " + strconv.FormatInt(x.Own, 10) + " of them queuewatch's own"
	}
	return s
}

// JobSelection describes what a job selected.
func JobSelection(s dlqreplay.Selection) string {
	var parts []string
	if s.All {
		parts = append(parts, "all")
	}
	if n := max(len(s.IDs), s.IDCount); n > 0 {
		parts = append(parts, Exact(int64(n))+" "+Plural(n, "id", "ids"))
	}
	if s.Group != "" {
		parts = append(parts, "group "+strings.TrimRight(strings.ReplaceAll(s.Group, "|", " · "), " ·"))
	}
	if len(s.Headers) > 0 {
		parts = append(parts, "headers")
	}
	if !s.Since.IsZero() || !s.Until.IsZero() {
		parts = append(parts, "time range")
	}
	if s.Limit > 0 {
		parts = append(parts, "limit "+strconv.Itoa(s.Limit))
	}
	return strings.Join(parts, ", ")
}

// JobClass is a job state's colour and glyph class.
func JobClass(s dlqreplay.JobState) string {
	switch s {
	case dlqreplay.StateSucceeded:
		return "st-ok"
	case dlqreplay.StateRunning:
		return "st-run"
	case dlqreplay.StateCancelled:
		return "st-warn"
	case dlqreplay.StateInterrupted:
		return "st-rewind"
	}
	return "st-stop"
}

// JobGlyph is a job state's shape.
func JobGlyph(s dlqreplay.JobState) string {
	switch s {
	case dlqreplay.StateSucceeded:
		return "●"
	case dlqreplay.StateRunning:
		return "◌"
	case dlqreplay.StateCancelled:
		return "▲"
	case dlqreplay.StateInterrupted:
		return "↯"
	}
	return "■"
}

// DLQName is the last part of a DLQ ID, the queue or topic.
func DLQName(id string) string {
	if p := strings.SplitN(id, ":", 4); len(p) == 4 {
		return p[3]
	}
	return id
}

// DLQWhere is the broker, cluster and vhost of a DLQ ID.
func DLQWhere(id string) string {
	p := strings.SplitN(id, ":", 4)
	if len(p) != 4 {
		return ""
	}
	return p[0] + ":" + p[1] + VHostSuffix(p[2])
}

func duration(j dlqreplay.Job, now time.Time) string {
	end := j.Finished
	if end.IsZero() {
		if j.State != dlqreplay.StateRunning {
			return "—"
		}
		end = now
	}
	if d := end.Sub(j.Created); d < time.Second {
		return "<1s"
	}
	return Seconds(end.Sub(j.Created).Seconds())
}

func progressMax(p dlqreplay.Progress) string {
	return strconv.FormatInt(max(p.ToMove, 1), 10)
}

func progressValue(p dlqreplay.Progress) string {
	return strconv.FormatInt(p.Moved+p.WouldMove+p.Failed+p.Skipped, 10)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func pathEscape(s string) string { return url.PathEscape(s) }

// ReceiptSentence says what a job did in one line: "Replayed 118 of 120
// messages from orders.dlq → orders · 2 failed · 0 skipped".
func ReceiptSentence(j dlqreplay.Job, targets map[string]string) string {
	verb := map[dlqreplay.Action]string{
		dlqreplay.ActionReplay: "Replayed", dlqreplay.ActionMove: "Moved",
		dlqreplay.ActionDelete: "Deleted", dlqreplay.ActionRestore: "Restored",
	}[j.Action]
	if verb == "" {
		verb = string(j.Action)
	}
	if j.Mode == dlqreplay.ModeNative {
		verb = "Native redrive moved"
	}
	if j.DryRun {
		verb = "Dry run: would " + strings.ToLower(strings.TrimSuffix(verb, "d"))
		if j.Action == dlqreplay.ActionReplay {
			verb = "Dry run: would replay"
		}
	}
	p := j.Progress
	from, to := " from ", " → "+jobTarget(j, targets)
	if j.Action == dlqreplay.ActionRestore {
		from, to = " into ", ""
	}
	s := verb + " " + Exact(movedOrWould(j)) + " of " + Exact(p.ToMove) + " " + Plural(p.ToMove, "message", "messages") + from + DLQName(j.DLQ) + to
	s += " · " + Exact(p.Failed) + " failed · " + Exact(p.Skipped) + " skipped"
	if p.Duplicates > 0 {
		s += " · " + Exact(p.Duplicates) + " possible duplicates"
	}
	return s
}

// JobMode says how a job moved messages: through queuewatch's pipeline,
// or by the broker's own redrive.
func JobMode(j dlqreplay.Job) string {
	if j.Mode == dlqreplay.ModeNative {
		return "native (the broker's own redrive)"
	}
	return "pipeline"
}

// movedOrWould is what a job moved, or for a dry run what it would move.
func movedOrWould(j dlqreplay.Job) int64 {
	if j.DryRun {
		return j.Progress.WouldMove
	}
	return j.Progress.Moved
}

// MovedLabel names that count: "moved", "deleted", "would move".
func MovedLabel(j dlqreplay.Job) string {
	switch {
	case j.DryRun && j.Action == dlqreplay.ActionDelete:
		return "would delete"
	case j.DryRun:
		return "would move"
	case j.Action == dlqreplay.ActionDelete:
		return "deleted"
	}
	return "moved"
}

// OutcomeTarget puts an outcome's target in words: "exchange/routing-key"
// on a broker that routes by exchange (Terms.ByExchange), where "/queue" is
// the default exchange.
func OutcomeTarget(dlq, target string) string {
	if ref, err := queue.ParseDLQID(dlq); err != nil || !ref.Broker.Terms().ByExchange {
		return target
	}
	ex, key, ok := strings.Cut(target, "/")
	switch {
	case !ok:
		return target
	case ex == "":
		return key + " (default exchange)"
	}
	return ex + " → " + key
}

// exchangeLabel names an exchange for people: RabbitMQ's default exchange
// has the empty name.
func exchangeLabel(name string) string {
	if name == "" {
		return "(default)"
	}
	return name
}

// diedAgo is how long ago a message died, or "unknown" when nothing
// recorded when: Spring AMQP's RepublishMessageRecoverer sets no timestamp
// and writes no x-death, and "never" would say it did not die.
func diedAgo(t, now time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return Ago(t, now)
}

// Fanout is an original subject of a NATS DLQ's messages and the other
// consumers that read it: a replay to the subject reaches them too.
type Fanout struct {
	Stream, Subject string
	Others          []string
}

// natsHeaderPrefix starts the headers NATS dead-letter capture adds.
const natsHeaderPrefix = "Qw-Dead-"

// Fact is one labelled value.
type Fact struct{ Label, Value string }

// CaptureFacts are the capture headers of a captured NATS dead letter,
// labelled ("stream", "sequence", "term reason"), in their order; none
// for other messages.
func CaptureFacts(m *queue.Message) []Fact {
	var out []Fact
	for _, h := range m.Headers {
		if rest, ok := strings.CutPrefix(h.Key, natsHeaderPrefix); ok {
			out = append(out, Fact{Label: strings.ToLower(strings.ReplaceAll(rest, "-", " ")), Value: h.Text()})
		}
	}
	return out
}

// PayloadLost tells a captured NATS dead letter whose original was gone.
func PayloadLost(m *queue.Message) bool {
	v, _ := m.Header(natsHeaderPrefix + "Payload-Lost")
	return string(v) == "true"
}

// joinNames lists names for a sentence: "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// moveNoun is what a move's target is called on broker.
func moveNoun(broker string) string { return queue.Broker(broker).Terms().Target }

// bySubject reports whether broker's dead letters were routed by subject.
func bySubject(broker string) bool { return queue.Broker(broker).Terms().BySubject }

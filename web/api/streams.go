package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// streamsPartitionJSON is one source partition of a streams group in the
// API; committed_offset is null before the group's first commit on it.
type streamsPartitionJSON struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Internal        bool   `json:"internal"`
	CommittedOffset *int64 `json:"committed_offset"`
	EndOffset       int64  `json:"end_offset"`
	Lag             int64  `json:"lag"`
}

// streamsTasksJSON are a member's tasks of one subtopology.
type streamsTasksJSON struct {
	Subtopology string  `json:"subtopology"`
	Partitions  []int32 `json:"partitions"`
}

// streamsMemberJSON is one member (stream thread) of a streams group.
type streamsMemberJSON struct {
	ID         string             `json:"id"`
	ProcessID  string             `json:"process_id"`
	ClientID   string             `json:"client_id"`
	Host       string             `json:"host"`
	InstanceID string             `json:"instance_id,omitempty"`
	Active     []streamsTasksJSON `json:"active_tasks"`
	Standby    []streamsTasksJSON `json:"standby_tasks"`
	Warmup     []streamsTasksJSON `json:"warmup_tasks"`
}

// subtopologyJSON is one subtopology of a streams group's topology.
type subtopologyJSON struct {
	ID                string   `json:"id"`
	SourceTopics      []string `json:"source_topics"`
	RepartitionSource []string `json:"repartition_source_topics"`
	RepartitionSink   []string `json:"repartition_sink_topics"`
	Changelogs        []string `json:"changelog_topics"`
}

// StreamsGroupJSON is a Kafka streams group in the API.
type StreamsGroupJSON struct {
	Cluster         string                 `json:"cluster"`
	Group           string                 `json:"group"`
	State           string                 `json:"state"`
	Epoch           int32                  `json:"epoch"`
	AssignmentEpoch int32                  `json:"assignment_epoch"`
	Status          queue.Status           `json:"status"`
	StatusReason    string                 `json:"status_reason,omitempty"`
	StatusSince     *time.Time             `json:"status_since,omitempty"`
	Lag             int64                  `json:"lag"`
	Members         []streamsMemberJSON    `json:"members"`
	Subtopologies   []subtopologyJSON      `json:"subtopologies"`
	Partitions      []streamsPartitionJSON `json:"partitions"`
	Error           string                 `json:"error,omitempty"`
}

// StreamsGroups is GET /api/v1/kafka/streams-groups: every Kafka streams
// group with its members, subtopologies and partitions, worst first
// (status severity, then lag).
func (s *Server) StreamsGroups(c echo.Context) error {
	rows := view.StreamsGroups.All(s.Mon(c))
	out := make([]StreamsGroupJSON, len(rows))
	for i, r := range rows {
		out[i] = streamsGroupOut(r)
	}
	return c.JSON(http.StatusOK, map[string]any{"streams_groups": out})
}

func streamsGroupOut(r components.StreamsRow) StreamsGroupJSON {
	g := r.G
	j := StreamsGroupJSON{
		Cluster: g.Cluster, Group: g.Name, State: g.State, Epoch: g.Epoch, AssignmentEpoch: g.AssignmentEpoch,
		Status: r.Status, StatusReason: g.EffectiveReason(), StatusSince: view.SinceJSON(g.StatusSince),
		Lag: r.Lag, Error: g.Err,
		Members:       make([]streamsMemberJSON, len(g.Members)),
		Subtopologies: make([]subtopologyJSON, len(g.Subtopologies)),
		Partitions:    make([]streamsPartitionJSON, len(g.Partitions)),
	}
	for i, m := range g.Members {
		j.Members[i] = streamsMemberJSON{
			ID: m.ID, ProcessID: m.ProcessID, ClientID: m.ClientID, Host: m.Host, InstanceID: m.InstanceID,
			Active: tasksOut(m.Active), Standby: tasksOut(m.Standby), Warmup: tasksOut(m.Warmup),
		}
	}
	for i, st := range g.Subtopologies {
		j.Subtopologies[i] = subtopologyJSON{
			ID: st.ID, SourceTopics: orEmpty(st.SourceTopics), RepartitionSource: orEmpty(st.RepartitionSource),
			RepartitionSink: orEmpty(st.RepartitionSink), Changelogs: orEmpty(st.Changelogs),
		}
	}
	for i, p := range g.Partitions {
		jp := streamsPartitionJSON{Topic: p.Topic, Partition: p.Partition, Internal: p.Internal, EndOffset: p.End, Lag: p.Lag}
		if p.Committed >= 0 {
			c := p.Committed
			jp.CommittedOffset = &c
		}
		j.Partitions[i] = jp
	}
	return j
}

// tasksOut is a member's tasks in the API, [] for none.
func tasksOut(ts []queue.StreamsTasks) []streamsTasksJSON {
	out := make([]streamsTasksJSON, len(ts))
	for i, t := range ts {
		out[i] = streamsTasksJSON{Subtopology: t.Subtopology, Partitions: t.Partitions}
	}
	return out
}

// orEmpty is ss, or [] rather than null for none.
func orEmpty(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// StreamsGroupHistory is the streams group chart's data: the kept history
// of its lag (its reader's backlog), oldest first.
func (s *Server) StreamsGroupHistory(c echo.Context) error {
	_, row, err := view.StreamsGroups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	r := g.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]sharePointJSON, len(h))
	for i, p := range h {
		out[i] = sharePointJSON{At: p.At, Lag: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": g.Cluster, "group": g.Name, "history": out})
}

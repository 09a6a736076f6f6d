package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

func (s *Server) overview(c echo.Context) error {
	groups, dlqs := s.groupsAndDLQs()
	return render(c, http.StatusOK, components.Overview(components.OverviewData{
		Sources: s.opts.Monitor.Statuses(), Groups: groups, DLQs: dlqs, Now: components.Now{T: time.Now()},
	}))
}

func (s *Server) groupPage(c echo.Context) error {
	g, err := s.groupParam(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, components.Group(components.GroupData{
		Sources: s.opts.Monitor.Statuses(), Group: *g, Now: components.Now{T: time.Now()},
	}))
}

// groupsAndDLQs gathers every source's groups and DLQs, worst first: the
// page answers "what needs me?" before anything else.
func (s *Server) groupsAndDLQs() ([]queue.ConsumerGroup, []queue.DLQ) {
	var groups []queue.ConsumerGroup
	var dlqs []queue.DLQ
	for _, snap := range s.opts.Monitor.Snapshots() {
		groups = append(groups, snap.Groups...)
		dlqs = append(dlqs, snap.DLQs...)
	}
	slices.SortStableFunc(groups, func(a, b queue.ConsumerGroup) int {
		if sa, sb := severity(a.Status, a.Err), severity(b.Status, b.Err); sa != sb {
			return sb - sa
		}
		if la, lb := a.TotalLag(), b.TotalLag(); la != lb {
			if la > lb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Cluster+"\x00"+a.Name, b.Cluster+"\x00"+b.Name)
	})
	slices.SortStableFunc(dlqs, func(a, b queue.DLQ) int {
		if a.Messages != b.Messages {
			if a.Messages > b.Messages {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID(), b.ID())
	})
	return groups, dlqs
}

func severity(s queue.Status, err string) int {
	if s == "" && err != "" {
		s = queue.StatusError
	}
	for i, st := range []queue.Status{queue.StatusOK, queue.StatusWarn, queue.StatusRewind, queue.StatusError, queue.StatusStall, queue.StatusStop} {
		if st == s {
			return i
		}
	}
	return 0
}

// groupParam finds the group named by the :cluster and :group path
// parameters. echo matches on the raw (escaped) path so names may hold "/",
// which is why the parameters are unescaped here.
func (s *Server) groupParam(c echo.Context) (*queue.ConsumerGroup, error) {
	cluster, err := pathParam(c, "cluster")
	if err != nil {
		return nil, err
	}
	group, err := pathParam(c, "group")
	if err != nil {
		return nil, err
	}
	g, ok := s.findGroup(cluster, group)
	if !ok {
		return nil, echo.NewHTTPError(http.StatusNotFound, "no such consumer group")
	}
	return g, nil
}

func pathParam(c echo.Context, name string) (string, error) {
	v, err := url.PathUnescape(c.Param(name))
	if err != nil {
		return "", echo.NewHTTPError(http.StatusBadRequest, "malformed "+name+" in path")
	}
	return v, nil
}

func (s *Server) findGroup(cluster, group string) (*queue.ConsumerGroup, bool) {
	for _, snap := range s.opts.Monitor.Snapshots() {
		if snap.Broker == queue.Kafka && snap.Cluster == cluster {
			return snap.Group(group)
		}
	}
	return nil, false
}

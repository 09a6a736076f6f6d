package components

import (
	"net/url"

	"github.com/queuewatch/queuewatch/queue"
)

// GroupURL is the path of a group's page; every segment is escaped, so any
// group name makes a working, harmless link.
func GroupURL(cluster, group string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/groups/" + url.PathEscape(group)
}

// DLQURL is the path of a DLQ's page; the ID is one escaped segment.
func DLQURL(id string) string { return "/dlq/" + url.PathEscape(id) }

// QueueDLQURL is the DLQ page of a RabbitMQ queue that is a DLQ.
func QueueDLQURL(q *queue.Queue) string {
	return DLQURL(queue.DLQRef{Broker: queue.RabbitMQ, Cluster: q.Cluster, VHost: q.VHost, Name: q.Name}.ID())
}

// VHostSuffix names a RabbitMQ vhost after its cluster; quoted, because
// the default vhost "/" would read as a path separator.
func VHostSuffix(vhost string) string {
	if vhost == "" {
		return ""
	}
	return ` / vhost "` + vhost + `"`
}

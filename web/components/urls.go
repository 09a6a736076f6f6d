package components

import (
	"net/url"

	"github.com/queuewatch/queuewatch/queue"
)

// GroupURL is the path of a group's page; every segment is escaped, so any
// group name makes a working, harmless link.
func GroupURL(cluster, group string) string { return queue.GroupPage(cluster, group) }

// DLQURL is the path of a DLQ's page; the ID is one escaped segment.
func DLQURL(id string) string { return "/dlq/" + url.PathEscape(id) }

// VHostSuffix names a RabbitMQ vhost after its cluster; quoted, because
// the default vhost "/" would read as a path separator.
func VHostSuffix(vhost string) string {
	if vhost == "" {
		return ""
	}
	return ` / vhost "` + vhost + `"`
}

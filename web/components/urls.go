package components

import "net/url"

// GroupURL is the path of a group's page; every segment is escaped, so any
// group name makes a working, harmless link.
func GroupURL(cluster, group string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/groups/" + url.PathEscape(group)
}

func vhostSuffix(vhost string) string {
	if vhost == "" {
		return ""
	}
	return " / " + vhost
}

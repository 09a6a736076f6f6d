// Package web serves queuewatch's HTTP interface: the UI pages (templ
// components), the JSON API, /metrics and the health endpoints.
//
// Handlers are thin: they read from the Monitor interface declared here (the
// collectors satisfy it) and render a component or JSON. Nothing here talks
// to a broker, so a slow broker never slows a page.
package web

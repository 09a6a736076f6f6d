// Package components holds the templ components of queuewatch's UI and the
// small pure helpers they use (URLs, number and time formatting through
// queue's vocabulary). Components render view models that web builds; they
// never import collectors, brokers or replay backends, so every page can
// be rendered in a test without a broker.
package components

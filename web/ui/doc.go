// Package ui renders queuewatch's pages: the overview, one page per
// reader (Kafka group and share group, JetStream consumer, RabbitMQ and
// SQS queue, outbox source), the DLQ page and the replays page. Pages
// read only the last poll, through the principal's view (web/view), so
// a slow broker never slows them; only the DLQ page reaches a broker,
// through the DLQ service, one page of messages per load, every byte
// through templ's escaping (bodies cut at 16 KiB; the full body is a
// download).
//
// Pages are server-rendered and keep their list state (tab, sort, dir, q,
// page) in the URL. app.js refreshes the live parts every 5 s through
// htmx: it asks for the current URL with partial=1 and the server answers
// only the live blocks, each swapped out of band, so the filter box keeps
// its focus and the layout does not jump. Only one page of 200 rows is
// rendered, so a page costs the same with 200 or 20,000 groups. What the
// overview says about readers (queue.Reader) is written once, in
// readers.go and summary.go.
package ui

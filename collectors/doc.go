// Package collectors schedules polls of every configured source, keeps the
// latest snapshot and a bounded history per source, and exports them as
// Prometheus metrics.
//
// Polling never happens at scrape time: Collect builds constant metrics from
// the latest snapshots, so any number of scrapers put no load on brokers and
// a scrape costs the same whether a broker is healthy or timing out. Each
// source is polled on its own goroutine with its own deadline; a failing
// source backs off and reports itself down (queuewatch_collector_up 0) while
// its last good data stays visible and every other source carries on.
//
// Sources read facts and judge nothing: every reader's status (consumer
// and share groups, RabbitMQ and SQS queues, JetStream consumers, outbox
// tables and slots) is judged by Options.Evaluator (app passes an
// alerts.Evaluator) over each snapshot before it is published, from what
// it remembers of the polls before.
package collectors

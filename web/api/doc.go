// Package api is the JSON API under /api/v1: readers (groups, share
// groups, JetStream consumers, RabbitMQ and SQS queues, outbox tables and
// slots) and their histories, sources, dead letters and their replay,
// move, delete, restore and archive, the audit feed, and offset resets
// and pauses. openapi.json describes every path; a test checks the
// document against the handlers' real answers, and schemathesis fuzzes a
// live server against it in CI.
//
// Every action runs as a dry run first when asked (dry_run) and its
// receipt is what the UI confirms from. Offset resets plan and apply
// through package offsets' broker-neutral types: apply takes only a
// plan_id, so what is committed is what the operator reviewed; the reset
// service keeps each plan in the store every replica shares, so a plan
// made through one replica applies through any other. Errors are one
// shape (web's apiError): {"error": …, "detail": …}.
package api

// Package testenv holds the helpers for tests against the real parts of
// the test infrastructure .ci/run installs and starts: the RabbitMQ server on 127.0.0.1
// (AMQP on :5672, management API on :15672, guest/guest), a second,
// TLS-only RabbitMQ node that RabbitMQTLS starts from the same
// installation with certificates made by the test, and in-process Kafka
// clusters from franz-go's kfake; and PostgreSQL and MariaDB, which
// databases-setup.sh installs, starts and prepares (a queuewatch/queuewatch
// account; wal_level=logical), where Postgres and MariaDB create one
// database per test.
//
// Require is the one place the missing-service policy lives: when a
// service a test needs is unreachable, the test fails if CI=true and is
// skipped otherwise, so a laptop without a broker can still run the unit
// tests while CI can never pass by skipping.
//
// Only _test.go files import this package; it is not part of queuewatch.
package testenv

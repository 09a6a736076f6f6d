// Package config is queuewatch's one YAML schema: its types, defaults and
// validation. It is a leaf package; app turns a *Config into services.
//
// # Strict
//
// A key the schema does not know, a duplicate key, or a value of the wrong
// type is an error, never silently ignored: a typo such as "brokerz" would
// otherwise leave a setting at its default while the operator believes it is
// set. Unknown keys come with a "did you mean" hint.
//
// # Environment expansion
//
// Secrets stay out of the file: "${VAR}" is replaced by the environment
// variable VAR and "${VAR:-default}" falls back to default when VAR is unset or
// empty. An unset variable without a default is an error naming the variable
// and its line. "$$" is a literal "$"; any other "$" (as in bcrypt hashes or a
// regex ending in "$") is kept as written.
//
// Expansion happens inside each scalar value after the YAML is parsed, not over
// the raw text. The result is the same for every ordinary use, but a secret
// containing '#', ':', quotes or a newline cannot change the structure of the
// document, line numbers stay exact, and a "${VAR}" inside a comment is left
// alone. A plain (unquoted) value that came from the environment is typed
// after expansion, so "max_replays: ${MAX}" is an integer. Inside a flow
// collection ({...} or [...]) the braces of ${VAR} would end a plain value, so
// quote it there: {password: "${PASSWORD}"}.
//
// # Errors
//
// Every mistake is one line naming the file, the line and the key path:
//
//	queuewatch.yaml:12: kafka[0].brokers: at least one broker is required
//
// Several mistakes are joined with errors.Join, one per line, sorted by line.
// Each is an *Error, so callers can use errors.As. Parse reports every
// mistake of one run: those decoding finds (unknown keys, wrong types, unset
// variables) and those validation finds, together. What validation would say
// of a key that did not decode, or of the key an unknown key was meant to be
// (left at its default: "at least one broker is required" under "brokerz"),
// is left out, as it repeats the decoding's mistake. Only invalid YAML stops
// at its first error: the parser cannot go on past it. Validate on a Config
// built in code reports the same messages without file and line. Messages never include secret values (passwords,
// hashes, URLs with credentials).
//
// # Defaults and patterns
//
// A key that is absent or null keeps its default (see Default); an explicit
// value, even zero, is validated as written. The exceptions, documented on
// their fields, are poll_timeout and the per-cluster client_id and isolation,
// whose zero value means "use the default". Validate fills those in, resolves
// nothing else, and compiles every regular expression so Filter.Match,
// Kafka.IsDLQTopic, RabbitMQ.IsDLQQueue, DLQ.IsDLQName and Alerts.For are
// cheap afterwards.
//
// Filter, dlq_topics, dlq_queues and alert override patterns are anchored
// (wrapped as ^(?:...)$), like Prometheus label matchers, so a plain name
// matches only itself. dlq.name_pattern is the exception: it is unanchored
// because it looks for a suffix or a word anywhere in the name.
//
// dlq_queues entries are names, not patterns, unless prefixed "re:": queue
// names are often dotted ("payments.failed"), a named queue must exist, and
// without a management API only named queues can be measured. Entries with
// regex syntax other than '.' but no prefix are read as regexes as they were
// before the prefix existed (see RabbitMQ.LegacyDLQPatterns).
//
// Relative TLS file paths are resolved against the directory of the config
// file, as Prometheus and Alertmanager do, so a config works from any working
// directory.
package config

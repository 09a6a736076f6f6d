// Package kafka is the one way queuewatch reaches a Kafka cluster.
//
// app builds one Cluster per configured cluster, from its config.Kafka
// section and the dlq section, and hands the same value to that cluster's
// collector and to its replay backend. Everything the two must agree on is
// decided here, once:
//
//   - how to connect: seed brokers, client id, TLS (CA, client certificate,
//     server name) and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), as the
//     franz-go options every client of the cluster starts from (Opts,
//     NewClient). A setting added to the config therefore reaches browse and
//     replay as surely as it reaches the poll;
//   - the replay cursor: the consumer group whose commits mark how far each
//     dead-letter topic was replayed (CursorGroup). The collector measures
//     DLQ depth against it and the backend advances it, so they must name
//     the same group and read its commits the same way (CursorPosition:
//     the commit, or the log start when there is none or retention passed
//     it);
//   - the Kafka Connect clusters that work on the cluster (Connects): their
//     REST API's address, TLS and credentials, and how their one listing
//     (GET /connectors?expand=status&expand=info) reads as queue.Connector
//     values: a sink's consumer group and dead-letter topic from its config;
//   - which topics are dead-letter topics (DLQTopic), and where a dead
//     letter came from: the original-topic header that Spring Kafka, Kafka
//     Connect and SmallRye write (OriginalTopic), else the DLQ's name
//     without its suffix (StripDLQSuffix: orders.DLT → orders).
//
// A Cluster holds no connection: each user creates the clients it needs
// (the collector one long-lived client with its own timeouts and request
// counters, the backend an admin client plus a consumer or a transactional
// producer per job), so one user's settings never change another's
// requests. Building a Cluster does no I/O; a wrong password or certificate
// shows on the first request, as the error the broker answered.
package kafka

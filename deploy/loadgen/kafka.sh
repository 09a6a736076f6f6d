#!/bin/sh
# Load generator for the compose stack's Kafka, run in the apache/kafka image
# (docker-compose.yml, service loadgen-kafka). It makes every kind of group
# queuewatch reports and a filling dead-letter topic:
#   - orders-processor keeps up with orders (status ok);
#   - billing-stopped read part of a payments backlog and left (status stop,
#     lag over lag_high: QueuewatchKafkaConsumerGroupStopped, QueuewatchKafkaConsumerLagHigh);
#   - orders.DLT gets dead letters with Spring Kafka's DLT headers
#     (QueuewatchDLQNotEmpty, QueuewatchDLQGrowing).
set -eu

bootstrap=kafka:9092
bin=/opt/kafka/bin

for spec in orders:3 payments:3 orders.DLT:1; do
	"$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --create --if-not-exists \
		--topic "${spec%%:*}" --partitions "${spec##*:}" --replication-factor 1
done

produce() { # topic records-per-second
	"$bin/kafka-producer-perf-test.sh" --topic "$1" --num-records 100000000 --throughput "$2" \
		--record-size 200 --producer-props bootstrap.servers="$bootstrap" acks=all >/dev/null
}

# A backlog on payments, then billing-stopped reads 2000 records, commits and
# leaves for good.
"$bin/kafka-producer-perf-test.sh" --topic payments --num-records 15000 --throughput -1 \
	--record-size 200 --producer-props bootstrap.servers="$bootstrap" acks=all >/dev/null
"$bin/kafka-console-consumer.sh" --bootstrap-server "$bootstrap" --topic payments \
	--group billing-stopped --from-beginning --max-messages 2000 >/dev/null

produce orders 20 &
produce payments 5 &
"$bin/kafka-console-consumer.sh" --bootstrap-server "$bootstrap" --topic orders \
	--group orders-processor >/dev/null &

# Dead letters: 20 at once, then one every 30 seconds, each with the headers
# Spring's DeadLetterPublishingRecoverer writes and, as the value, the
# truncated JSON the consumer failed to parse.
dead_letter() { # sequence number
	printf 'kafka_dlt-original-topic:orders,kafka_dlt-exception-fqcn:com.fasterxml.jackson.core.JsonParseException,kafka_dlt-exception-message:Unexpected character at offset %s\t{"order":%s,' "$1" "$1"
}
{
	n=0
	while [ "$n" -lt 20 ]; do n=$((n + 1)); dead_letter "$n"; echo; done
} | "$bin/kafka-console-producer.sh" --bootstrap-server "$bootstrap" --topic orders.DLT \
	--property parse.headers=true >/dev/null
(
	n=20
	while true; do
		sleep 30
		n=$((n + 1))
		dead_letter "$n" | "$bin/kafka-console-producer.sh" --bootstrap-server "$bootstrap" \
			--topic orders.DLT --property parse.headers=true >/dev/null
	done
) &

wait

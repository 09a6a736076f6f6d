#!/bin/sh
# Load generator for the compose stack's RabbitMQ, run in the
# rabbitmq:3.13-management image (docker-compose.yml, service
# loadgen-rabbitmq) with its rabbitmqadmin. The queues and the dead-letter
# topology come from deploy/rabbitmq/definitions.json:
#   - orders: a "consumer" here processes four of every five orders and
#     rejects the fifth without requeue, so RabbitMQ dead-letters it to
#     orders.dlq (QueuewatchDLQNotEmpty, QueuewatchDLQGrowing); orders left
#     unprocessed for 60s expire into orders.dlq too;
#   - payments: published to but never consumed (QueuewatchRabbitMQQueueNoConsumers).
set -eu

admin() {
	rabbitmqadmin --host=rabbitmq --port=15672 --username=queuewatch --password=queuewatch "$@" >/dev/null
}

i=0
while true; do
	i=$((i + 1))
	admin publish exchange=shop routing_key=orders properties='{"content_type":"application/json"}' payload="{\"order\":$i}"
	admin publish exchange=shop routing_key=payments properties='{"content_type":"application/json"}' payload="{\"payment\":$i}"
	if [ $((i % 5)) -eq 0 ]; then
		admin get queue=orders ackmode=ack_requeue_false count=4
		admin get queue=orders ackmode=reject_requeue_false count=1
	fi
	sleep 2
done

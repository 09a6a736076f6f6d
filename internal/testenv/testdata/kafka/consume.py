"""Reads max records of a topic from the start in a consumer group with
librdkafka (confluent-kafka), commits exactly what it read, and leaves.

usage: consume.py BOOTSTRAP TOPIC GROUP PROTOCOL MAX
PROTOCOL is the group protocol: classic or consumer (KIP-848).
"""

import sys

from confluent_kafka import Consumer, KafkaException


def main():
    bootstrap, topic, group, protocol, limit = sys.argv[1:6]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": protocol,
        "client.id": "librdkafka-" + protocol,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    read = 0
    while read < int(limit):
        msg = consumer.poll(30)
        if msg is None:
            sys.exit("no record within 30s after %d of %s" % (read, limit))
        if msg.error():
            raise KafkaException(msg.error())
        read += 1
    consumer.commit(asynchronous=False)
    consumer.close()


if __name__ == "__main__":
    main()

"""A payments service that fails every record it reads and dead-letters it
the way Spring Kafka's DeadLetterPublishingRecoverer does: the same key and
value bytes to <topic>.DLT, the original headers, and kafka_dlt-* headers
(partition and offset as big-endian binary, as Spring writes them).

usage: deadletter.py BOOTSTRAP COUNT TOPIC...

Reads with confluent-kafka (librdkafka) and no deserializer, so the bytes
it forwards are the bytes the schema-registry serializers wrote. Prints
how many records it dead-lettered.
"""

import struct
import sys
import time

from confluent_kafka import Consumer, Producer


def main():
    bootstrap, count, topics = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "payments-service",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    consumer.subscribe(topics)
    done, deadline = 0, time.time() + 90
    while done < count and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            sys.exit("consume: %s" % msg.error())
        headers = list(msg.headers() or []) + [
            ("kafka_dlt-original-topic", msg.topic().encode()),
            ("kafka_dlt-original-partition", struct.pack(">i", msg.partition())),
            ("kafka_dlt-original-offset", struct.pack(">q", msg.offset())),
            ("kafka_dlt-original-consumer-group", b"payments-service"),
            ("kafka_dlt-exception-fqcn", b"com.acme.payments.CardDeclinedException"),
            ("kafka_dlt-exception-message", b"card declined by the issuer"),
        ]
        producer.produce(msg.topic() + ".DLT", key=msg.key(), value=msg.value(), headers=headers)
        done += 1
    if producer.flush(30) != 0:
        sys.exit("dead letters still unsent after 30s")
    consumer.commit(asynchronous=False)
    consumer.close()
    print(done)


if __name__ == "__main__":
    main()

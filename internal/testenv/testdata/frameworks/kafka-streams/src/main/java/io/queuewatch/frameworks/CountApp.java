package io.queuewatch.frameworks;

import java.io.IOException;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Produced;

/**
 * CountApp is a Kafka Streams application counting the values of a topic:
 * input → group by value (a repartition topic, so two subtopologies) →
 * count (a state store and its changelog) → output. It commits every 200
 * ms, so a test sees its committed offsets follow soon after the records.
 *
 * <p>Usage: CountApp BOOTSTRAP APPLICATION-ID INPUT OUTPUT STATE-DIR
 * [streams|classic]. The protocol defaults to streams (KIP-1071). It
 * prints RUNNING once the application runs and stays until its standard
 * input closes; then it closes (leaving the group) and exits. A record
 * whose value is "poison" blocks its stream thread until the input closes:
 * the group keeps its member, but its committed offsets stop.
 */
public final class CountApp {
  private static final CountDownLatch closing = new CountDownLatch(1);

  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length < 5) {
      System.err.println("usage: CountApp BOOTSTRAP APPLICATION-ID INPUT OUTPUT STATE-DIR [streams|classic]");
      System.exit(2);
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("application.id", args[1]);
    p.put("state.dir", args[4]);
    p.put("group.protocol", args.length > 5 ? args[5] : "streams");
    p.put("commit.interval.ms", "200");
    p.put("client.id", "queuewatch-count-app");
    p.put("default.key.serde", Serdes.StringSerde.class.getName());
    p.put("default.value.serde", Serdes.StringSerde.class.getName());
    p.put("consumer.auto.offset.reset", "earliest");

    StreamsBuilder b = new StreamsBuilder();
    b.<String, String>stream(args[2])
        .peek((k, v) -> {
          if ("poison".equals(v)) {
            block();
          }
        })
        .groupBy((k, v) -> v, Grouped.as("by-value"))
        .count()
        .toStream()
        .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

    CountDownLatch running = new CountDownLatch(1);
    try (KafkaStreams app = new KafkaStreams(b.build(), p)) {
      app.setStateListener((now, before) -> {
        if (now == KafkaStreams.State.RUNNING) {
          running.countDown();
        }
      });
      app.start();
      running.await();
      System.out.println("RUNNING");
      System.out.flush();
      while (System.in.read() >= 0) {
        // Run until the test closes standard input.
      }
      closing.countDown();
    }
  }

  /** block holds the stream thread until the program is closing. */
  private static void block() {
    try {
      closing.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.queuewatch.frameworks;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * ShareAcks is one member of a share group, reading partition 0 of a topic
 * with the Java client's KafkaShareConsumer in explicit acknowledgement
 * mode and acknowledging each record as its plan says. The plan has one
 * letter per offset, from 0:
 *
 * <pre>
 *   a  accept
 *   r  release once (a redelivery is released again: the plan is about the first)
 *   x  reject (archived at once)
 *   R  release on every delivery, until the delivery limit archives it
 *   h  hold: acquire and never acknowledge while the program runs (in flight)
 * </pre>
 *
 * Usage: ShareAcks BOOTSTRAP TOPIC GROUP PLAN [DELIVERY-LIMIT]. Once every
 * offset was seen (each R at the delivery limit), it commits the
 * acknowledgements, prints DONE and stays a member until its standard
 * input closes, so the test can look at the group with the member in it.
 * Held records must arrive in the last batch it needs: explicit mode
 * refuses a poll while a record is unacknowledged.
 */
public final class ShareAcks {
  public static void main(String[] args) throws IOException {
    if (args.length < 4) {
      System.err.println("usage: ShareAcks BOOTSTRAP TOPIC GROUP PLAN [DELIVERY-LIMIT]");
      System.exit(2);
    }
    String plan = args[3];
    int limit = args.length > 4 ? Integer.parseInt(args[4]) : 5;
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("group.id", args[2]);
    p.put("share.acknowledgement.mode", "explicit");
    p.put("client.id", "queuewatch-share-acks");
    try (KafkaShareConsumer<byte[], byte[]> c =
        new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      c.subscribe(Set.of(args[1]));
      run(c, plan, limit);
      c.commitSync(Duration.ofSeconds(30)).forEach((tp, err) -> err.ifPresent(e -> {
        throw new IllegalStateException("commit " + tp + ": " + e, e);
      }));
      System.out.println("DONE");
      System.out.flush();
      while (System.in.read() >= 0) {
        // Stay a member until the test closes standard input.
      }
    }
  }

  /** run polls until every offset of the plan has had its final delivery. */
  private static void run(KafkaShareConsumer<byte[], byte[]> c, String plan, int limit) {
    Map<Long, Boolean> done = new HashMap<>();
    boolean holding = false;
    Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
    while (done.size() < plan.length() || done.containsValue(false)) {
      if (holding) {
        throw new IllegalStateException("a held record was not in the last batch needed");
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("gave up: final deliveries seen " + done);
      }
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
        int n = r.deliveryCount().map(Short::intValue).orElse(1);
        char step = r.offset() < plan.length() ? plan.charAt((int) r.offset()) : 'a';
        AcknowledgeType ack = switch (step) {
          case 'a' -> AcknowledgeType.ACCEPT;
          case 'r', 'R' -> AcknowledgeType.RELEASE;
          case 'x' -> AcknowledgeType.REJECT;
          case 'h' -> null;
          default -> throw new IllegalArgumentException("plan letter " + step);
        };
        if (ack != null) {
          c.acknowledge(r, ack);
        } else {
          holding = true;
        }
        done.merge(r.offset(), step != 'R' || n >= limit, Boolean::logicalOr);
        System.out.printf("record offset=%d delivery=%d ack=%s%n", r.offset(), n, ack == null ? "HOLD" : ack);
      }
    }
  }
}

package io.queuewatch.frameworks;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConsumerAwareRecordRecoverer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.KafkaMessageListenerContainer;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.util.backoff.FixedBackOff;

/**
 * A Spring Kafka listener of the kind services run: it reads a topic in a
 * consumer group, and a record whose value is not a number fails; after one
 * retry DefaultErrorHandler hands it to DeadLetterPublishingRecoverer,
 * which publishes it with its failure headers to {@code <topic>-dlt} on the
 * same partition. The program exits once it has seen {@code expected}
 * records, processed or dead-lettered.
 *
 * <p>Arguments: bootstrap servers, topic, group, expected record count.
 */
public final class SpringKafkaDlt {
	private SpringKafkaDlt() {
	}

	public static void main(String[] args) throws Exception {
		String bootstrap = args[0];
		String topic = args[1];
		String group = args[2];
		CountDownLatch done = new CountDownLatch(Integer.parseInt(args[3]));

		Map<String, Object> producer = Map.of(
				ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
				ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
				ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		KafkaTemplate<String, String> template = new KafkaTemplate<>(new DefaultKafkaProducerFactory<>(producer));
		DeadLetterPublishingRecoverer dlt = new DeadLetterPublishingRecoverer(template);
		ConsumerAwareRecordRecoverer counted = (record, consumer, exception) -> {
			dlt.accept(record, consumer, exception);
			done.countDown();
		};

		Map<String, Object> consumer = Map.of(
				ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
				ConsumerConfig.GROUP_ID_CONFIG, group,
				ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
				ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		ContainerProperties props = new ContainerProperties(topic);
		props.setMessageListener((MessageListener<String, String>) record -> {
			process(record);
			done.countDown();
		});
		KafkaMessageListenerContainer<String, String> container =
				new KafkaMessageListenerContainer<>(new DefaultKafkaConsumerFactory<>(consumer), props);
		container.setCommonErrorHandler(new DefaultErrorHandler(counted, new FixedBackOff(0, 1)));
		container.start();
		boolean finished = done.await(120, TimeUnit.SECONDS);
		container.stop();
		template.destroy();
		if (!finished) {
			System.err.println("timed out with " + done.getCount() + " records not seen");
			System.exit(1);
		}
	}

	/** Fails, with the parse error as its cause, for a value that is not a number. */
	private static void process(ConsumerRecord<String, String> record) {
		try {
			Long.parseLong(record.value());
		}
		catch (NumberFormatException e) {
			throw new IllegalStateException("order " + record.key() + " has no valid amount", e);
		}
	}
}

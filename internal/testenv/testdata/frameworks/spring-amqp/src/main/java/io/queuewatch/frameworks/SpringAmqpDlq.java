package io.queuewatch.frameworks;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.amqp.rabbit.retry.RepublishMessageRecoverer;

/**
 * A Spring AMQP listener of the kind services run: it consumes a queue, and
 * a message whose body is not a number fails; the stateless retry advice
 * retries it once and then hands it to RepublishMessageRecoverer, which
 * republishes it with its failure headers through the default exchange to
 * the dead letter queue. The program exits once it has seen
 * {@code expected} messages, processed or republished.
 *
 * <p>Arguments: host, port, vhost, user, password, queue, dead letter
 * queue, expected message count.
 */
public final class SpringAmqpDlq {
	private SpringAmqpDlq() {
	}

	public static void main(String[] args) throws Exception {
		CachingConnectionFactory cf = new CachingConnectionFactory(args[0], Integer.parseInt(args[1]));
		cf.setVirtualHost(args[2]);
		cf.setUsername(args[3]);
		cf.setPassword(args[4]);
		String queue = args[5];
		String dlq = args[6];
		CountDownLatch done = new CountDownLatch(Integer.parseInt(args[7]));

		// Spring AMQP 4.1 writes x-exception-stacktrace only when asked to.
		RepublishMessageRecoverer republish = new RepublishMessageRecoverer(new RabbitTemplate(cf), "", dlq)
				.includeStackTrace(true);
		MessageRecoverer counted = (message, cause) -> {
			republish.recover(message, cause);
			done.countDown();
		};
		SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(cf);
		container.setQueueNames(queue);
		container.setAdviceChain(RetryInterceptorBuilder.stateless()
				.maxRetries(1)
				.backOffOptions(10, 1.0, 10)
				.recoverer(counted)
				.build());
		container.setMessageListener((MessageListener) message -> {
			String body = new String(message.getBody(), StandardCharsets.UTF_8);
			try {
				Long.parseLong(body);
			}
			catch (NumberFormatException e) {
				throw new IllegalStateException("order " + message.getMessageProperties().getMessageId()
						+ " has no valid amount", e);
			}
			done.countDown();
		});
		container.afterPropertiesSet();
		container.start();
		boolean finished = done.await(120, TimeUnit.SECONDS);
		container.stop();
		cf.destroy();
		if (!finished) {
			System.err.println("timed out with " + done.getCount() + " messages not seen");
			System.exit(1);
		}
	}
}

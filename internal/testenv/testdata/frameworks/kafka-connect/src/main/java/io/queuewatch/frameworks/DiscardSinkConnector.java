package io.queuewatch.frameworks;

import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A sink connector that accepts every record the worker converted and
 * discards it. The dead letters the tests look for are made by the
 * worker's error handling before a record reaches a sink, so the sink only
 * has to exist.
 */
public final class DiscardSinkConnector extends SinkConnector {
	private static final String VERSION = "1";

	@Override
	public String version() {
		return VERSION;
	}

	@Override
	public void start(Map<String, String> props) {
	}

	@Override
	public Class<? extends Task> taskClass() {
		return DiscardTask.class;
	}

	@Override
	public List<Map<String, String>> taskConfigs(int maxTasks) {
		return List.of(Map.of());
	}

	@Override
	public void stop() {
	}

	@Override
	public ConfigDef config() {
		return new ConfigDef();
	}

	/** The connector's task: it takes records and keeps none. */
	public static final class DiscardTask extends SinkTask {
		@Override
		public String version() {
			return VERSION;
		}

		@Override
		public void start(Map<String, String> props) {
		}

		@Override
		public void put(Collection<SinkRecord> records) {
		}

		@Override
		public void stop() {
		}
	}
}

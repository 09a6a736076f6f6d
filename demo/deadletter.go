package demo

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// failure is why a simulated consumer could not process a record, described
// the way the JVM frameworks the demo imitates report it.
type failure struct {
	class   string // fully qualified exception class
	message string
	stack   string
}

// checkOrder is orders-processor's business logic: an order must parse and
// have a positive total.
func checkOrder(value []byte) *failure {
	var o order
	if err := json.Unmarshal(value, &o); err != nil {
		return jacksonFailure(err)
	}
	if o.Total <= 0 {
		msg := fmt.Sprintf("Order %d has non-positive total %.2f", o.Order, o.Total)
		return &failure{
			class:   "java.lang.IllegalStateException",
			message: msg,
			stack: springStack("java.lang.IllegalStateException: "+msg,
				"at com.example.orders.OrderValidator.validate(OrderValidator.java:42)"),
		}
	}
	return nil
}

func jacksonFailure(err error) *failure {
	msg := "Unexpected character: " + err.Error()
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input" {
		msg = "Unexpected end-of-input: expected close marker for Object (start marker at [Source: (byte[]); line: 1, column: 1])"
	}
	return &failure{
		class:   "com.fasterxml.jackson.core.JsonParseException",
		message: msg,
		stack: springStack("com.fasterxml.jackson.core.JsonParseException: "+msg,
			"at com.fasterxml.jackson.core.JsonParser._constructError(JsonParser.java:2477)",
			"at com.fasterxml.jackson.databind.ObjectMapper.readValue(ObjectMapper.java:3690)"),
	}
}

// springStack renders a short stack trace shaped like the one Spring Kafka's
// listener container produces: the container's wrapper, then the cause.
func springStack(cause string, causeFrames ...string) string {
	s := "org.springframework.kafka.listener.ListenerExecutionFailedException: Listener failed\n" +
		"\tat org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.decorateException(KafkaMessageListenerContainer.java:2996)\n" +
		"\tat org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.doInvokeOnMessage(KafkaMessageListenerContainer.java:2943)\n" +
		"Caused by: " + cause + "\n"
	for _, f := range causeFrames {
		s += "\t" + f + "\n"
	}
	return s + "\tat com.example.orders.OrderListener.onOrder(OrderListener.java:27)\n\t... 14 more"
}

// springWrapper is the exception Spring Kafka's listener container wraps
// whatever a listener throws in.
const springWrapper = "org.springframework.kafka.listener.ListenerExecutionFailedException"

// springDeadLetter builds the record Spring Kafka's DeadLetterPublishingRecoverer
// would publish for orig: same key and value, kafka_dlt-* headers with the
// binary encodings Spring uses (partition as a big-endian int32, offset and
// timestamp as big-endian int64 milliseconds).
func springDeadLetter(orig *kgo.Record, group string, f *failure, at time.Time) *kgo.Record {
	partition := binary.BigEndian.AppendUint32(nil, uint32(orig.Partition))
	offset := binary.BigEndian.AppendUint64(nil, uint64(orig.Offset))
	ts := binary.BigEndian.AppendUint64(nil, uint64(orig.Timestamp.UnixMilli()))
	headers := append([]kgo.RecordHeader(nil), orig.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: "kafka_dlt-original-topic", Value: []byte(orig.Topic)},
		kgo.RecordHeader{Key: "kafka_dlt-original-partition", Value: partition},
		kgo.RecordHeader{Key: "kafka_dlt-original-offset", Value: offset},
		kgo.RecordHeader{Key: "kafka_dlt-original-timestamp", Value: ts},
		kgo.RecordHeader{Key: "kafka_dlt-original-timestamp-type", Value: []byte("CreateTime")},
		kgo.RecordHeader{Key: "kafka_dlt-original-consumer-group", Value: []byte(group)},
		// As Spring Kafka 4.1 writes them (queue/testdata/deadletters):
		// the container's wrapper, the listener's exception as its cause.
		kgo.RecordHeader{Key: "kafka_dlt-exception-fqcn", Value: []byte(springWrapper)},
		kgo.RecordHeader{Key: "kafka_dlt-exception-cause-fqcn", Value: []byte(f.class)},
		kgo.RecordHeader{Key: "kafka_dlt-exception-message", Value: []byte("Listener failed; " + f.message)},
		kgo.RecordHeader{Key: "kafka_dlt-exception-stacktrace", Value: []byte(f.stack)},
	)
	return &kgo.Record{
		Topic:     TopicOrdersDLT,
		Key:       orig.Key,
		Value:     orig.Value,
		Headers:   headers,
		Timestamp: at,
	}
}

// checkPayment is payments-sink's value converter: a payment must be a JSON
// object.
func checkPayment(value []byte) *failure {
	var p payment
	err := json.Unmarshal(value, &p)
	if err == nil {
		return nil
	}
	msg := "Converting byte[] to Kafka Connect data failed due to serialization error of topic payments: "
	stack := "org.apache.kafka.connect.errors.DataException: " + msg + "\n" +
		"\tat org.apache.kafka.connect.json.JsonConverter.toConnectData(JsonConverter.java:333)\n" +
		"\tat org.apache.kafka.connect.storage.Converter.toConnectData(Converter.java:91)\n" +
		"\tat org.apache.kafka.connect.runtime.WorkerSinkTask.lambda$convertAndTransformRecord$4(WorkerSinkTask.java:536)\n" +
		"\tat org.apache.kafka.connect.runtime.errors.RetryWithToleranceOperator.execAndRetry(RetryWithToleranceOperator.java:180)\n" +
		"Caused by: org.apache.kafka.common.errors.SerializationException: com.fasterxml.jackson.core.JsonParseException: " +
		"Unrecognized token: " + err.Error() + "\n" +
		"\tat org.apache.kafka.connect.json.JsonDeserializer.deserialize(JsonDeserializer.java:66)\n" +
		"\t... 17 more"
	return &failure{class: "org.apache.kafka.connect.errors.DataException", message: msg, stack: stack}
}

// connectDeadLetter builds the record a Kafka Connect sink task with
// errors.deadletterqueue.context.headers.enable=true would write for orig:
// same key and value, __connect.errors.* headers whose numbers are decimal
// strings. As in Connect, class.name is the class that was executing (the
// converter) and exception.class.name the exception thrown.
func connectDeadLetter(orig *kgo.Record, f *failure, at time.Time) *kgo.Record {
	headers := append([]kgo.RecordHeader(nil), orig.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: "__connect.errors.topic", Value: []byte(orig.Topic)},
		kgo.RecordHeader{Key: "__connect.errors.partition", Value: []byte(strconv.Itoa(int(orig.Partition)))},
		kgo.RecordHeader{Key: "__connect.errors.offset", Value: []byte(strconv.FormatInt(orig.Offset, 10))},
		kgo.RecordHeader{Key: "__connect.errors.connector.name", Value: []byte(PaymentsConnectorName)},
		kgo.RecordHeader{Key: "__connect.errors.task.id", Value: []byte("0")},
		kgo.RecordHeader{Key: "__connect.errors.stage", Value: []byte("VALUE_CONVERTER")},
		kgo.RecordHeader{Key: "__connect.errors.class.name", Value: []byte("org.apache.kafka.connect.json.JsonConverter")},
		kgo.RecordHeader{Key: "__connect.errors.exception.class.name", Value: []byte(f.class)},
		kgo.RecordHeader{Key: "__connect.errors.exception.message", Value: []byte(f.message)},
		kgo.RecordHeader{Key: "__connect.errors.exception.stacktrace", Value: []byte(f.stack)},
	)
	return &kgo.Record{
		Topic:     TopicPaymentsDLQ,
		Key:       orig.Key,
		Value:     orig.Value,
		Headers:   headers,
		Timestamp: at,
	}
}

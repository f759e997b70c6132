// Reads one topic from the earliest offset to the end offsets it had at the start with
// Kafka's own Java consumer, and discards the records. One of the clients of benches/e2e.
//
//   java -cp <classes>:<kafka lib>/* E2eConsumer <bootstrap> <topic>
//
// assign (no group), seekToBeginning, endOffsets, poll until every partition's position has
// reached its end offset. Consumer defaults otherwise: check.crcs=true, fetch.max.bytes 50 MiB,
// max.partition.fetch.bytes 1 MiB, max.poll.records 500 (not ConsumerPerformance, which turns
// the CRC check off). Prints one line: records, key+value bytes, wall seconds.

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class E2eConsumer {
    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: E2eConsumer <bootstrap> <topic>");
            System.exit(2);
        }
        long started = System.nanoTime();
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        long records = 0;
        long bytes = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(args[1], Duration.ofSeconds(30))) {
                partitions.add(new TopicPartition(p.topic(), p.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = new HashMap<>(consumer.endOffsets(partitions));
            ends.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            while (!ends.isEmpty()) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
                    records++;
                    bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                }
                ends.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            }
        }
        System.out.printf("records %d bytes %d seconds %.3f%n", records, bytes, (System.nanoTime() - started) / 1e9);
    }
}

// Capture driver for golden traffic: drives Kafka's own Java client (kafka-clients) through the
// recording proxy so that the proxy sees ApiVersions, Metadata, ListOffsets, Fetch,
// OffsetCommit, OffsetFetch, FindCoordinator and DescribeConfigs exchanges of a real client with
// a real broker.
//
// Run with the source launcher:
//   java -cp <kafka-clients classpath> Capture.java <bootstrap> <kafka-clients version> [<broker version>]
// where <bootstrap> is the proxy's host:port. Every phase uses its own client.id, so the frame
// selector (pick_frames.py) can tell the phases apart from the request headers.
//
// The data is fixed so that tests can assert decoded values: topic golden-<codec> (one
// partition) holds one batch of three records, written with that codec:
//   offset 0: key "key-0", value "value-<codec>-0", header trace="t0",     timestamp T0
//   offset 1: key null,    value "value-<codec>-1", no headers,            timestamp T0+1000
//   offset 2: key "key-2", value "value-<codec>-2", headers a="1", b=null, timestamp T0+2000
// with T0 = 1700000000000. Group golden-group (classic protocol) and, where the client and
// broker support KIP-848, group golden-group-848 (consumer protocol) commit offset 2 with
// metadata "golden-meta" on golden-none partition 0. Last, Admin describes the configuration
// of golden-none (retention.ms=-1 set on the topic) and of golden-missing (no such topic).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Capture {
    static final long T0 = 1700000000000L;
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    static final String GROUP = "golden-group";
    static final String GROUP_848 = "golden-group-848";
    static String bootstrap;
    static String clientVersion;
    static String brokerVersion;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        clientVersion = args[1];
        brokerVersion = args.length > 2 ? args[2] : "";
        createTopics();
        for (String codec : CODECS) {
            produce(codec);
        }
        listOffsets();
        for (String codec : CODECS) {
            fetch(codec);
        }
        fetchEmpty();
        group();
        group848();
        describeConfigs();
        System.out.println("CAPTURE_DONE");
    }

    static Properties props(String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        return p;
    }

    static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("capture check failed: " + what);
        }
    }

    static void createTopics() throws Exception {
        try (Admin admin = Admin.create(props("golden-admin"))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String codec : CODECS) {
                // The records carry timestamps of 2023: without retention.ms=-1 the broker's
                // retention check would delete them minutes after they are written.
                topics.add(new NewTopic("golden-" + codec, 1, (short) 1)
                        .configs(Collections.singletonMap("retention.ms", "-1")));
            }
            admin.createTopics(topics).all().get();
            // Metadata for all topics (null topic list) and for named topics.
            admin.listTopics().names().get();
            List<String> names = new ArrayList<>();
            for (String codec : CODECS) {
                names.add("golden-" + codec);
            }
            admin.describeTopics(names).allTopicNames().get();
        }
    }

    static void produce(String codec) throws Exception {
        Properties p = props("golden-produce-" + codec);
        p.put("compression.type", codec);
        p.put("linger.ms", "60000");
        p.put("batch.size", "1048576");
        p.put("acks", "all");
        p.put("enable.idempotence", "false");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        String topic = "golden-" + codec;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            RecordHeaders h0 = new RecordHeaders();
            h0.add("trace", utf8("t0"));
            RecordHeaders h2 = new RecordHeaders();
            h2.add("a", utf8("1"));
            h2.add("b", null);
            producer.send(new ProducerRecord<>(topic, 0, T0, utf8("key-0"), utf8("value-" + codec + "-0"), h0));
            producer.send(new ProducerRecord<>(topic, 0, T0 + 1000, null, utf8("value-" + codec + "-1"), new RecordHeaders()));
            producer.send(new ProducerRecord<>(topic, 0, T0 + 2000, utf8("key-2"), utf8("value-" + codec + "-2"), h2));
            producer.flush();
        }
    }

    static void listOffsets() throws Exception {
        TopicPartition tp = new TopicPartition("golden-none", 0);
        try (Admin admin = Admin.create(props("golden-listoffsets"))) {
            long earliest = offset(admin, tp, OffsetSpec.earliest());
            long latest = offset(admin, tp, OffsetSpec.latest());
            long byTime = offset(admin, tp, OffsetSpec.forTimestamp(T0 + 500));
            // The max-timestamp lookup needs ListOffsets v7 (Kafka 3.0+).
            boolean hasMax = !brokerVersion.startsWith("2.");
            long max = hasMax ? offset(admin, tp, OffsetSpec.maxTimestamp()) : -1;
            System.out.println("LIST_OFFSETS earliest=" + earliest + " latest=" + latest
                    + " byTime=" + byTime + " max=" + (hasMax ? String.valueOf(max) : "n/a"));
            check(earliest == 0 && latest == 3 && byTime == 1 && (max == 2 || !hasMax), "list offsets");
        }
    }

    static long offset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        ListOffsetsResult.ListOffsetsResultInfo info =
                admin.listOffsets(Collections.singletonMap(tp, spec)).partitionResult(tp).get();
        return info.offset();
    }

    static Properties consumerProps(String clientId) {
        Properties p = props(clientId);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("fetch.max.wait.ms", "200");
        return p;
    }

    static void fetch(String codec) {
        TopicPartition tp = new TopicPartition("golden-" + codec, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps("golden-fetch-" + codec))) {
            consumer.assign(Collections.singleton(tp));
            consumer.seek(tp, 0);
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 30000;
            while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    got.add(r);
                }
            }
            check(got.size() == 3, "fetched 3 records of " + codec);
            for (int i = 0; i < 3; i++) {
                ConsumerRecord<byte[], byte[]> r = got.get(i);
                check(r.offset() == i && r.timestamp() == T0 + 1000L * i, "offset/timestamp " + codec);
                check(new String(r.value(), StandardCharsets.UTF_8).equals("value-" + codec + "-" + i), "value " + codec);
            }
        }
    }

    static void fetchEmpty() {
        TopicPartition tp = new TopicPartition("golden-none", 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps("golden-fetch-empty"))) {
            consumer.assign(Collections.singleton(tp));
            consumer.seek(tp, 3);
            check(consumer.poll(Duration.ofMillis(1000)).isEmpty(), "empty fetch");
        }
    }

    static void group() throws Exception {
        commitAndFetch("golden-group", GROUP, "classic");
    }

    // The same with the consumer group protocol of KIP-848 (group.protocol=consumer), whose
    // consumer commits and fetches offsets by topic id (OffsetCommit and OffsetFetch v10).
    // Needs a 4.x client and a broker with group.version >= 1 (Kafka 4.0+); skipped otherwise.
    static void group848() throws Exception {
        if (!clientVersion.startsWith("4.")) {
            System.out.println("GROUP_848 skipped: client " + clientVersion);
            return;
        }
        try (Admin admin = Admin.create(props("golden-features"))) {
            FinalizedVersionRange group = admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("group.version");
            if (group == null || group.maxVersionLevel() < 1) {
                System.out.println("GROUP_848 skipped: broker group.version " + group);
                return;
            }
        }
        commitAndFetch("golden-group-848", GROUP_848, "consumer");
    }

    static void commitAndFetch(String clientId, String groupId, String protocol) throws Exception {
        TopicPartition tp = new TopicPartition("golden-none", 0);
        Properties p = consumerProps(clientId);
        p.put("group.id", groupId);
        p.put("group.protocol", protocol);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(Collections.singleton(tp));
            Map<TopicPartition, OffsetAndMetadata> before = consumer.committed(Set.of(tp));
            check(before.get(tp) == null, "nothing committed yet");
            consumer.commitSync(Collections.singletonMap(tp, new OffsetAndMetadata(2, "golden-meta")));
            Map<TopicPartition, OffsetAndMetadata> after = consumer.committed(Set.of(tp));
            check(after.get(tp).offset() == 2, "committed offset");
        }
        try (Admin admin = Admin.create(props(clientId.replace("golden-", "golden-admin-")))) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get();
            check(offsets.get(tp).offset() == 2 && "golden-meta".equals(offsets.get(tp).metadata()),
                    "admin listConsumerGroupOffsets");
        }
    }

    // DescribeConfigs (Admin.describeConfigs: no synonyms, no documentation) of a topic with a
    // configuration of its own, and of a topic that doesn't exist.
    static void describeConfigs() throws Exception {
        try (Admin admin = Admin.create(props("golden-describe-configs"))) {
            ConfigResource none = new ConfigResource(ConfigResource.Type.TOPIC, "golden-none");
            Config config = admin.describeConfigs(List.of(none)).all().get().get(none);
            ConfigEntry retention = config.get("retention.ms");
            check(retention != null && "-1".equals(retention.value())
                    && retention.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                    "retention.ms of golden-none: " + retention);
            ConfigResource missing = new ConfigResource(ConfigResource.Type.TOPIC, "golden-missing");
            try {
                admin.describeConfigs(List.of(missing)).all().get();
                check(false, "golden-missing described");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof UnknownTopicOrPartitionException,
                        "golden-missing: " + e.getCause());
            }
        }
    }
}

// An independent Kafka producer/admin/consumer for kseek's tests, built on Kafka's own Java
// client. It is the oracle: data written here is written the way real producers write it, and
// what is read here is what a real consumer sees. Run it through tests/kafka/ktool.
//
// Commands (all take --bootstrap HOST:PORT[,...] and [--command-config FILE], a Java client
// properties file, e.g. security.protocol, sasl.jaas.config, ssl.truststore.location):
//   wait-ready    [--nodes N] [--timeout-ms T] [--acl SPEC]...
//   add-acls      --acl SPEC...
//   create-topic  --topic T [--partitions N] [--replication-factor R] [--config k=v]...
//   delete-topic  --topic T
//   produce       --topic T [--compression none|gzip|snappy|lz4|zstd] [--batch-size N]
//                 [--linger-ms N] [--transactional-id X] [--acks all|1|0] [--idempotence false]
//   consume       --topic T [--group G] [--isolation read_committed|read_uncommitted]
//                 [--partition P]... [--from-timestamp MS] [--expect N] [--commit]
//                 [--timeout-ms T]
//   list-offsets  --topic T [--spec earliest|latest|max-timestamp|<ms>] [--isolation ...]
//   commit        --group G --topic T --partition P --offset O [--metadata M]
//   describe-group --group G
//   check-wire    --dir DIR   (no broker: Kafka's message classes read and write again the
//                 encodings in DIR; see WireCheck.java)
//
// An ACL SPEC is PRINCIPAL,RESOURCE_TYPE,NAME,OPERATION[,PATTERN_TYPE], e.g. User:alice,TOPIC,*,READ:
// an ALLOW binding for every host, pattern type LITERAL unless given. wait-ready creates them once the
// cluster answers; both commands return once the broker's authorizer lists every one of them.
//
// A failure the broker reports (an ApiException: authorization, authentication, SSL handshake...)
// is printed as one line "ktool: <ERROR_NAME>: <message>" on stderr (the name from Kafka's Errors,
// e.g. TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, SASL_AUTHENTICATION_FAILED) and the
// exit code is 3; any other failure prints a stack trace, exit code 1.
//
// Byte fields (keys, values, header values) in JSON are null, a UTF-8 string, or {"hex":"..."}
// for bytes that are not UTF-8. The tool prints {"hex":..} only when the bytes are not valid UTF-8.
//
// produce reads JSON lines on stdin. A record line:
//   {"partition":0,"key":"k","value":"v","timestamp":1700000000000,"headers":[["h","v"]]}
// (every field optional), or a control line: {"txn":"begin"|"commit"|"abort"}, {"flush":true}.
// It prints one line per record, in input order, as the broker stored it:
//   {"partition":0,"offset":5,"timestamp":1700000000000,"key":..,"value":..,"headers":[..]}
// plus "aborted":true for records of an aborted transaction (they are flushed before the abort,
// so they are in the log). After a commit or abort, produce waits until the transaction markers are
// written (the last stable offset has passed the transaction), so the log is settled when it reports.
//
// consume prints the same shape (plus "timestamp_type"), sorted by partition then offset. Without
// --expect it reads every assigned partition up to its end offset (the last stable offset under
// read_committed) as of the start.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.io.FileInputStream;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    /** A usage error: printed without a stack trace, exit code 2. */
    static final class Usage extends RuntimeException {
        Usage(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        int rc;
        try {
            rc = run(args);
        } catch (Usage e) {
            System.err.println("ktool: " + e.getMessage());
            rc = 2;
        } catch (Throwable t) {
            ApiException api = apiCause(t);
            if (api != null) {
                System.err.println("ktool: " + errorName(api) + ": " + api.getMessage() + rootCause(api));
                rc = 3;
            } else {
                System.err.print("ktool: ");
                t.printStackTrace();
                rc = 1;
            }
        }
        OUT.flush();
        // Client threads must not keep the JVM alive.
        System.exit(rc);
    }

    static int run(String[] argv) throws Exception {
        if (argv.length == 0) {
            throw new Usage("missing command");
        }
        Args a = new Args(argv);
        switch (argv[0]) {
            case "wait-ready":
                return waitReady(a);
            case "add-acls":
                return addAcls(a);
            case "create-topic":
                return createTopic(a);
            case "delete-topic":
                return deleteTopic(a);
            case "produce":
                return produce(a);
            case "consume":
                return consume(a);
            case "list-offsets":
                return listOffsets(a);
            case "commit":
                return commit(a);
            case "describe-group":
                return describeGroup(a);
            case "warm":
                return warm();
            case "check-wire":
                return WireCheck.run(java.nio.file.Path.of(a.req("dir")), OUT);
            default:
                throw new Usage("unknown command " + argv[0]);
        }
    }

    // ----- commands -----

    static int waitReady(Args a) throws Exception {
        int nodes = a.intOr("nodes", 1);
        long deadline = System.currentTimeMillis() + a.longOr("timeout-ms", 60_000);
        Properties p = base(a);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "200");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        String last = "no answer";
        try (Admin admin = Admin.create(p)) {
            while (System.currentTimeMillis() < deadline) {
                try {
                    var cluster = admin.describeCluster(new DescribeClusterOptions().timeoutMs(3000));
                    int seen = cluster.nodes().get().size();
                    if (seen >= nodes && cluster.controller().get() != null) {
                        if (!a.all("acl").isEmpty()) {
                            createAcls(admin, a.all("acl"), deadline);
                        }
                        return 0;
                    }
                    last = seen + " of " + nodes + " brokers registered";
                } catch (Exception e) {
                    last = String.valueOf(e.getCause() != null ? e.getCause() : e);
                }
                Thread.sleep(100);
            }
        }
        System.err.println("ktool: cluster not ready: " + last);
        return 1;
    }

    static int addAcls(Args a) throws Exception {
        if (a.all("acl").isEmpty()) {
            throw new Usage("add-acls needs --acl SPEC");
        }
        try (Admin admin = Admin.create(base(a))) {
            createAcls(admin, a.all("acl"), System.currentTimeMillis() + a.longOr("timeout-ms", 30_000));
        }
        return 0;
    }

    /** Creates the ACLs, then waits until the authorizer lists all of them (it applies them from the metadata log). */
    static void createAcls(Admin admin, List<String> specs, long deadline) throws Exception {
        List<AclBinding> bindings = new ArrayList<>();
        for (String spec : specs) {
            bindings.add(acl(spec));
        }
        admin.createAcls(bindings).all().get();
        while (true) {
            java.util.Collection<AclBinding> have = admin.describeAcls(AclBindingFilter.ANY).values().get();
            if (have.containsAll(bindings)) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("ACLs not in effect in time; the authorizer lists " + have);
            }
            Thread.sleep(50);
        }
    }

    /** PRINCIPAL,RESOURCE_TYPE,NAME,OPERATION[,PATTERN_TYPE] to an ALLOW binding for every host. */
    static AclBinding acl(String spec) {
        String[] f = spec.split(",", -1);
        if (f.length != 4 && f.length != 5) {
            throw new Usage("--acl wants PRINCIPAL,RESOURCE_TYPE,NAME,OPERATION[,PATTERN_TYPE], got " + spec);
        }
        try {
            PatternType pattern = f.length == 5 ? PatternType.valueOf(f[4]) : PatternType.LITERAL;
            return new AclBinding(
                    new ResourcePattern(ResourceType.valueOf(f[1]), f[2], pattern),
                    new AccessControlEntry(f[0], "*", AclOperation.valueOf(f[3]), AclPermissionType.ALLOW));
        } catch (IllegalArgumentException e) {
            throw new Usage("bad --acl " + spec + ": " + e.getMessage());
        }
    }

    static int createTopic(Args a) throws Exception {
        String topic = a.req("topic");
        NewTopic t = new NewTopic(topic, a.intOr("partitions", 1), (short) a.intOr("replication-factor", 1));
        Map<String, String> configs = new HashMap<>();
        for (String kv : a.all("config")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new Usage("--config wants key=value, got " + kv);
            }
            configs.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        t.configs(configs);
        try (Admin admin = Admin.create(base(a))) {
            admin.createTopics(List.of(t)).all().get();
            // Wait until every partition has a leader, so a producer started next succeeds at once.
            long deadline = System.currentTimeMillis() + 30_000;
            while (true) {
                try {
                    TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                    if (d.partitions().stream().allMatch(pi -> pi.leader() != null && !pi.leader().isEmpty())) {
                        break;
                    }
                } catch (Exception e) {
                    if (System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("topic " + topic + " has partitions without a leader");
                }
                Thread.sleep(50);
            }
        }
        return 0;
    }

    static int deleteTopic(Args a) throws Exception {
        try (Admin admin = Admin.create(base(a))) {
            admin.deleteTopics(List.of(a.req("topic"))).all().get();
        }
        return 0;
    }

    /** A record sent but not yet printed. */
    static final class Pending {
        final Future<RecordMetadata> future;
        final ProducerRecord<byte[], byte[]> record;
        boolean aborted;

        Pending(Future<RecordMetadata> future, ProducerRecord<byte[], byte[]> record) {
            this.future = future;
            this.record = record;
        }
    }

    static int produce(Args a) throws Exception {
        String topic = a.req("topic");
        Properties p = base(a);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, a.or("acks", "all"));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, a.or("compression", "none"));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, a.or("batch-size", "16384"));
        p.put(ProducerConfig.LINGER_MS_CONFIG, a.or("linger-ms", "5"));
        String txnId = a.opt("transactional-id");
        if (txnId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        }
        if ("0".equals(a.opt("acks")) || "1".equals(a.opt("acks")) || "false".equals(a.opt("idempotence"))) {
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        }
        List<Pending> pending = new ArrayList<>();
        List<Pending> inTxn = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            if (txnId != null) {
                producer.initTransactions();
            }
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = JSON.readTree(line);
                if (!n.isObject()) {
                    throw new Usage("line " + lineNo + ": not a JSON object");
                }
                if (n.has("txn")) {
                    String op = n.get("txn").asText();
                    switch (op) {
                        case "begin":
                            producer.beginTransaction();
                            inTxn.clear();
                            break;
                        case "commit":
                            producer.commitTransaction();
                            awaitMarkers(a, inTxn);
                            inTxn.clear();
                            break;
                        case "abort":
                            // Flush first so the aborted records really are in the log.
                            producer.flush();
                            producer.abortTransaction();
                            for (Pending pr : inTxn) {
                                pr.aborted = true;
                            }
                            awaitMarkers(a, inTxn);
                            inTxn.clear();
                            break;
                        default:
                            throw new Usage("line " + lineNo + ": unknown txn op " + op);
                    }
                    printDone(pending);
                    continue;
                }
                if (n.has("flush")) {
                    producer.flush();
                    printDone(pending);
                    continue;
                }
                String t = n.has("topic") ? n.get("topic").asText() : topic;
                Integer partition = n.hasNonNull("partition") ? n.get("partition").asInt() : null;
                Long ts = n.hasNonNull("timestamp") ? n.get("timestamp").asLong() : null;
                List<Header> headers = new ArrayList<>();
                JsonNode hs = n.get("headers");
                if (hs != null && !hs.isNull()) {
                    for (JsonNode h : hs) {
                        if (!h.isArray() || h.size() != 2) {
                            throw new Usage("line " + lineNo + ": a header is [name, value]");
                        }
                        headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
                    }
                }
                ProducerRecord<byte[], byte[]> r =
                        new ProducerRecord<>(t, partition, ts, bytes(n.get("key")), bytes(n.get("value")), headers);
                Pending pr = new Pending(producer.send(r), r);
                pending.add(pr);
                if (txnId != null) {
                    inTxn.add(pr);
                }
            }
            producer.flush();
            printDone(pending);
        }
        return 0;
    }

    /**
     * Waits until the transaction markers of a finished transaction are in every partition it wrote.
     * commitTransaction/abortTransaction return once the coordinator has decided; the markers follow
     * asynchronously. Tests want a settled log (the end offset past the marker), so the marker must be
     * there when produce reports: the last stable offset passes the transaction's last record once it is.
     */
    static void awaitMarkers(Args a, List<Pending> txn) throws Exception {
        if (txn.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> lastOffset = new HashMap<>();
        for (Pending pr : txn) {
            RecordMetadata md = pr.future.get();
            lastOffset.merge(new TopicPartition(md.topic(), md.partition()), md.offset(), Math::max);
        }
        Properties p = base(a);
        p.put("client.id", "kseek-ktool-markers");
        long deadline = System.currentTimeMillis() + 30_000;
        try (Admin admin = Admin.create(p)) {
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            lastOffset.keySet().forEach(tp -> q.put(tp, OffsetSpec.latest()));
            while (true) {
                Map<TopicPartition, ListOffsetsResultInfo> lso = admin
                        .listOffsets(q, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .all()
                        .get();
                boolean settled = lastOffset.entrySet().stream()
                        .allMatch(e -> lso.get(e.getKey()).offset() > e.getValue());
                if (settled) {
                    return;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("transaction markers not written within 30 s: " + lso);
                }
                Thread.sleep(20);
            }
        }
    }

    /** Prints (in send order) and forgets every pending record; all of them must be complete. */
    static void printDone(List<Pending> pending) throws Exception {
        for (Pending pr : pending) {
            RecordMetadata md = pr.future.get();
            ObjectNode o = JSON.createObjectNode();
            o.put("partition", md.partition());
            o.put("offset", md.offset());
            o.put("timestamp", md.timestamp());
            o.set("key", json(pr.record.key()));
            o.set("value", json(pr.record.value()));
            o.set("headers", json(pr.record.headers()));
            if (pr.aborted) {
                o.put("aborted", true);
            }
            OUT.println(JSON.writeValueAsString(o));
        }
        pending.clear();
        OUT.flush();
    }

    static int consume(Args a) throws Exception {
        String topic = a.req("topic");
        String group = a.opt("group");
        long expect = a.longOr("expect", -1);
        long timeoutMs = a.longOr("timeout-ms", 30_000);
        Properties p = base(a);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, a.or("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        // A partition already at its end should not hold a fetch for the default 500 ms.
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        } else if (a.has("commit")) {
            throw new Usage("--commit needs --group");
        }
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            List<String> only = a.all("partition");
            for (var info : c.partitionsFor(topic, Duration.ofMillis(timeoutMs))) {
                if (only.isEmpty() || only.contains(String.valueOf(info.partition()))) {
                    tps.add(new TopicPartition(topic, info.partition()));
                }
            }
            if (tps.isEmpty()) {
                throw new IllegalStateException("topic " + topic + " does not exist or has no such partitions");
            }
            tps.sort(Comparator.comparingInt(TopicPartition::partition));
            c.assign(tps);
            if (a.has("from-timestamp")) {
                long ts = Long.parseLong(a.req("from-timestamp"));
                Map<TopicPartition, Long> q = new HashMap<>();
                tps.forEach(tp -> q.put(tp, ts));
                Map<TopicPartition, OffsetAndTimestamp> found = c.offsetsForTimes(q);
                Map<TopicPartition, Long> ends = c.endOffsets(tps);
                for (TopicPartition tp : tps) {
                    OffsetAndTimestamp ot = found.get(tp);
                    c.seek(tp, ot != null ? ot.offset() : ends.get(tp));
                }
            } else if (group != null) {
                Map<TopicPartition, OffsetAndMetadata> committed = c.committed(new java.util.HashSet<>(tps));
                for (TopicPartition tp : tps) {
                    OffsetAndMetadata om = committed.get(tp);
                    if (om != null) {
                        c.seek(tp, om.offset());
                    } else {
                        c.seekToBeginning(List.of(tp));
                    }
                }
            } else {
                c.seekToBeginning(tps);
            }
            // Under read_committed, endOffsets are last stable offsets.
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (true) {
                boolean done;
                if (expect >= 0) {
                    done = got.size() >= expect;
                } else {
                    done = true;
                    for (TopicPartition tp : tps) {
                        if (c.position(tp) < ends.get(tp)) {
                            done = false;
                            break;
                        }
                    }
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("ktool: consume timed out after " + got.size() + " records"
                            + (expect >= 0 ? " (expected " + expect + ")" : " (end offsets " + ends + ")"));
                    return 1;
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    got.add(r);
                }
            }
            if (a.has("commit")) {
                Map<TopicPartition, OffsetAndMetadata> pos = new HashMap<>();
                for (TopicPartition tp : tps) {
                    pos.put(tp, new OffsetAndMetadata(c.position(tp)));
                }
                c.commitSync(pos);
            }
        }
        got.sort(Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        for (ConsumerRecord<byte[], byte[]> r : got) {
            ObjectNode o = JSON.createObjectNode();
            o.put("partition", r.partition());
            o.put("offset", r.offset());
            o.put("timestamp", r.timestamp());
            o.put("timestamp_type", r.timestampType().name);
            o.set("key", json(r.key()));
            o.set("value", json(r.value()));
            o.set("headers", json(r.headers()));
            OUT.println(JSON.writeValueAsString(o));
        }
        return 0;
    }

    static int listOffsets(Args a) throws Exception {
        String topic = a.req("topic");
        String spec = a.or("spec", "latest");
        OffsetSpec os;
        switch (spec) {
            case "earliest":
                os = OffsetSpec.earliest();
                break;
            case "latest":
                os = OffsetSpec.latest();
                break;
            case "max-timestamp":
                os = OffsetSpec.maxTimestamp();
                break;
            default:
                os = OffsetSpec.forTimestamp(Long.parseLong(spec));
        }
        IsolationLevel iso = "read_committed".equals(a.or("isolation", "read_uncommitted"))
                ? IsolationLevel.READ_COMMITTED
                : IsolationLevel.READ_UNCOMMITTED;
        try (Admin admin = Admin.create(base(a))) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            for (TopicPartitionInfo pi : d.partitions()) {
                q.put(new TopicPartition(topic, pi.partition()), os);
            }
            Map<TopicPartition, ListOffsetsResultInfo> res =
                    admin.listOffsets(q, new ListOffsetsOptions(iso)).all().get();
            for (TopicPartition tp : sorted(res.keySet())) {
                ListOffsetsResultInfo r = res.get(tp);
                ObjectNode o = JSON.createObjectNode();
                o.put("partition", tp.partition());
                o.put("offset", r.offset());
                o.put("timestamp", r.timestamp());
                OUT.println(JSON.writeValueAsString(o));
            }
        }
        return 0;
    }

    static int commit(Args a) throws Exception {
        TopicPartition tp = new TopicPartition(a.req("topic"), Integer.parseInt(a.req("partition")));
        OffsetAndMetadata om = new OffsetAndMetadata(Long.parseLong(a.req("offset")), a.or("metadata", ""));
        try (Admin admin = Admin.create(base(a))) {
            admin.alterConsumerGroupOffsets(a.req("group"), Map.of(tp, om)).all().get();
        }
        return 0;
    }

    static int describeGroup(Args a) throws Exception {
        String group = a.req("group");
        try (Admin admin = Admin.create(base(a))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            committed.keySet().forEach(tp -> q.put(tp, OffsetSpec.latest()));
            Map<TopicPartition, ListOffsetsResultInfo> ends =
                    q.isEmpty() ? Map.of() : admin.listOffsets(q).all().get();
            for (TopicPartition tp : sorted(committed.keySet())) {
                OffsetAndMetadata om = committed.get(tp);
                ObjectNode o = JSON.createObjectNode();
                o.put("group", group);
                o.put("topic", tp.topic());
                o.put("partition", tp.partition());
                if (om == null) {
                    o.putNull("offset");
                    o.putNull("metadata");
                } else {
                    o.put("offset", om.offset());
                    o.put("metadata", om.metadata());
                }
                long end = ends.get(tp).offset();
                o.put("log_end_offset", end);
                if (om == null) {
                    o.putNull("lag");
                } else {
                    o.put("lag", end - om.offset());
                }
                OUT.println(JSON.writeValueAsString(o));
            }
        }
        return 0;
    }

    /**
     * Loads the classes the other commands use, without a broker: tests/kafka/ktool runs this once
     * with -XX:ArchiveClassesAtExit to build a class-data-sharing archive that halves JVM start-up.
     */
    static int warm() throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:1");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.metrics();
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(new TopicPartition("warm", 0)));
        }
        Admin admin = Admin.create(p);
        admin.describeCluster();
        admin.close(Duration.ZERO);
        JSON.writeValueAsString(JSON.readTree("{\"key\":[\"a\",{\"hex\":\"00\"},null,1]}"));
        json(new byte[] {(byte) 0xff});
        return 0;
    }

    // ----- helpers -----

    static Properties base(Args a) throws java.io.IOException {
        Properties p = new Properties();
        String file = a.opt("command-config");
        if (file != null) {
            try (FileInputStream in = new FileInputStream(file)) {
                p.load(in);
            }
        }
        p.put("bootstrap.servers", a.req("bootstrap"));
        p.put("client.id", "kseek-ktool");
        return p;
    }

    /**
     * Kafka's name of the error (TOPIC_AUTHORIZATION_FAILED, ...), or the exception's class name for
     * client-side failures without an error code of their own (SslAuthenticationException).
     */
    static String errorName(ApiException e) {
        Errors error = Errors.forException(e);
        if (error.exception() != null && error.exception().getClass() == e.getClass()) {
            return error.name();
        }
        return e.getClass().getSimpleName();
    }

    /** ": <message of the innermost cause>" when there is a deeper cause (why a handshake failed), else "". */
    static String rootCause(Throwable t) {
        Throwable root = t;
        for (int depth = 0; root.getCause() != null && depth < 20; depth++) {
            root = root.getCause();
        }
        return root == t ? "" : " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }

    /** The broker's error behind a failure, if there is one (futures and the clients wrap it). */
    static ApiException apiCause(Throwable t) {
        for (int depth = 0; t != null && depth < 10; depth++, t = t.getCause()) {
            if (t instanceof ApiException) {
                return (ApiException) t;
            }
            if (!(t instanceof ExecutionException) && !(t instanceof org.apache.kafka.common.KafkaException)) {
                return null;
            }
        }
        return null;
    }

    static List<TopicPartition> sorted(java.util.Collection<TopicPartition> tps) {
        List<TopicPartition> l = new ArrayList<>(tps);
        l.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        return l;
    }

    /** JSON byte field to bytes: null, a UTF-8 string, or {"hex": "..."}. */
    static byte[] bytes(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        if (n.isTextual()) {
            return n.asText().getBytes(StandardCharsets.UTF_8);
        }
        if (n.isObject() && n.has("hex")) {
            return HexFormat.of().parseHex(n.get("hex").asText());
        }
        throw new Usage("a byte field is null, a string or {\"hex\":\"..\"}, got " + n);
    }

    /** Bytes to a JSON byte field: a string when they are valid UTF-8, else {"hex": ".."}. */
    static JsonNode json(byte[] b) {
        if (b == null) {
            return JSON.nullNode();
        }
        try {
            String s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
            return JSON.getNodeFactory().textNode(s);
        } catch (CharacterCodingException e) {
            ObjectNode o = JSON.createObjectNode();
            o.put("hex", HexFormat.of().formatHex(b));
            return o;
        }
    }

    static JsonNode json(Iterable<Header> headers) {
        ArrayNode arr = JSON.createArrayNode();
        for (Header h : headers) {
            ArrayNode pair = JSON.createArrayNode();
            pair.add(h.key());
            pair.add(json(h.value()));
            arr.add(pair);
        }
        return arr;
    }

    /** --name value options; a flag without a value (next token starts with --) maps to "". */
    static final class Args {
        private final Map<String, List<String>> opts = new TreeMap<>();

        Args(String[] argv) {
            for (int i = 1; i < argv.length; i++) {
                String k = argv[i];
                if (!k.startsWith("--")) {
                    throw new Usage("unexpected argument " + k);
                }
                String v = "";
                if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) {
                    v = argv[++i];
                }
                opts.computeIfAbsent(k.substring(2), x -> new ArrayList<>()).add(v);
            }
        }

        boolean has(String k) {
            return opts.containsKey(k);
        }

        String opt(String k) {
            List<String> v = opts.get(k);
            return v == null ? null : v.get(v.size() - 1);
        }

        String req(String k) {
            String v = opt(k);
            if (v == null || v.isEmpty()) {
                throw new Usage("missing --" + k);
            }
            return v;
        }

        String or(String k, String dflt) {
            String v = opt(k);
            return v == null ? dflt : v;
        }

        int intOr(String k, int dflt) {
            String v = opt(k);
            return v == null ? dflt : Integer.parseInt(v);
        }

        long longOr(String k, long dflt) {
            String v = opt(k);
            return v == null ? dflt : Long.parseLong(v);
        }

        List<String> all(String k) {
            return opts.getOrDefault(k, Collections.emptyList());
        }
    }
}

// Apicurio's Java Avro deserializer (AvroKafkaDeserializer 2.6.13.Final, Confluent framing:
// a 4-byte content id) over every value of a benchmark file, RUNS times; one line per run:
// `java <records> <seconds>` (CPU time of this thread). Run by benches/registry/run.
import io.apicurio.registry.serde.SerdeConfig;
import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class ApicurioBench {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        byte[] data = Files.readAllBytes(Path.of(args[1]));
        int runs = Integer.parseInt(args[2]);
        List<byte[]> values = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.wrap(data);
        while (buf.remaining() >= 4) {
            byte[] v = new byte[buf.getInt()];
            buf.get(v);
            values.add(v);
        }
        Map<String, Object> config = new HashMap<>();
        config.put(SerdeConfig.REGISTRY_URL, url + "/apis/registry/v2");
        config.put(SerdeConfig.ENABLE_CONFLUENT_ID_HANDLER, true);
        config.put(SerdeConfig.USE_ID, "contentId");
        AvroKafkaDeserializer<Object> de = new AvroKafkaDeserializer<>();
        de.configure(config, false);
        var bean = ManagementFactory.getThreadMXBean();
        long sink = 0;
        // A warm-up pass: the schema fetched, the JIT at work.
        for (int w = 0; w < 3; w++) {
            for (byte[] v : values) if (de.deserialize("bench", v) != null) sink++;
        }
        for (int r = 0; r < runs; r++) {
            long start = bean.getCurrentThreadCpuTime();
            for (byte[] v : values) if (de.deserialize("bench", v) != null) sink++;
            long ns = bean.getCurrentThreadCpuTime() - start;
            System.out.printf("java %d %.6f%n", values.size(), ns / 1e9);
        }
        if (sink == 42) System.out.println();
    }
}

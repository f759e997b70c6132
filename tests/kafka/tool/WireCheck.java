// `ktool check-wire DIR`: parses each DIR/<Message>.v<N>.<hash>.bin with Kafka's own generated
// message class (org.apache.kafka.common.message.<Message>Data) at version N and writes it again
// at N. The files are the hand-written encodings of kseek-protocol's unit tests, dumped by
// `KSEEK_WIRE_DUMP=DIR cargo test -p kseek-protocol --lib` (tests/kafka/check-wire runs both).
//
// Prints one JSON line a file, in name order:
//   {"file":"MetadataRequest.v12.….bin","result":"same"}
// where result is
//   same         Kafka read every byte and wrote the same bytes again
//   unsupported  this client's class does not know version N (detail: the versions it knows)
//   unparsed     Kafka's reader failed, or left bytes over (detail says which)
//   differs      Kafka read the message but writes other bytes (detail: the first difference)
// Exits 1 if any file is unparsed or differs, 0 otherwise.
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

final class WireCheck {
    private WireCheck() {}

    static int run(Path dir, PrintStream out) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().toList();
        }
        ObjectMapper json = new ObjectMapper();
        int failed = 0;
        for (Path file : files) {
            String name = file.getFileName().toString();
            String[] verdict = check(name, Files.readAllBytes(file));
            ObjectNode line = json.createObjectNode();
            line.put("file", name);
            line.put("result", verdict[0]);
            if (verdict[1] != null) {
                line.put("detail", verdict[1]);
            }
            out.println(json.writeValueAsString(line));
            if (verdict[0].equals("unparsed") || verdict[0].equals("differs")) {
                failed++;
            }
        }
        return failed == 0 ? 0 : 1;
    }

    /** The result and its detail (or null) for the bytes of one file named Message.vN.hash.bin. */
    static String[] check(String name, byte[] bytes) {
        String[] parts = name.split("\\.");
        if (parts.length != 4 || !parts[1].startsWith("v")) {
            throw new IllegalArgumentException("not <Message>.v<N>.<hash>.bin: " + name);
        }
        short version = Short.parseShort(parts[1].substring(1));
        Class<? extends Message> type;
        Message empty;
        try {
            type = Class.forName("org.apache.kafka.common.message." + parts[0] + "Data")
                .asSubclass(Message.class);
            empty = type.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no Kafka message class for " + parts[0], e);
        }
        if (version < empty.lowestSupportedVersion() || version > empty.highestSupportedVersion()) {
            return new String[] {"unsupported",
                "this client knows v" + empty.lowestSupportedVersion() + "-v" + empty.highestSupportedVersion()};
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        Message message;
        try {
            message = type.getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class)
                .newInstance(new ByteBufferAccessor(in), version);
        } catch (InvocationTargetException e) {
            return new String[] {"unparsed", String.valueOf(e.getCause())};
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call the reader of " + type.getName(), e);
        }
        if (in.hasRemaining()) {
            return new String[] {"unparsed", in.remaining() + " of " + bytes.length + " bytes left after the message"};
        }
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer again = ByteBuffer.allocate(message.size(cache, version));
        message.write(new ByteBufferAccessor(again), cache, version);
        byte[] written = again.array();
        if (Arrays.equals(bytes, written)) {
            return new String[] {"same", null};
        }
        int at = Arrays.mismatch(bytes, written);
        return new String[] {"differs", "first difference at byte " + at + " of " + bytes.length
            + "; Kafka writes " + HexFormat.of().formatHex(written) + " (" + written.length + " bytes)"};
    }
}

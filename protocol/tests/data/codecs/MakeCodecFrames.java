// Writes the codec golden files under protocol/tests/data/codecs/ with Kafka's own Java
// compression classes (kafka-clients 4.4.0) and the codec jars on its classpath.
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.file.*;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;

public class MakeCodecFrames {
    static byte[] payload() {
        // JSON-like records from a fixed xorshift sequence: about 100 KB, compressible.
        StringBuilder sb = new StringBuilder();
        int state = 0x9E3779B9;
        for (int i = 0; sb.length() < 100_000; i++) {
            state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
            sb.append("{\"user\":\"u-").append(String.format("%08x", state)).append("\",\"seq\":").append(i)
              .append(",\"event\":\"page_view\",\"path\":\"/p/").append(Integer.toUnsignedLong(state) % 977).append("\"}\n");
        }
        return sb.substring(0, 100_000).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    static byte[] kafka(Compression c, byte magic, byte[] in) throws IOException {
        ByteBufferOutputStream buf = new ByteBufferOutputStream(1024);
        try (OutputStream out = c.wrapForOutput(buf, magic)) { out.write(in); }
        ByteBuffer b = buf.buffer(); b.flip();
        byte[] bytes = new byte[b.remaining()]; b.get(bytes); return bytes;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        byte[] p = payload();
        Files.write(dir.resolve("payload.bin"), p);
        Files.write(dir.resolve("java-gzip.bin"), kafka(Compression.gzip().build(), (byte) 2, p));
        Files.write(dir.resolve("java-snappy.bin"), kafka(Compression.snappy().build(), (byte) 2, p));
        Files.write(dir.resolve("java-lz4.bin"), kafka(Compression.lz4().build(), (byte) 2, p));
        Files.write(dir.resolve("java-lz4-magic0.bin"), kafka(Compression.lz4().build(), (byte) 0, p));
        Files.write(dir.resolve("java-zstd.bin"), kafka(Compression.zstd().build(), (byte) 2, p));
        // Independent framings: a raw snappy block, a standard lz4 frame with block and content
        // checksums (lz4-java), a zstd frame with a content checksum (zstd-jni).
        Files.write(dir.resolve("snappy-raw.bin"), org.xerial.snappy.Snappy.compress(p));
        ByteArrayOutputStream lz4 = new ByteArrayOutputStream();
        try (OutputStream out = new net.jpountz.lz4.LZ4FrameOutputStream(lz4,
                net.jpountz.lz4.LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                net.jpountz.lz4.LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM,
                net.jpountz.lz4.LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM,
                net.jpountz.lz4.LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE)) { out.write(p); }
        Files.write(dir.resolve("lz4-frame-checksums.bin"), lz4.toByteArray());
        ByteArrayOutputStream zs = new ByteArrayOutputStream();
        try (com.github.luben.zstd.ZstdOutputStream out = new com.github.luben.zstd.ZstdOutputStream(zs)) {
            out.setChecksum(true); out.write(p);
        }
        Files.write(dir.resolve("zstd-checksum.bin"), zs.toByteArray());
    }
}

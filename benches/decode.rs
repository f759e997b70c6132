//! Record batch decoding: kseek against the `kafka-protocol` and `rskafka` crates, side by side
//! on identical bytes, plus the codec crates' own decompression speed on the same payloads.
//!
//! Inputs are built with `kafka-protocol`'s encoder (an implementation independent of kseek):
//! record batches of 16 KiB (Java's default `batch.size`) and 1 MiB, with 100 B or 1 KiB JSON-like
//! values, 16- or 36-byte keys (user ids and UUIDs) and one or two headers, uncompressed and with
//! every codec. Before anything is timed, all three decoders must agree on the record count and
//! on a checksum of every key and value.
//!
//! Every decoder checks CRCs, and every record's key and value is touched (length, first and
//! last byte), so lazy decoding is not flattered. Uncompressed inputs also get two reference
//! lines, not comparisons: `kseek-no-crc` (kseek with its CRC check off, the record pass alone)
//! and `crc32c-only` (the `crc32c` crate alone over the same batches, the check alone).
//!
//! Time is the benchmark thread's CPU time by default (`CLOCK_THREAD_CPUTIME_ID`), so that
//! other processes competing for the cores (compilers on a shared 2-core machine) don't count
//! against whichever decoder happened to be running; `KSEEK_BENCH_CLOCK=wall` measures wall time.
//!
//! Full run: `cargo bench --bench decode`. Quick run (CI): `KSEEK_BENCH_QUICK=1 cargo bench
//! --bench decode`, which shrinks the inputs and the sampling. Filter as usual with criterion,
//! e.g. `cargo bench --bench decode -- 'decode/100B'`. See BENCHMARKS.md.

use std::hint::black_box;
use std::io::{Cursor, Read};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder,
    RecordEncodeOptions, TimestampType,
};
use kseek_protocol::records::{compression, Batch, Batches, Compression, DecodeOptions};
use rskafka::protocol::record::{ControlBatchOrRecords, RecordBatch as RsRecordBatch};
use rskafka::protocol::traits::ReadType;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// Nanoseconds of this thread's CPU time, or of wall time with `KSEEK_BENCH_CLOCK=wall`.
struct Clock {
    wall: bool,
}

impl Clock {
    fn from_env() -> Clock {
        let wall = std::env::var("KSEEK_BENCH_CLOCK").is_ok_and(|v| v == "wall");
        eprintln!(
            "kseek bench: measuring {}",
            if wall { "wall time" } else { "thread CPU time" }
        );
        Clock { wall }
    }

    fn now(&self) -> u64 {
        if self.wall {
            static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            return ORIGIN
                .get_or_init(std::time::Instant::now)
                .elapsed()
                .as_nanos() as u64;
        }
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux knows.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

impl Measurement for Clock {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now()
    }

    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as criterion's own wall clock's.
        static WALL: WallTime = WallTime;
        WALL.formatter()
    }
}

/// How much to run: criterion is in test mode (each benchmark once, as `cargo test
/// --all-targets` runs it, in a debug build) unless it was given `--bench`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Full inputs and sampling.
    Full,
    /// `KSEEK_BENCH_QUICK=1`: small inputs, short sampling.
    Quick,
    /// Not benchmarking: tiny inputs, so the agreement checks run fast in debug builds.
    Test,
}

fn mode() -> Mode {
    if !std::env::args().any(|a| a == "--bench") {
        Mode::Test
    } else if std::env::var_os("KSEEK_BENCH_QUICK").is_some_and(|v| v != "0") {
        Mode::Quick
    } else {
        Mode::Full
    }
}

/// `KSEEK_BENCH_CALLGRIND=1` in test mode: larger uncompressed inputs only, no codec benches,
/// and each input's record count printed, for counting instructions per record under
/// callgrind (see BENCHMARKS.md).
fn callgrind() -> bool {
    mode() == Mode::Test && std::env::var_os("KSEEK_BENCH_CALLGRIND").is_some_and(|v| v != "0")
}

fn quick() -> bool {
    mode() != Mode::Full
}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/// A deterministic xorshift generator, so every run decodes the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: [&str; 24] = [
    "page_view",
    "click",
    "checkout",
    "search",
    "session",
    "mobile",
    "desktop",
    "eu-west-1",
    "us-east-1",
    "premium",
    "free",
    "true",
    "false",
    "null",
    "campaign",
    "referrer",
    "product",
    "category",
    "quantity",
    "price",
    "currency",
    "EUR",
    "USD",
    "country",
];

fn key(rng: &mut Rng, i: u64) -> Vec<u8> {
    if i.is_multiple_of(2) {
        // A UUID (36 bytes).
        let (a, b) = (rng.next(), rng.next());
        format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
        .into_bytes()
    } else {
        // A user id (16 bytes).
        format!("user-{:011}", rng.next() % 100_000_000_000).into_bytes()
    }
}

/// A JSON-like value of exactly `size` bytes: compressible like real event payloads (about
/// 2-4x), not like a run of zeros.
fn value(rng: &mut Rng, i: u64, size: usize) -> Vec<u8> {
    let mut v = format!(
        "{{\"id\":{i},\"ts\":{},\"user\":\"{:016x}\",\"attrs\":{{",
        1_700_000_000_000u64 + i * 7,
        rng.next()
    )
    .into_bytes();
    while v.len() < size {
        let r = rng.next();
        let word = WORDS[(r % WORDS.len() as u64) as usize];
        let field = WORDS[((r >> 8) % WORDS.len() as u64) as usize];
        v.extend_from_slice(format!("\"{field}\":\"{word}-{}\",", (r >> 16) % 1000).as_bytes());
    }
    v.truncate(size - 2);
    v.extend_from_slice(b"}}");
    v
}

/// Records for batches of about `batch_size` bytes each, `total` bytes in all.
fn record_groups(value_size: usize, batch_size: usize, total: usize) -> Vec<Vec<KpRecord>> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut groups = Vec::new();
    let mut group = Vec::new();
    let (mut group_bytes, mut all_bytes) = (0, 0);
    let mut offset = 0u64;
    while all_bytes < total {
        let key = key(&mut rng, offset);
        let value = value(&mut rng, offset, value_size);
        let mut headers = IndexMap::new();
        headers.insert(
            StrBytes::from_static_str("trace-id"),
            Some(Bytes::from(format!("{:016x}", rng.next()))),
        );
        if offset % 2 == 1 {
            headers.insert(
                StrBytes::from_static_str("content-type"),
                Some(Bytes::from_static(b"application/json")),
            );
        }
        // Key, value, headers and about 12 bytes of varints and attributes.
        let size = key.len() + value.len() + 40 + 12;
        if group_bytes + size > batch_size && !group.is_empty() {
            groups.push(std::mem::take(&mut group));
            group_bytes = 0;
        }
        group.push(KpRecord {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: offset as i64,
            // kafka-protocol starts a new batch when offset - sequence changes.
            sequence: offset as i32,
            timestamp: 1_700_000_000_000 + offset as i64 * 7,
            key: Some(Bytes::from(key)),
            value: Some(Bytes::from(value)),
            headers,
        });
        group_bytes += size;
        all_bytes += size;
        offset += 1;
    }
    if !group.is_empty() {
        groups.push(group);
    }
    groups
}

fn kp_codec(codec: Compression) -> KpCompression {
    match codec {
        Compression::None => KpCompression::None,
        Compression::Gzip => KpCompression::Gzip,
        Compression::Snappy => KpCompression::Snappy,
        Compression::Lz4 => KpCompression::Lz4,
        Compression::Zstd => KpCompression::Zstd,
    }
}

fn encode(groups: &[Vec<KpRecord>], codec: Compression) -> Bytes {
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: kp_codec(codec),
    };
    for group in groups {
        RecordBatchEncoder::encode(&mut buf, group.iter(), &options).expect("encode");
    }
    buf.freeze()
}

/// One input: batches of one shape and codec.
struct Dataset {
    /// e.g. `100B-16KiB/lz4`
    name: String,
    codec: Compression,
    wire: Bytes,
    records: u64,
    /// The size of the same batches uncompressed: the bytes/s figures are in these bytes.
    uncompressed_len: u64,
    /// The uncompressed record sections of the batches (for the codec benches).
    sections: Vec<Bytes>,
}

fn datasets(
    value_size: usize,
    batch_size: usize,
    total: usize,
    codecs: &[Compression],
) -> Vec<Dataset> {
    let groups = record_groups(value_size, batch_size, total);
    let records = groups.iter().map(|g| g.len() as u64).sum();
    let plain = encode(&groups, Compression::None);
    let shape = format!(
        "{}-{}",
        if value_size >= KIB {
            format!("{}KiB", value_size / KIB)
        } else {
            format!("{value_size}B")
        },
        if batch_size >= MIB {
            format!("{}MiB", batch_size / MIB)
        } else {
            format!("{}KiB", batch_size / KIB)
        }
    );
    codecs
        .iter()
        .map(|&codec| {
            let wire = if codec == Compression::None {
                plain.clone()
            } else {
                encode(&groups, codec)
            };
            let sections = Batches::new(plain.clone(), DecodeOptions::default())
                .map(|b| match b.expect("batch") {
                    Batch::V2(b) => b.raw_records(),
                    Batch::Legacy(_) => unreachable!("magic 2 only"),
                })
                .collect();
            Dataset {
                name: format!("{shape}/{}", codec.name()),
                codec,
                wire,
                records,
                uncompressed_len: plain.len() as u64,
                sections,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The three decoders. Each returns (records, sum) where sum touches every key and value.
// ---------------------------------------------------------------------------------------------

#[inline(always)]
fn touch(sum: u64, bytes: Option<&[u8]>) -> u64 {
    match bytes {
        Some(b) => {
            let first = b.first().copied().unwrap_or(0) as u64;
            let last = b.last().copied().unwrap_or(0) as u64;
            sum.wrapping_add(b.len() as u64)
                .wrapping_add(first << 8)
                .wrapping_add(last << 16)
        }
        None => sum.wrapping_add(1),
    }
}

#[inline(never)]
fn decode_kseek(wire: &Bytes) -> (u64, u64) {
    decode_kseek_with(wire, DecodeOptions::default())
}

/// [`decode_kseek`] with the CRC check turned off (`verify_crc: false`, for callers who trust
/// their transport): the record pass alone. A reference line, not a comparison with the peers,
/// which always check.
#[inline(never)]
fn decode_kseek_no_crc(wire: &Bytes) -> (u64, u64) {
    decode_kseek_with(
        wire,
        DecodeOptions {
            verify_crc: false,
            ..DecodeOptions::default()
        },
    )
}

/// The body of both kseek lines, inlined into each so that each has a loop of its own.
#[inline(always)]
fn decode_kseek_with(wire: &Bytes, options: DecodeOptions) -> (u64, u64) {
    let (mut count, mut sum) = (0u64, 0u64);
    for batch in Batches::new(wire.clone(), options) {
        let records = batch
            .expect("kseek batch")
            .records()
            .expect("kseek records");
        for record in &records {
            let record = record.expect("kseek record");
            sum = touch(sum, record.key());
            sum = touch(sum, record.value());
            count += 1;
        }
    }
    (count, sum)
}

/// The `crc32c` crate alone over the bytes each batch's CRC covers (attributes to the end),
/// checked against the stored CRC: what the check every decoder makes costs by itself, with no
/// record decoded. A reference line: the ceiling for a decoder that checks CRCs with this crate.
/// The batches are framed by hand (length at 8, CRC at 17, checked bytes from 21) rather than
/// with kseek's `Batches`, so that nothing of kseek's is in this line.
/// `crc` is the `crc32c` crate's function, or kseek's own (`kseek-crc32c-only`, on x86-64 its
/// SSE 4.2 code, which replaced the crate there for the footprint: the two lines compare them).
#[inline(never)]
fn crc32c_only(wire: &Bytes, crc: impl Fn(&[u8]) -> u32) -> u64 {
    let mut rest = wire.as_ref();
    let mut batches = 0;
    while let Some(len) = rest.get(8..12) {
        let end = 12 + i32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
        let batch = &rest[..end];
        let stored = u32::from_be_bytes(batch[17..21].try_into().expect("4 bytes"));
        assert_eq!(crc(&batch[21..]), stored, "batch CRC");
        batches += 1;
        rest = &rest[end..];
    }
    batches
}

fn decode_kafka_protocol(wire: &Bytes) -> (u64, u64) {
    let (mut count, mut sum) = (0u64, 0u64);
    let mut buf = wire.clone();
    while buf.has_remaining() {
        let set = RecordBatchDecoder::decode(&mut buf).expect("kafka-protocol batch");
        for record in &set.records {
            sum = touch(sum, record.key.as_deref());
            sum = touch(sum, record.value.as_deref());
            count += 1;
        }
    }
    (count, sum)
}

fn decode_rskafka(wire: &Bytes) -> (u64, u64) {
    let (mut count, mut sum) = (0u64, 0u64);
    let mut cursor = Cursor::new(wire.as_ref());
    while (cursor.position() as usize) < wire.len() {
        let batch = RsRecordBatch::read(&mut cursor).expect("rskafka batch");
        if let ControlBatchOrRecords::Records(records) = batch.records {
            for record in &records {
                sum = touch(sum, record.key.as_deref());
                sum = touch(sum, record.value.as_deref());
                count += 1;
            }
        }
    }
    (count, sum)
}

/// A stronger checksum than `touch` for the agreement check: FNV-1a over every key and value.
fn fnv(hash: u64, bytes: Option<&[u8]>) -> u64 {
    let mut h = hash ^ 0xff;
    for &b in bytes.unwrap_or(b"<null>") {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn agree(d: &Dataset) {
    const BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    let mut kseek = (0u64, BASIS);
    for batch in Batches::new(d.wire.clone(), DecodeOptions::default()) {
        for record in &batch.unwrap().records().unwrap() {
            let r = record.unwrap();
            kseek = (kseek.0 + 1, fnv(fnv(kseek.1, r.key()), r.value()));
        }
    }
    let mut kp = (0u64, BASIS);
    let mut buf = d.wire.clone();
    while buf.has_remaining() {
        for r in RecordBatchDecoder::decode(&mut buf).unwrap().records {
            kp = (
                kp.0 + 1,
                fnv(fnv(kp.1, r.key.as_deref()), r.value.as_deref()),
            );
        }
    }
    let mut rs = (0u64, BASIS);
    let mut cursor = Cursor::new(d.wire.as_ref());
    while (cursor.position() as usize) < d.wire.len() {
        if let ControlBatchOrRecords::Records(records) =
            RsRecordBatch::read(&mut cursor).unwrap().records
        {
            for r in records {
                rs = (
                    rs.0 + 1,
                    fnv(fnv(rs.1, r.key.as_deref()), r.value.as_deref()),
                );
            }
        }
    }
    assert_eq!(kseek.0, d.records, "{}: kseek record count", d.name);
    if callgrind() {
        println!("{}: {} records, {} bytes", d.name, d.records, d.wire.len());
    }
    assert_eq!(kseek, kp, "{}: kseek and kafka-protocol disagree", d.name);
    assert_eq!(kseek, rs, "{}: kseek and rskafka disagree", d.name);
}

// ---------------------------------------------------------------------------------------------
// Benches
// ---------------------------------------------------------------------------------------------

fn configure(group: &mut BenchmarkGroup<'_, Clock>) {
    if quick() {
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500));
    } else {
        group
            .sample_size(20)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
    }
}

fn bench_dataset(c: &mut Criterion<Clock>, d: &Dataset) {
    agree(d);
    let mut group = c.benchmark_group(format!("decode/{}", d.name));
    configure(&mut group);
    group.throughput(Throughput::ElementsAndBytes {
        elements: d.records,
        bytes: d.uncompressed_len,
    });
    group.bench_function("kseek", |b| b.iter(|| black_box(decode_kseek(&d.wire))));
    group.bench_function("kafka-protocol", |b| {
        b.iter(|| black_box(decode_kafka_protocol(&d.wire)))
    });
    group.bench_function("rskafka", |b| b.iter(|| black_box(decode_rskafka(&d.wire))));
    if d.codec == Compression::None {
        references(&mut group, d);
    }
    group.finish();
}

fn decode_benches(c: &mut Criterion<Clock>) {
    // (value size, batch size, total bytes per input)
    let shapes: &[(usize, usize, usize)] = match mode() {
        Mode::Test if callgrind() => &[
            (100, 16 * KIB, MIB),
            (100, MIB, 2 * MIB),
            (KIB, MIB, 2 * MIB),
        ],
        Mode::Test => &[(100, 16 * KIB, 64 * KIB), (KIB, MIB, MIB)],
        Mode::Quick => &[(100, 16 * KIB, 512 * KIB), (KIB, MIB, 2 * MIB)],
        Mode::Full => &[
            (100, 16 * KIB, 8 * MIB),
            (KIB, 16 * KIB, 8 * MIB),
            (100, MIB, 8 * MIB),
            (KIB, MIB, 8 * MIB),
        ],
    };
    for &(value_size, batch_size, total) in shapes {
        let codecs = if callgrind() {
            &CODECS[..1]
        } else {
            &CODECS[..]
        };
        for d in datasets(value_size, batch_size, total, codecs) {
            bench_dataset(c, &d);
        }
    }
}

/// Two reference lines beside the three decoders of an uncompressed input: kseek with its CRC
/// check off (the record pass alone) and the `crc32c` crate alone over the same batches (the
/// check alone). They show how the full decode's time splits, on the same bytes in the same run.
fn references(group: &mut BenchmarkGroup<'_, Clock>, d: &Dataset) {
    assert_eq!(
        decode_kseek_no_crc(&d.wire).0,
        d.records,
        "kseek without CRC"
    );
    group.bench_function("kseek-no-crc", |b| {
        b.iter(|| black_box(decode_kseek_no_crc(&d.wire)))
    });
    group.bench_function("crc32c-only", |b| {
        b.iter(|| black_box(crc32c_only(&d.wire, crc32c::crc32c)))
    });
    group.bench_function("kseek-crc32c-only", |b| {
        b.iter(|| black_box(crc32c_only(&d.wire, kseek::protocol::records::crc32c)))
    });
}

/// 1 KiB records from a buffer far larger than the last-level cache, decoded once per iteration.
fn large_buffer_bench(c: &mut Criterion<Clock>) {
    if callgrind() {
        return;
    }
    let total = match mode() {
        Mode::Test => 2 * MIB,
        Mode::Quick => 64 * MIB,
        Mode::Full => 256 * MIB,
    };
    let d = datasets(KIB, MIB, total, &[Compression::None]).remove(0);
    agree(&d);
    let mut group = c.benchmark_group(format!("large/{}MiB-1KiB-1MiB/none", total / MIB));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick() { 200 } else { 1000 }))
        .measurement_time(Duration::from_secs(if quick() { 1 } else { 10 }));
    group.throughput(Throughput::ElementsAndBytes {
        elements: d.records,
        bytes: d.uncompressed_len,
    });
    group.bench_function("kseek", |b| b.iter(|| black_box(decode_kseek(&d.wire))));
    group.bench_function("kafka-protocol", |b| {
        b.iter(|| black_box(decode_kafka_protocol(&d.wire)))
    });
    group.bench_function("rskafka", |b| b.iter(|| black_box(decode_rskafka(&d.wire))));
    references(&mut group, &d);
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// Codecs alone: kseek's `decompress` against the codec crates' own calls, on the compressed
// record sections of the same batches.
// ---------------------------------------------------------------------------------------------

/// The compressed record sections of a dataset's batches.
fn compressed_sections(d: &Dataset) -> Vec<Bytes> {
    Batches::new(d.wire.clone(), DecodeOptions::default())
        .map(|b| match b.expect("batch") {
            Batch::V2(b) => b.raw_records(),
            Batch::Legacy(_) => unreachable!("magic 2 only"),
        })
        .collect()
}

fn read_all(mut reader: impl Read, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    reader.read_to_end(&mut out).expect("decompress");
    out
}

/// Decompresses a xerial snappy-java stream with `snap` alone (the framing is a few lines).
fn snap_xerial(input: &[u8], capacity: usize) -> Vec<u8> {
    let mut out = vec![0u8; capacity];
    let mut written = 0;
    let mut rest = &input[16..];
    let mut decoder = snap::raw::Decoder::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let block = &rest[4..4 + len];
        written += decoder.decompress(block, &mut out[written..]).unwrap();
        rest = &rest[4 + len..];
    }
    out.truncate(written);
    out
}

fn ruzstd_all(input: &[u8], capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    ruzstd::decoding::FrameDecoder::new()
        .decode_all_to_vec(input, &mut out)
        .expect("ruzstd");
    out
}

/// A codec crate's own decompression of one section, given its uncompressed size.
type Decompressor = fn(&[u8], usize) -> Vec<u8>;

/// The codec crates' own decompressors for `codec`, by name. flate2's backend is whatever the
/// build unifies to: zlib-rs, which kseek-protocol's `gzip` feature selects.
fn own_decompressors(codec: Compression) -> Vec<(&'static str, Decompressor)> {
    match codec {
        Compression::None => vec![],
        Compression::Gzip => vec![("flate2", |i, n| {
            read_all(flate2::bufread::GzDecoder::new(i), n)
        })],
        Compression::Snappy => vec![("snap", snap_xerial)],
        Compression::Lz4 => vec![
            ("lz4_flex-frame", |i, n| {
                read_all(lz4_flex::frame::FrameDecoder::new(i), n)
            }),
            ("lz4-c", |i, n| read_all(lz4::Decoder::new(i).unwrap(), n)),
        ],
        Compression::Zstd => vec![
            ("ruzstd", ruzstd_all),
            ("zstd-c", |i, n| zstd::bulk::decompress(i, n).unwrap()),
        ],
    }
}

fn codec_benches(c: &mut Criterion<Clock>) {
    if callgrind() {
        return;
    }
    let shapes: &[(usize, usize, usize)] = match mode() {
        Mode::Test => &[(KIB, MIB, MIB)],
        Mode::Quick => &[(KIB, MIB, 2 * MIB)],
        Mode::Full => &[
            (100, MIB, 8 * MIB),
            (KIB, MIB, 8 * MIB),
            (KIB, 16 * KIB, 8 * MIB),
        ],
    };
    for &(value_size, batch_size, total) in shapes {
        for d in datasets(value_size, batch_size, total, &CODECS[1..]) {
            let compressed = compressed_sections(&d);
            let sizes: Vec<usize> = d.sections.iter().map(|s| s.len()).collect();
            let section_bytes: usize = sizes.iter().sum();
            // Everyone must produce the same bytes.
            for (input, expected) in compressed.iter().zip(&d.sections) {
                let ours = compression::decompress(d.codec, input, 64 * MIB).unwrap();
                assert_eq!(&ours, expected, "{}", d.name);
                for (name, f) in own_decompressors(d.codec) {
                    assert_eq!(&f(input, expected.len())[..], &expected[..], "{name}");
                }
            }

            let mut group = c.benchmark_group(format!("codec/{}", d.name));
            configure(&mut group);
            group.throughput(Throughput::Bytes(section_bytes as u64));
            group.bench_function("kseek-decompress", |b| {
                b.iter(|| {
                    for input in &compressed {
                        black_box(compression::decompress(d.codec, input, 64 * MIB).unwrap());
                    }
                })
            });
            for (name, f) in own_decompressors(d.codec) {
                group.bench_function(name, |b| {
                    b.iter(|| {
                        for (input, &n) in compressed.iter().zip(&sizes) {
                            black_box(f(input, n));
                        }
                    })
                });
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = decode_benches, large_buffer_bench, codec_benches
}
criterion_main!(benches);

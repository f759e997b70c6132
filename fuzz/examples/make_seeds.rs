//! Writes the seed corpus under `fuzz/seeds/` from the golden frames captured from real brokers
//! (`protocol/tests/data/*/index.tsv`) and from record batches built with kseek's encoder.
//!
//! Run from `fuzz/`: `cargo run --example make_seeds`. Seeds are named by a hash of their
//! content, so running it again adds nothing twice.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::Path;

use bytes::Bytes;
use kseek_protocol::messages::fetch::FetchResponse;
use kseek_protocol::negotiate::SUPPORTED_APIS;
use kseek_protocol::records::{
    encode_legacy_message_set, Compression, ControlRecordType, LegacyMessage, NewRecord,
    RecordBatchBuilder,
};
use kseek_protocol::{decode_exact, ApiKey, RequestHeader, ResponseHeader};

fn target_of(api: ApiKey) -> Option<&'static str> {
    Some(match api {
        ApiKey::API_VERSIONS => "api_versions",
        ApiKey::METADATA => "metadata",
        ApiKey::LIST_OFFSETS => "list_offsets",
        ApiKey::FETCH => "fetch",
        ApiKey::OFFSET_COMMIT => "offset_commit",
        ApiKey::OFFSET_FETCH => "offset_fetch",
        ApiKey::FIND_COORDINATOR => "find_coordinator",
        _ => return None,
    })
}

fn write_seed(target: &str, data: &[u8]) {
    let dir = Path::new("seeds").join(target);
    fs::create_dir_all(&dir).unwrap();
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    fs::write(dir.join(format!("{:016x}", h.finish())), data).unwrap();
}

fn main() {
    let data = Path::new("../protocol/tests/data");
    let mut frames = 0;
    for capture in fs::read_dir(data).unwrap() {
        let capture = capture.unwrap().path();
        let Ok(index) = fs::read_to_string(capture.join("index.tsv")) else {
            continue;
        };
        for line in index.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            let (key, version, req_hv, resp_hv) = (
                ApiKey(f[1].parse().unwrap()),
                f[3].parse::<i16>().unwrap(),
                f[4].parse::<i16>().unwrap(),
                f[5].parse::<i16>().unwrap(),
            );
            let (Some(target), Some(api)) = (
                target_of(key),
                SUPPORTED_APIS.iter().find(|a| a.api_key == key),
            ) else {
                continue;
            };
            if !api.versions.contains(version) {
                continue;
            }
            let selector = ((version - api.versions.min) as u8) << 1;
            let mut request = Bytes::from(fs::read(capture.join(f[7])).unwrap());
            RequestHeader::decode(&mut request, req_hv).unwrap();
            let mut response = Bytes::from(fs::read(capture.join(f[8])).unwrap());
            ResponseHeader::decode(&mut response, resp_hv).unwrap();
            write_seed(target, &[&[selector][..], &request].concat());
            write_seed(target, &[&[selector | 1][..], &response].concat());
            frames += 2;
            // Header-framed bytes for the frame target: size prefix + whole frame.
            let whole = fs::read(capture.join(f[8])).unwrap();
            let mut framed = vec![255u8];
            framed.extend_from_slice(&(whole.len() as i32).to_be_bytes());
            framed.extend_from_slice(&whole);
            write_seed("frame", &framed);
            // Records of real Fetch responses feed the records target.
            if key == ApiKey::FETCH {
                let fetch: FetchResponse = decode_exact(response, version).unwrap();
                for p in fetch.responses.iter().flat_map(|t| &t.partitions) {
                    if let Some(records) = p.records.as_ref().filter(|r| !r.is_empty()) {
                        write_seed("records", &[&[0u8, 8, 0][..], records].concat());
                    }
                }
            }
        }
    }

    // Built batches: every codec, a transaction with its markers, and legacy message sets.
    let mut batches = 0;
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let batch = RecordBatchBuilder::new(0, 1_700_000_000_000)
            .compression(codec)
            .record(NewRecord::new(0, 0).key("k").value("v").header("h", "x"))
            .record(NewRecord::new(2, 7).value("gap before me"))
            .build()
            .unwrap();
        write_seed("records", &[&[0u8, 8, 0][..], &batch].concat());
        batches += 1;
    }
    let txn = RecordBatchBuilder::new(0, 1_700_000_000_000)
        .producer(1, 0, 0)
        .transactional(true)
        .record(NewRecord::new(0, 0).value("aborted"))
        .build()
        .unwrap();
    let marker =
        RecordBatchBuilder::control_marker(1, 1_700_000_000_001, 1, 0, ControlRecordType::ABORT, 0)
            .build()
            .unwrap();
    write_seed("records", &[&[0x12u8, 8, 0][..], &txn, &marker].concat());
    for (magic, codec) in [(0, Compression::None), (1, Compression::None), (1, Compression::Gzip), (0, Compression::Gzip)] {
        let messages = [
            LegacyMessage { offset: 0, timestamp: 1_700_000_000_000, key: Some(Bytes::from_static(b"k")), value: Some(Bytes::from_static(b"v")) },
            LegacyMessage { offset: 1, timestamp: 1_700_000_000_001, key: None, value: Some(Bytes::from_static(b"w")) },
        ];
        let set = encode_legacy_message_set(magic, codec, None, &messages).unwrap();
        write_seed("records", &[&[0u8, 8, 0][..], &set].concat());
        batches += 1;
    }
    println!("seeds: {frames} message bodies from golden frames, {batches} built batches");
}

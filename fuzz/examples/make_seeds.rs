//! Writes the seed corpus under `fuzz/seeds/` from the golden frames captured from real brokers
//! (`protocol/tests/data/*/index.tsv` and `protocol/tests/data/sasl/*/index.tsv`) and from record
//! batches built with kseek's encoder.
//!
//! Run from `fuzz/`: `cargo run --example make_seeds`. Seeds are named by a hash of their
//! content, so running it again adds nothing twice.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::Path;

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::describe_configs::DescribeConfigsRequest;
use kseek_protocol::messages::fetch::FetchResponse;
use kseek_protocol::messages::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kseek_protocol::messages::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use kseek_protocol::negotiate::SUPPORTED_APIS;
use kseek_protocol::records::{
    encode_legacy_message_set, Compression, ControlRecordType, NewRecord, OwnedRecord,
    RecordBatchBuilder,
};
use kseek_protocol::{decode_exact, ApiKey, Message, RequestHeader, ResponseHeader};

fn target_of(api: ApiKey) -> Option<&'static str> {
    Some(match api {
        ApiKey::API_VERSIONS => "api_versions",
        ApiKey::METADATA => "metadata",
        ApiKey::LIST_OFFSETS => "list_offsets",
        ApiKey::FETCH => "fetch",
        ApiKey::OFFSET_COMMIT => "offset_commit",
        ApiKey::OFFSET_FETCH => "offset_fetch",
        ApiKey::FIND_COORDINATOR => "find_coordinator",
        ApiKey::SASL_HANDSHAKE => "sasl_handshake",
        ApiKey::SASL_AUTHENTICATE => "sasl_authenticate",
        ApiKey::DESCRIBE_CONFIGS => "describe_configs",
        _ => return None,
    })
}

/// A message target's input: the selector byte, then `m` encoded at `version`.
fn seed<M: Message>(selector: i16, m: &M, version: i16) -> Vec<u8> {
    let mut body = BytesMut::new();
    m.encode(&mut body, version).unwrap();
    [&[selector as u8][..], &body].concat()
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
    let mut captures: Vec<_> = fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // The SASL logins are one level deeper: protocol/tests/data/sasl/<broker>/.
    captures.extend(
        fs::read_dir(data.join("sasl"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    for capture in captures {
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
            // DescribeConfigs is not negotiated up front (not in SUPPORTED_APIS).
            let versions = match SUPPORTED_APIS.iter().find(|a| a.api_key == key) {
                Some(api) => api.versions,
                None if key == ApiKey::DESCRIBE_CONFIGS => DescribeConfigsRequest::VERSIONS,
                None => continue,
            };
            let Some(target) = target_of(key) else {
                continue;
            };
            if !versions.contains(version) {
                continue;
            }
            let selector = ((version - versions.min) as u8) << 1;
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
    for (magic, codec) in [
        (0, Compression::None),
        (1, Compression::None),
        (1, Compression::Gzip),
        (0, Compression::Gzip),
    ] {
        let messages = [
            OwnedRecord {
                offset: 0,
                timestamp: 1_700_000_000_000,
                key: Some(Bytes::from_static(b"k")),
                value: Some(Bytes::from_static(b"v")),
                headers: Vec::new(),
            },
            OwnedRecord {
                offset: 1,
                timestamp: 1_700_000_000_001,
                key: None,
                value: Some(Bytes::from_static(b"w")),
                headers: Vec::new(),
            },
        ];
        let set = encode_legacy_message_set(magic, codec, None, &messages).unwrap();
        write_seed("records", &[&[0u8, 8, 0][..], &set].concat());
        batches += 1;
    }
    // SASL messages at the versions the Java client doesn't send (SaslHandshake v0,
    // SaslAuthenticate v0 and v1: session lifetime only in v1+).
    let mut sasl = 0;
    let handshake = SaslHandshakeRequest {
        mechanism: "SCRAM-SHA-512".into(),
    };
    let mechanisms = SaslHandshakeResponse {
        error_code: 33,
        mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-512".into()],
    };
    let auth = SaslAuthenticateRequest {
        auth_bytes: Bytes::from_static(b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"),
        ..Default::default()
    };
    let answer = SaslAuthenticateResponse {
        error_code: 58,
        error_message: Some("Authentication failed".into()),
        auth_bytes: Bytes::from_static(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
        session_lifetime_ms: 3_600_000,
        ..Default::default()
    };
    for version in 0..=1i16 {
        write_seed("sasl_handshake", &seed(version << 1, &handshake, version));
        write_seed(
            "sasl_handshake",
            &seed(version << 1 | 1, &mechanisms, version),
        );
        write_seed("sasl_authenticate", &seed(version << 1, &auth, version));
        write_seed(
            "sasl_authenticate",
            &seed(version << 1 | 1, &answer, version),
        );
        sasl += 4;
    }
    println!(
        "seeds: {frames} message bodies from golden frames, {batches} built batches, \
         {sasl} built SASL messages"
    );
}

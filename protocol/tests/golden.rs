//! Golden frames: real traffic between Kafka's Java client and real Kafka brokers, recorded by
//! `tests/golden/capture` (see `tests/data/README.md`).
//!
//! Every recorded request and response has its header decoded at the header version the index
//! names (which must also be the one this crate computes), then its body decoded with the
//! crate's type for that API and version, re-encoded, and compared byte for byte with what the
//! wire carried. The capture wrote fixed data, so decoded values are checked too: topic names,
//! the offsets ListOffsets answered, the committed offset and its metadata, the compression
//! codec of each fetched batch, the topic configuration DescribeConfigs described.
//!
//! A round trip alone can't catch an encoder and decoder that are wrong in the same way; bytes
//! written by Kafka itself can.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use kseek_protocol::messages::describe_configs::{
    ConfigResourceType, ConfigSource, DescribeConfigsRequest, DescribeConfigsResponse,
};
use kseek_protocol::messages::fetch::{FetchRequest, FetchResponse};
use kseek_protocol::messages::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use kseek_protocol::messages::list_offsets::{ListOffsetsRequest, ListOffsetsResponse};
use kseek_protocol::messages::metadata::{MetadataRequest, MetadataResponse};
use kseek_protocol::messages::offset_commit::{OffsetCommitRequest, OffsetCommitResponse};
use kseek_protocol::messages::offset_fetch::{OffsetFetchRequest, OffsetFetchResponse};
use kseek_protocol::negotiate::{decode_api_versions_response, ApiVersionsReply};
use kseek_protocol::records::{
    Batch, Batches, Compression, DecodeOptions, OwnedHeader, OwnedRecord,
};
use kseek_protocol::{
    decode_exact, ApiKey, Error, ErrorCode, Message, Request, RequestHeader, ResponseHeader, Uuid,
};

/// The timestamp of the first record of every golden topic (see `tests/golden/Capture.java`).
const T0: i64 = 1_700_000_000_000;
/// The codecs the capture wrote with, and their id in a batch's attributes.
const CODECS: [(&str, i16); 5] = [
    ("none", 0),
    ("gzip", 1),
    ("snappy", 2),
    ("lz4", 3),
    ("zstd", 4),
];
/// The capture directories under `tests/data`: broker version, and client version when it
/// isn't 4.4.0.
const CAPTURES: [&str; 5] = [
    "2.8.2",
    "3.9.2",
    "3.9.2-client-3.9.2",
    "4.4.0",
    "4.4.0-client-3.9.2",
];
/// The consumer group of the capture (classic protocol).
const GROUP: &str = "golden-group";
/// The consumer group of the capture with the KIP-848 consumer protocol (4.4 client and
/// broker only), which commits and fetches offsets by topic id.
const GROUP_848: &str = "golden-group-848";
/// The (API, version) pairs a capture may hold beyond this crate's versions: Kafka 4.4's
/// client asks for ApiVersions v5, which the 4.2.1 schemas this crate follows don't define.
const BEYOND_OUR_VERSIONS: [(i16, i16); 1] = [(18, 5)];

/// One recorded request and its response.
struct Exchange {
    /// Where it came from, for messages: directory and sequence number.
    name: String,
    api_key: i16,
    api_version: i16,
    request_header_version: i16,
    response_header_version: i16,
    /// The client id of the capture phase (`golden-fetch-gzip`, `golden-group`, ...).
    client_id: String,
    request: Bytes,
    response: Bytes,
}

/// What the checks saw in one capture directory, checked against expectations at the end.
#[derive(Default)]
struct Seen {
    /// (API key, version) of every exchange.
    apis: BTreeSet<(i16, i16)>,
    /// Topic names some Metadata response listed.
    metadata_topics: BTreeSet<String>,
    /// ListOffsets: (timestamp asked, offset answered, timestamp answered).
    list_offsets: BTreeSet<(i64, i64, i64)>,
    /// Codecs of the fetched batches, by phase codec name.
    fetched_codecs: BTreeMap<String, i16>,
    /// Whether some Fetch response carried a partition with no record bytes.
    empty_fetch: bool,
    /// Topic names by topic id, from the Metadata responses.
    topic_names: BTreeMap<Uuid, String>,
    /// Committed offsets some OffsetFetch response returned for golden-none/0: (group, offset,
    /// metadata).
    fetched_commits: BTreeSet<(String, i64, Option<String>)>,
    /// Successful OffsetCommit exchanges, by group.
    commits: BTreeMap<String, usize>,
    /// FindCoordinator answers that named the coordinator.
    coordinators_found: usize,
    /// DescribeConfigs answers: (topic, error code).
    described_configs: BTreeSet<(String, i16)>,
    /// Exchanges left undecoded because their version is beyond this crate's range.
    beyond: Vec<String>,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The capture directories (each holds an `index.tsv`).
fn capture_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(data_dir())
        .expect("protocol/tests/data exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.join("index.tsv").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> Vec<Exchange> {
    let index = fs::read_to_string(dir.join("index.tsv")).expect("index.tsv is readable");
    let label = dir
        .file_name()
        .expect("named")
        .to_string_lossy()
        .into_owned();
    let mut out = Vec::new();
    for line in index
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 9, "{label}: index line {line:?}");
        let num = |s: &str| -> i16 { s.parse().expect("a number in index.tsv") };
        let read = |name: &str| Bytes::from(fs::read(dir.join(name)).expect("frame file"));
        out.push(Exchange {
            name: format!("{label}/{}", f[7].trim_end_matches("-request.bin")),
            api_key: num(f[1]),
            api_version: num(f[3]),
            request_header_version: num(f[4]),
            response_header_version: num(f[5]),
            client_id: f[6].to_owned(),
            request: read(f[7]),
            response: read(f[8]),
        });
    }
    out
}

/// Decodes `body` as `M` at `version`, re-encodes it and asserts the bytes are the same.
/// Returns `None`, after checking that decoding says so, for a version beyond `M::VERSIONS`.
fn round_trip<M: Message + std::fmt::Debug>(name: &str, body: &Bytes, version: i16) -> Option<M> {
    if !M::VERSIONS.contains(version) {
        match decode_exact::<M>(body.clone(), version) {
            Err(Error::UnsupportedVersion { .. }) => return None,
            other => panic!(
                "{name}: {} v{version} outside our range: {other:?}",
                M::NAME
            ),
        }
    }
    let msg = decode_exact::<M>(body.clone(), version)
        .unwrap_or_else(|e| panic!("{name}: decoding {} v{version}: {e}", M::NAME));
    let mut out = BytesMut::new();
    msg.encode(&mut out, version)
        .unwrap_or_else(|e| panic!("{name}: encoding {} v{version}: {e}", M::NAME));
    assert!(
        out[..] == body[..],
        "{name}: {} v{version} re-encoded differs\n wire: {:02x?}\n ours: {:02x?}\n decoded: {msg:?}",
        M::NAME,
        &body[..],
        &out[..]
    );
    Some(msg)
}

/// Decodes and re-encodes both headers; returns the request and response bodies.
fn headers(x: &Exchange) -> (Bytes, Bytes) {
    let mut req = x.request.clone();
    let h = RequestHeader::decode(&mut req, x.request_header_version)
        .unwrap_or_else(|e| panic!("{}: request header: {e}", x.name));
    assert_eq!(
        (h.api_key, h.api_version),
        (x.api_key, x.api_version),
        "{}",
        x.name
    );
    assert_eq!(
        h.client_id.as_deref(),
        Some(x.client_id.as_str()),
        "{}",
        x.name
    );
    let mut out = BytesMut::new();
    h.encode(&mut out, x.request_header_version)
        .expect("header encodes");
    assert_eq!(
        &out[..],
        &x.request[..out.len()],
        "{}: request header bytes",
        x.name
    );

    let mut resp = x.response.clone();
    let r = ResponseHeader::decode(&mut resp, x.response_header_version)
        .unwrap_or_else(|e| panic!("{}: response header: {e}", x.name));
    assert_eq!(
        r.correlation_id, h.correlation_id,
        "{}: correlation id",
        x.name
    );
    let mut out = BytesMut::new();
    r.encode(&mut out, x.response_header_version)
        .expect("header encodes");
    assert_eq!(
        &out[..],
        &x.response[..out.len()],
        "{}: response header bytes",
        x.name
    );
    (req, resp)
}

/// Asserts the index's header versions are the ones the crate computes for `R`.
fn check_header_versions<R: Request>(x: &Exchange) {
    assert_eq!(
        (x.request_header_version, x.response_header_version),
        (
            R::request_header_version(x.api_version),
            R::response_header_version(x.api_version)
        ),
        "{}: header versions",
        x.name
    );
}

/// Round-trips both bodies of an exchange of request type `R` (whose response type must be
/// `S`, so the test also pins the crate's pairing of requests and responses).
fn pair<R, S>(x: &Exchange, seen: &mut Seen) -> Option<(R, S)>
where
    R: Request<Response = S> + std::fmt::Debug,
    S: Message + std::fmt::Debug,
{
    check_header_versions::<R>(x);
    let (req, resp) = headers(x);
    let request = round_trip::<R>(&x.name, &req, x.api_version);
    let response = round_trip::<S>(&x.name, &resp, x.api_version);
    match (request, response) {
        (Some(a), Some(b)) => Some((a, b)),
        (None, _) | (_, None) => {
            assert!(
                BEYOND_OUR_VERSIONS.contains(&(x.api_key, x.api_version)),
                "{}: api {} v{} is beyond our versions",
                x.name,
                x.api_key,
                x.api_version
            );
            seen.beyond.push(x.name.clone());
            None
        }
    }
}

fn check_api_versions(x: &Exchange, seen: &mut Seen) {
    if let Some((req, resp)) = pair::<ApiVersionsRequest, ApiVersionsResponse>(x, seen) {
        assert_eq!(req.client_software_name, "apache-kafka-java", "{}", x.name);
        assert_eq!(resp.error_code, 0, "{}", x.name);
        for api in [1, 2, 3, 8, 9, 10, 18] {
            let range = resp.range_of(ApiKey(api));
            assert!(range.is_some(), "{}: broker lists API {api}", x.name);
        }
        // A KRaft broker from 3.3 on always has a finalized metadata.version (tagged fields,
        // v3+); 2.8's early-access KRaft finalizes no feature (epoch -1).
        let has = |name: &str| resp.finalized_features.iter().any(|f| f.name == name);
        if x.name.starts_with("2.") {
            assert_eq!(resp.finalized_features_epoch, -1, "{}", x.name);
            assert!(resp.finalized_features.is_empty(), "{}: {resp:?}", x.name);
        } else {
            assert!(resp.finalized_features_epoch >= 0, "{}", x.name);
            assert!(has("metadata.version"), "{}: {resp:?}", x.name);
        }
        return;
    }
    // A version beyond ours: a broker that knows it answers in that version, one that doesn't
    // refuses with a v0 body (KIP-511), which the negotiation must turn into a retry.
    let (_, body) = headers(x);
    match decode_api_versions_response(body.clone(), x.api_version) {
        Ok(ApiVersionsReply::Retry { version }) => {
            assert!(version < x.api_version, "{}", x.name);
            let v0: ApiVersionsResponse =
                round_trip(&x.name, &body, 0).expect("a v0 refusal decodes");
            assert_eq!(
                v0.error_code,
                ErrorCode::UNSUPPORTED_VERSION.0,
                "{}",
                x.name
            );
            let ours = v0
                .range_of(ApiKey::API_VERSIONS)
                .expect("refusal carries the range");
            assert_eq!(
                version,
                ours.max.min(ApiVersionsRequest::VERSIONS.max),
                "{}",
                x.name
            );
        }
        Ok(ApiVersionsReply::Response(r)) => {
            panic!("{}: decoded beyond our versions: {r:?}", x.name)
        }
        Err(_) => {} // A real answer at a version we don't implement.
    }
}

fn check_metadata(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<MetadataRequest, MetadataResponse>(x, seen) else {
        return;
    };
    for t in req.topics.iter().flatten() {
        let name = t.name.as_deref().unwrap_or("");
        assert!(
            name.starts_with("golden-") || name.is_empty(),
            "{}: {name}",
            x.name
        );
    }
    assert_eq!(resp.brokers.len(), 1, "{}: one broker", x.name);
    assert_eq!(resp.brokers[0].node_id, 1, "{}", x.name);
    assert_eq!(resp.brokers[0].host, "127.0.0.1", "{}", x.name);
    assert!(resp.brokers[0].port > 0, "{}", x.name);
    assert!(
        resp.cluster_id.as_deref().is_some_and(|c| !c.is_empty()),
        "{}",
        x.name
    );
    for t in &resp.topics {
        let Some(name) = t.name.as_deref() else {
            continue;
        };
        if t.error_code == 0 && name.starts_with("golden-") {
            assert_eq!(t.partitions.len(), 1, "{}: {name}", x.name);
            assert_eq!(t.partitions[0].leader_id, 1, "{}: {name}", x.name);
            if x.api_version >= 10 {
                assert!(!t.topic_id.is_zero(), "{}: {name} has an id", x.name);
            }
            seen.metadata_topics.insert(name.to_owned());
            if !t.topic_id.is_zero() {
                seen.topic_names.insert(t.topic_id, name.to_owned());
            }
        }
    }
}

fn check_list_offsets(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<ListOffsetsRequest, ListOffsetsResponse>(x, seen) else {
        return;
    };
    assert_eq!(req.replica_id, -1, "{}: a consumer asks", x.name);
    let asked: Vec<(&str, i32, i64)> = req
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.as_str(), p.partition_index, p.timestamp))
        })
        .collect();
    let answered: Vec<(&str, i32, &_)> = resp
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.as_str(), p.partition_index, p))
        })
        .collect();
    assert_eq!(asked.len(), answered.len(), "{}", x.name);
    for ((topic, partition, timestamp), (rtopic, rpartition, p)) in asked.into_iter().zip(answered)
    {
        assert_eq!((topic, partition), (rtopic, rpartition), "{}", x.name);
        assert_eq!(p.error_code, 0, "{}", x.name);
        if topic == "golden-none" {
            seen.list_offsets.insert((timestamp, p.offset, p.timestamp));
        }
    }
}

/// The compression codec in the attributes of the first batch of `records`.
fn batch_codec(records: &[u8]) -> i16 {
    // baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1, crc 4, then attributes.
    assert!(records.len() >= 61, "a whole batch header");
    assert_eq!(records[16], 2, "magic 2");
    i16::from_be_bytes([records[21], records[22]]) & 0x7
}

/// Whether this build can decompress `codec` (each codec is a cargo feature).
fn codec_enabled(codec: &str) -> bool {
    match codec {
        "gzip" => cfg!(feature = "gzip"),
        "snappy" => cfg!(feature = "snappy"),
        "lz4" => cfg!(feature = "lz4"),
        "zstd" => cfg!(feature = "zstd"),
        _ => true,
    }
}

/// The records `Capture.java` wrote to `golden-<codec>`.
fn expected_records(codec: &str) -> Vec<OwnedRecord> {
    let b = |s: &str| Bytes::from(s.to_owned());
    let header = |k: &str, v: Option<&str>| OwnedHeader {
        key: b(k),
        value: v.map(b),
    };
    vec![
        OwnedRecord {
            offset: 0,
            timestamp: T0,
            key: Some(b("key-0")),
            value: Some(b(&format!("value-{codec}-0"))),
            headers: vec![header("trace", Some("t0"))],
        },
        OwnedRecord {
            offset: 1,
            timestamp: T0 + 1000,
            key: None,
            value: Some(b(&format!("value-{codec}-1"))),
            headers: vec![],
        },
        OwnedRecord {
            offset: 2,
            timestamp: T0 + 2000,
            key: Some(b("key-2")),
            value: Some(b(&format!("value-{codec}-2"))),
            headers: vec![header("a", Some("1")), header("b", None)],
        },
    ]
}

/// Decodes the fetched batch with [`kseek_protocol::records`] and compares its records with
/// what the capture wrote.
fn check_records(name: &str, codec: &str, records: Bytes) {
    let batches: Vec<Batch> = Batches::new(records, DecodeOptions::default())
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{name}: batches: {e}"));
    assert_eq!(batches.len(), 1, "{name}: one batch");
    let batch = &batches[0];
    let compression = match codec {
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => Compression::None,
    };
    assert_eq!(batch.compression(), compression, "{name}");
    assert_eq!(batch.max_timestamp(), T0 + 2000, "{name}");
    let decoded = batch
        .records()
        .unwrap_or_else(|e| panic!("{name}: records: {e}"));
    let got: Vec<OwnedRecord> = decoded
        .iter()
        .map(|r| r.map(|r| r.to_owned()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{name}: record: {e}"));
    assert_eq!(got, expected_records(codec), "{name}: records");
}

fn check_fetch(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<FetchRequest, FetchResponse>(x, seen) else {
        return;
    };
    assert_eq!(req.replica_id, -1, "{}", x.name);
    assert_eq!(resp.error_code, 0, "{}", x.name);
    let codec = x
        .client_id
        .strip_prefix("golden-fetch-")
        .expect("a fetch phase");
    for t in &req.topics {
        if x.api_version >= 13 {
            assert!(!t.topic_id.is_zero(), "{}: topic id", x.name);
        } else {
            assert!(
                t.topic.starts_with("golden-"),
                "{}: topic {}",
                x.name,
                t.topic
            );
        }
    }
    for t in &resp.responses {
        for p in &t.partitions {
            assert_eq!(p.error_code, 0, "{}", x.name);
            assert_eq!(p.high_watermark, 3, "{}: three records per topic", x.name);
            let records = p.records.as_deref().unwrap_or(&[]);
            if records.is_empty() {
                seen.empty_fetch = true;
                continue;
            }
            let id = batch_codec(records);
            let expected = CODECS.iter().find(|(c, _)| *c == codec).map(|(_, id)| *id);
            assert_eq!(Some(id), expected, "{}: codec of the batch", x.name);
            if codec == "none" {
                let needle = b"value-none-1";
                assert!(
                    records.windows(needle.len()).any(|w| w == needle),
                    "{}",
                    x.name
                );
            }
            if codec_enabled(codec) {
                check_records(&x.name, codec, p.records.clone().unwrap_or_default());
            }
            seen.fetched_codecs.insert(codec.to_owned(), id);
        }
    }
}

/// The name of a topic an OffsetCommit or OffsetFetch names by `name` (before v10) or by
/// `topic_id` (v10+, resolved through the Metadata responses of the same capture).
fn topic_name(x: &Exchange, seen: &Seen, name: &str, topic_id: Uuid) -> String {
    if x.api_version >= 10 {
        assert!(name.is_empty(), "{}: no name with a topic id", x.name);
        seen.topic_names
            .get(&topic_id)
            .unwrap_or_else(|| panic!("{}: unknown topic id {topic_id:?}", x.name))
            .clone()
    } else {
        assert!(topic_id.is_zero(), "{}: no topic id before v10", x.name);
        name.to_owned()
    }
}

/// Whether `group` is one of the capture's groups.
fn is_golden_group(group: &str) -> bool {
    group == GROUP || group == GROUP_848
}

fn check_offset_commit(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<OffsetCommitRequest, OffsetCommitResponse>(x, seen) else {
        return;
    };
    assert!(is_golden_group(&req.group_id), "{}", x.name);
    assert_eq!(req.topics.len(), 1, "{}", x.name);
    let t = &req.topics[0];
    let topic = topic_name(x, seen, &t.name, t.topic_id);
    assert_eq!(topic, "golden-none", "{}", x.name);
    assert_eq!(t.partitions.len(), 1, "{}", x.name);
    let p = &t.partitions[0];
    assert_eq!(p.partition_index, 0, "{}", x.name);
    assert_eq!(p.committed_offset, 2, "{}", x.name);
    assert_eq!(
        p.committed_metadata.as_deref(),
        Some("golden-meta"),
        "{}",
        x.name
    );
    assert_eq!(resp.topics.len(), 1, "{}", x.name);
    assert_eq!(resp.topics[0].partitions.len(), 1, "{}", x.name);
    let rt = &resp.topics[0];
    assert_eq!(
        topic_name(x, seen, &rt.name, rt.topic_id),
        topic,
        "{}",
        x.name
    );
    let r = &rt.partitions[0];
    assert_eq!((r.partition_index, r.error_code), (0, 0), "{}", x.name);
    *seen.commits.entry(req.group_id.clone()).or_default() += 1;
}

/// Errors a group coordinator answers while it is still starting; the Java client retries.
fn retriable_group_error(code: i16) -> bool {
    [
        ErrorCode::COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode::COORDINATOR_NOT_AVAILABLE,
        ErrorCode::NOT_COORDINATOR,
    ]
    .iter()
    .any(|e| e.0 == code)
}

/// One partition of an OffsetFetch answer: topic, partition, error code, offset, metadata.
struct CommittedOffset(String, i32, i16, i64, Option<String>);

fn check_offset_fetch(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<OffsetFetchRequest, OffsetFetchResponse>(x, seen) else {
        return;
    };
    let mut committed = Vec::new();
    // Versions 8+ batch groups; before, one group at the top level.
    let (group_id, error_code) = if x.api_version >= 8 {
        assert_eq!(req.groups.len(), 1, "{}", x.name);
        assert!(is_golden_group(&req.groups[0].group_id), "{}", x.name);
        assert_eq!(resp.groups.len(), 1, "{}", x.name);
        let g = &resp.groups[0];
        for t in &g.topics {
            let topic = topic_name(x, seen, &t.name, t.topic_id);
            for p in &t.partitions {
                committed.push(CommittedOffset(
                    topic.clone(),
                    p.partition_index,
                    p.error_code,
                    p.committed_offset,
                    p.metadata.clone(),
                ));
            }
        }
        (g.group_id.as_str(), g.error_code)
    } else {
        for t in &resp.topics {
            for p in &t.partitions {
                committed.push(CommittedOffset(
                    t.name.clone(),
                    p.partition_index,
                    p.error_code,
                    p.committed_offset,
                    p.metadata.clone(),
                ));
            }
        }
        (req.group_id.as_str(), resp.error_code)
    };
    assert!(is_golden_group(group_id), "{}", x.name);
    if retriable_group_error(error_code) {
        return;
    }
    assert_eq!(error_code, 0, "{}", x.name);
    for CommittedOffset(topic, partition, error_code, offset, metadata) in committed {
        assert_eq!(error_code, 0, "{}", x.name);
        if topic == "golden-none" && partition == 0 {
            let key = (group_id.to_owned(), offset, metadata);
            seen.fetched_commits.insert(key);
        }
    }
}

fn check_find_coordinator(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<FindCoordinatorRequest, FindCoordinatorResponse>(x, seen) else {
        return;
    };
    assert_eq!(req.key_type, 0, "{}: a group coordinator", x.name);
    let answers: Vec<(&str, i16, i32, &str)> = if x.api_version >= 4 {
        assert_eq!(
            resp.coordinators.len(),
            req.coordinator_keys.len(),
            "{}",
            x.name
        );
        resp.coordinators
            .iter()
            .map(|c| (c.key.as_str(), c.error_code, c.node_id, c.host.as_str()))
            .collect()
    } else {
        vec![(
            req.key.as_str(),
            resp.error_code,
            resp.node_id,
            resp.host.as_str(),
        )]
    };
    for (key, error_code, node_id, host) in answers {
        assert!(is_golden_group(key), "{}", x.name);
        if error_code == ErrorCode::COORDINATOR_NOT_AVAILABLE.0 {
            // The first ask after start, while the offsets topic is being created.
            assert_eq!(node_id, -1, "{}", x.name);
            continue;
        }
        assert_eq!(
            (error_code, node_id, host),
            (0, 1, "127.0.0.1"),
            "{}",
            x.name
        );
        seen.coordinators_found += 1;
    }
}

/// Admin.describeConfigs of `golden-none` (with `retention.ms=-1` set on it at creation) and of
/// `golden-missing` (no such topic): every entry, no synonyms, no documentation.
fn check_describe_configs(x: &Exchange, seen: &mut Seen) {
    let Some((req, resp)) = pair::<DescribeConfigsRequest, DescribeConfigsResponse>(x, seen) else {
        return;
    };
    assert!(
        !req.include_synonyms && !req.include_documentation,
        "{}",
        x.name
    );
    assert_eq!(req.resources.len(), 1, "{}", x.name);
    let asked = &req.resources[0];
    assert_eq!(asked.resource_type, ConfigResourceType::TOPIC, "{}", x.name);
    assert_eq!(asked.configuration_keys, None, "{}: every key", x.name);
    let result = resp
        .result(ConfigResourceType::TOPIC, &asked.resource_name)
        .unwrap_or_else(|| panic!("{}: no result for {}", x.name, asked.resource_name));
    match asked.resource_name.as_str() {
        "golden-none" => {
            assert_eq!(result.error_code, 0, "{}", x.name);
            let entry = |name: &str| {
                result
                    .configs
                    .iter()
                    .find(|c| c.name == name)
                    .unwrap_or_else(|| panic!("{}: no {name}", x.name))
            };
            let retention = entry("retention.ms");
            assert_eq!(retention.value.as_deref(), Some("-1"), "{}", x.name);
            assert_eq!(
                retention.config_source,
                ConfigSource::TOPIC_CONFIG,
                "{}",
                x.name
            );
            let timestamps = entry("message.timestamp.type");
            assert_eq!(
                timestamps.value.as_deref(),
                Some("CreateTime"),
                "{}",
                x.name
            );
            assert_eq!(
                timestamps.config_source,
                ConfigSource::DEFAULT_CONFIG,
                "{}",
                x.name
            );
            for c in &result.configs {
                assert!(c.synonyms.is_empty(), "{}: {c:?}", x.name);
                assert_eq!(c.documentation, None, "{}: {c:?}", x.name);
            }
        }
        "golden-missing" => {
            assert_eq!(
                result.error_code,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0,
                "{}",
                x.name
            );
            assert!(result.configs.is_empty(), "{}", x.name);
        }
        other => panic!("{}: DescribeConfigs of {other}", x.name),
    }
    seen.described_configs
        .insert((asked.resource_name.clone(), result.error_code));
}

fn check_dir(dir: &Path) -> Seen {
    let exchanges = load(dir);
    assert!(!exchanges.is_empty(), "{}: no frames", dir.display());
    let mut seen = Seen::default();
    // Metadata first: the other checks resolve topic ids with it.
    let (metadata, others): (Vec<&Exchange>, Vec<&Exchange>) = exchanges
        .iter()
        .partition(|x| x.api_key == ApiKey::METADATA.0);
    for x in metadata.into_iter().chain(others) {
        seen.apis.insert((x.api_key, x.api_version));
        match ApiKey(x.api_key) {
            ApiKey::API_VERSIONS => check_api_versions(x, &mut seen),
            ApiKey::METADATA => check_metadata(x, &mut seen),
            ApiKey::LIST_OFFSETS => check_list_offsets(x, &mut seen),
            ApiKey::FETCH => check_fetch(x, &mut seen),
            ApiKey::OFFSET_COMMIT => check_offset_commit(x, &mut seen),
            ApiKey::OFFSET_FETCH => check_offset_fetch(x, &mut seen),
            ApiKey::FIND_COORDINATOR => check_find_coordinator(x, &mut seen),
            ApiKey::DESCRIBE_CONFIGS => check_describe_configs(x, &mut seen),
            other => panic!("{}: unexpected API {other:?}", x.name),
        }
    }
    seen
}

/// Checks every exchange of one capture directory, then that the capture saw everything the
/// capture driver did.
fn check_capture(label: &str) {
    let name = label;
    let seen = check_dir(&data_dir().join(label));
    eprintln!("{name}: API/versions {:?}", seen.apis);
    if !seen.beyond.is_empty() {
        eprintln!(
            "{name}: beyond our versions, checked as such: {:?}",
            seen.beyond
        );
    }

    let keys: BTreeSet<i16> = seen.apis.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        BTreeSet::from([1, 2, 3, 8, 9, 10, 18, 32]),
        "{name}: every API captured"
    );
    for (codec, _) in CODECS {
        let topic = format!("golden-{codec}");
        assert!(
            seen.metadata_topics.contains(&topic),
            "{name}: Metadata lists {topic}"
        );
    }
    let mut expected_offsets = BTreeSet::from([
        (-2, 0, -1),              // earliest
        (-1, 3, -1),              // latest
        (T0 + 500, 1, T0 + 1000), // first record at or after the time
        (-3, 2, T0 + 2000),       // max timestamp
    ]);
    if label.starts_with("2.") {
        // Kafka 2.8 predates ListOffsets v7, which carries the max-timestamp lookup.
        expected_offsets.remove(&(-3, 2, T0 + 2000));
    }
    assert_eq!(
        seen.list_offsets, expected_offsets,
        "{name}: ListOffsets answers"
    );
    let fetched: BTreeMap<String, i16> = CODECS
        .iter()
        .map(|(c, id)| ((*c).to_owned(), *id))
        .collect();
    assert_eq!(
        seen.fetched_codecs, fetched,
        "{name}: a batch fetched per codec"
    );
    assert!(seen.empty_fetch, "{name}: an empty fetch");
    // Kafka 4 brokers and clients also ran the group phase with the KIP-848 consumer protocol.
    let groups: &[&str] = if label == "4.4.0" {
        &[GROUP, GROUP_848]
    } else {
        &[GROUP]
    };
    let committed: Vec<&str> = seen.commits.keys().map(String::as_str).collect();
    assert_eq!(committed, groups, "{name}: groups that committed");
    for group in groups {
        assert_eq!(seen.commits[*group], 1, "{name}: {group} committed once");
        let fetched = |offset: i64, metadata: Option<&str>| {
            let key = ((*group).to_owned(), offset, metadata.map(str::to_owned));
            seen.fetched_commits.contains(&key)
        };
        assert!(
            fetched(-1, Some("")) || fetched(-1, None),
            "{name}: {group} had nothing committed before: {:?}",
            seen.fetched_commits
        );
        assert!(
            fetched(2, Some("golden-meta")),
            "{name}: {group}'s commit was fetched back: {:?}",
            seen.fetched_commits
        );
    }
    assert!(
        seen.coordinators_found > 0,
        "{name}: FindCoordinator found the group's"
    );
    assert_eq!(
        seen.described_configs,
        BTreeSet::from([
            (
                "golden-missing".to_owned(),
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
            ),
            ("golden-none".to_owned(), 0),
        ]),
        "{name}: DescribeConfigs answers"
    );
}

#[test]
fn every_capture_is_checked() {
    let labels: Vec<String> = capture_dirs()
        .iter()
        .map(|d| d.file_name().expect("named").to_string_lossy().into_owned())
        .collect();
    assert_eq!(labels, CAPTURES, "a test per capture directory");
}

#[test]
fn broker_2_8_2_client_4_4_0() {
    check_capture("2.8.2");
}

#[test]
fn broker_3_9_2_client_3_9_2() {
    check_capture("3.9.2-client-3.9.2");
}

#[test]
fn broker_3_9_2_client_4_4_0() {
    check_capture("3.9.2");
}

#[test]
fn broker_4_4_0_client_3_9_2() {
    check_capture("4.4.0-client-3.9.2");
}

#[test]
fn broker_4_4_0_client_4_4_0() {
    check_capture("4.4.0");
}

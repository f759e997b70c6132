//! Test helpers shared by the message codecs' unit tests.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use crate::error::Error;
use crate::messages::{decode_exact, Message};
use crate::primitives::{RawTaggedField, UnknownTaggedFields, Uuid};

pub(crate) fn check_bytes<M: Message + PartialEq + core::fmt::Debug>(m: &M, v: i16, bytes: &[u8]) {
    assert_eq!(encode(m, v), bytes, "encode v{v}");
    let d: M = decode_exact(Bytes::copy_from_slice(bytes), v).unwrap();
    assert_eq!(&d, m, "decode v{v}");
}

pub(crate) fn check_prefixes_and_trailing<M: Message + core::fmt::Debug>(m: &M, v: i16) {
    let full = encode(m, v);
    for n in 0..full.len() {
        assert!(
            decode_exact::<M>(Bytes::copy_from_slice(&full[..n]), v).is_err(),
            "prefix {n} of {} at v{v}",
            full.len()
        );
    }
    let mut more = full.clone();
    more.push(0);
    assert!(matches!(
        decode_exact::<M>(Bytes::from(more), v),
        Err(Error::TrailingBytes { count: 1, .. })
    ));
}

/// Decodes every captured frame of this API (protocol/tests/data, real Java client and
/// broker traffic) and checks that re-encoding reproduces the body byte for byte.
/// Returns how many request/response pairs were checked.
pub(crate) fn check_golden<Q: Message + core::fmt::Debug, S: Message + core::fmt::Debug>() -> usize
{
    use crate::header::{RequestHeader, ResponseHeader};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(index) = std::fs::read_to_string(dir.join("index.tsv")) else {
            continue;
        };
        for line in index.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            let (Ok(key), Ok(v), Ok(qh), Ok(sh)) = (
                f[1].parse::<i16>(),
                f[3].parse::<i16>(),
                f[4].parse::<i16>(),
                f[5].parse::<i16>(),
            ) else {
                panic!("bad index line {line:?}");
            };
            if key != Q::API_KEY.0 || !Q::VERSIONS.contains(v) {
                continue;
            }
            let mut q = Bytes::from(std::fs::read(dir.join(f[7])).unwrap());
            RequestHeader::decode(&mut q, qh).unwrap();
            let req: Q =
                decode_exact(q.clone(), v).unwrap_or_else(|e| panic!("{dir:?} {}: {e}", f[7]));
            assert_eq!(encode(&req, v), q.to_vec(), "{dir:?} {}", f[7]);
            let mut s = Bytes::from(std::fs::read(dir.join(f[8])).unwrap());
            ResponseHeader::decode(&mut s, sh).unwrap();
            let resp: S =
                decode_exact(s.clone(), v).unwrap_or_else(|e| panic!("{dir:?} {}: {e}", f[8]));
            assert_eq!(encode(&resp, v), s.to_vec(), "{dir:?} {}", f[8]);
            checked += 1;
        }
    }
    checked
}

pub(crate) fn encode<M: Message>(m: &M, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version).unwrap();
    buf.to_vec()
}

/// Asserts that `bytes` decodes to `value` at `version` and that `value` encodes to `bytes`.
pub(crate) fn assert_wire<M: Message + PartialEq + core::fmt::Debug>(
    value: &M,
    version: i16,
    bytes: &[u8],
) {
    let decoded: M = decode_exact(Bytes::copy_from_slice(bytes), version).unwrap();
    assert_eq!(&decoded, value);
    assert_eq!(encode(value, version), bytes);
}

/// Every strict prefix fails; one trailing byte is `TrailingBytes`.
pub(crate) fn assert_prefixes_fail<M: Message + core::fmt::Debug>(bytes: &[u8], version: i16) {
    for end in 0..bytes.len() {
        let r = decode_exact::<M>(Bytes::copy_from_slice(&bytes[..end]), version);
        assert!(r.is_err(), "prefix of {end} bytes decoded: {r:?}");
    }
    let mut longer = bytes.to_vec();
    longer.push(0);
    assert!(matches!(
        decode_exact::<M>(Bytes::from(longer), version),
        Err(Error::TrailingBytes { count: 1, .. })
    ));
}

pub(crate) fn arb_unknown_tags(flexible: bool) -> BoxedStrategy<UnknownTaggedFields> {
    if !flexible {
        return Just(UnknownTaggedFields::default()).boxed();
    }
    proptest::collection::btree_map(
        0u32..300,
        proptest::collection::vec(any::<u8>(), 0..6),
        0..3,
    )
    .prop_map(|m| {
        UnknownTaggedFields(
            m.into_iter()
                .map(|(tag, data)| RawTaggedField {
                    tag,
                    data: Bytes::from(data),
                })
                .collect(),
        )
    })
    .boxed()
}

pub(crate) fn check_round_trip<M: Message + PartialEq + core::fmt::Debug>(
    value: &M,
    version: i16,
) -> core::result::Result<(), TestCaseError> {
    let bytes = encode(value, version);
    let decoded: M = decode_exact(Bytes::from(bytes.clone()), version)
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&decoded, value);
    prop_assert_eq!(encode(&decoded, version), bytes);
    Ok(())
}

/// Runs `check_round_trip` on 256 generated values at each version in `versions`, so every
/// version is covered, not just those a random pick happens to hit.
pub(crate) fn round_trip_every_version<M, S>(
    versions: core::ops::RangeInclusive<i16>,
    strategy: impl Fn(i16) -> S,
) where
    M: Message + PartialEq + core::fmt::Debug,
    S: Strategy<Value = M>,
{
    for version in versions {
        let mut runner = proptest::test_runner::TestRunner::default();
        let result = runner.run(&strategy(version), |value| {
            check_round_trip(&value, version)
        });
        if let Err(e) = result {
            panic!("version {version}: {e}");
        }
    }
}

pub(crate) fn arb_uuid() -> impl Strategy<Value = Uuid> {
    any::<[u8; 16]>().prop_map(Uuid)
}

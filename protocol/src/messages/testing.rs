//! Test helpers shared by the message codecs' unit tests.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::error::Error;
use crate::messages::{decode_exact, Message};
use crate::primitives::{RawTaggedField, UnknownTaggedFields, Uuid};

/// What the message codecs' unit tests use, in one import:
/// `use crate::messages::testing::prelude::*;`.
pub(crate) mod prelude {
    pub(crate) use super::{
        arb_topic, arb_unknown_tags, arb_unknown_tags_in, arb_uuid, assert_encoding_prefixes_fail,
        assert_prefixes_fail, check_encodings, check_length_bombs, check_not_in_version,
        check_round_trip, codec_tests, decode_both, encode, property_tests,
        round_trip_every_version_with, sample_property_tests,
    };
    pub(crate) use crate::error::{Error, Result};
    pub(crate) use crate::messages::{decode_exact, encode_request_frame, Message, Request};
    pub(crate) use crate::primitives::{RawTaggedField, UnknownTaggedFields, Uuid};
    pub(crate) use bytes::{Bytes, BytesMut};
    pub(crate) use proptest::collection::vec;
    pub(crate) use proptest::option;
    pub(crate) use proptest::prelude::*;
}

/// Encodes `m` at `version`.
pub(crate) fn encode<M: Message>(m: &M, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version).unwrap();
    buf.freeze()
}

/// Asserts that `value` encodes to `bytes` at `version` and that `bytes` decodes to `value`.
pub(crate) fn assert_wire<M: Message + PartialEq + core::fmt::Debug>(
    value: &M,
    version: i16,
    bytes: &[u8],
) {
    assert_eq!(encode(value, version), bytes, "encode v{version}");
    let decoded: M = decode_exact(Bytes::copy_from_slice(bytes), version).unwrap();
    assert_eq!(&decoded, value, "decode v{version}");
}

/// Every strict prefix of `bytes` fails to decode at `version`; one trailing byte is
/// `TrailingBytes`.
pub(crate) fn assert_prefixes_fail<M: Message + core::fmt::Debug>(bytes: &[u8], version: i16) {
    for end in 0..bytes.len() {
        let r = M::decode(&mut Bytes::copy_from_slice(&bytes[..end]), version);
        assert!(
            r.is_err(),
            "prefix of {end}/{} bytes decoded at v{version}: {r:?}",
            bytes.len()
        );
    }
    let mut longer = bytes.to_vec();
    longer.push(0);
    assert!(matches!(
        decode_exact::<M>(Bytes::from(longer), version),
        Err(Error::TrailingBytes { count: 1, .. })
    ));
}

/// [`assert_prefixes_fail`] for the encoding of `value` at `version`.
pub(crate) fn assert_encoding_prefixes_fail<M: Message + core::fmt::Debug>(
    value: &M,
    version: i16,
) {
    assert_prefixes_fail::<M>(&encode(value, version), version);
}

/// Checks hand-written encodings of `M`: each `(version, bytes, value)` encodes to exactly
/// `bytes` and decodes back to `value`, every strict prefix of `bytes` fails, and one
/// trailing byte is refused.
///
/// Where the environment variable `KSEEK_WIRE_DUMP` names a folder, each case's bytes are also
/// written there, for Kafka's own message classes to parse and write again
/// (`tests/kafka/check-wire`): the bytes here are written by hand from the schemas, so that
/// check is what tells a misread schema from a right one.
pub(crate) fn check_encodings<M: Message + PartialEq + core::fmt::Debug>(
    cases: &[(i16, &[u8], M)],
) {
    let dump = std::env::var_os("KSEEK_WIRE_DUMP").map(std::path::PathBuf::from);
    for (version, bytes, value) in cases {
        assert_wire(value, *version, bytes);
        assert_prefixes_fail::<M>(bytes, *version);
        if let Some(dir) = &dump {
            dump_case(dir, M::NAME, *version, bytes);
        }
    }
}

/// Writes `bytes` to `dir` as `<message>.v<version>.<CRC-32C of the bytes>.bin`: the name says
/// what the bytes are to a reader that knows nothing else (the same bytes under one name).
fn dump_case(dir: &std::path::Path, name: &str, version: i16, bytes: &[u8]) {
    let hash = crate::records::crc32c(bytes);
    let path = dir.join(format!("{name}.v{version}.{hash:08x}.bin"));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// Each `(version, bytes)` claims a length or count beyond the bytes present, and decoding
/// it as an `M` fails with `InvalidLength` before anything is allocated for it.
pub(crate) fn check_length_bombs<M: Message + core::fmt::Debug>(cases: &[(i16, &[u8])]) {
    for (version, bytes) in cases {
        let r = decode_exact::<M>(Bytes::copy_from_slice(bytes), *version);
        assert!(
            matches!(r, Err(Error::InvalidLength { .. })),
            "{bytes:?} at v{version}: {r:?}"
        );
    }
}

/// `M` refuses each of `versions` (outside its range) both ways: `value` doesn't encode and
/// `bytes` (a body valid at some supported version) doesn't decode, each failing with
/// `UnsupportedVersion` for that version.
pub(crate) fn check_versions_refused<M: Message + core::fmt::Debug>(
    value: &M,
    bytes: &[u8],
    versions: &[i16],
) {
    for &version in versions {
        let refused = Error::UnsupportedVersion {
            api: M::NAME,
            version,
        };
        assert_eq!(
            value.encode(&mut BytesMut::new(), version),
            Err(refused.clone())
        );
        let decoded = decode_exact::<M>(Bytes::copy_from_slice(bytes), version);
        assert_eq!(decoded.err(), Some(refused));
    }
}

/// Decodes `data` as a `Q` and as an `S` at each of `versions`: the result doesn't matter,
/// only that nothing panics.
pub(crate) fn decode_both<Q: Message, S: Message>(
    data: &[u8],
    versions: impl IntoIterator<Item = i16>,
) {
    for v in versions {
        let _ = decode_exact::<Q>(Bytes::copy_from_slice(data), v);
        let _ = decode_exact::<S>(Bytes::copy_from_slice(data), v);
    }
}

/// `bytes` with a byte overwritten at each of `edits` (positions taken modulo the length) and,
/// when `cut % 3 == 0`, cut short at `cut` modulo the length + 1. Valid encodings mutated so
/// (counts, lengths, tags) reach deeper decoding paths than random bytes do.
pub(crate) fn mutate_some(bytes: &[u8], edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    if bytes.is_empty() {
        return bytes;
    }
    for (i, b) in edits {
        let n = bytes.len();
        bytes[i % n] = *b;
    }
    if cut.is_multiple_of(3) {
        bytes.truncate(cut % (bytes.len() + 1));
    }
    bytes
}

/// `bytes` with a byte overwritten at each of `edits` and then cut at `cut` (see
/// [`mutate_some`]), positions drawn as proptest indexes.
pub(crate) fn mutate(
    bytes: &[u8],
    edits: &[(proptest::sample::Index, u8)],
    cut: proptest::sample::Index,
) -> Vec<u8> {
    let mut data = bytes.to_vec();
    for (at, byte) in edits {
        let at = at.index(data.len());
        data[at] = *byte;
    }
    data.truncate(cut.index(data.len() + 1));
    data
}

/// Unknown tagged fields (up to three, tags from `tags`), only in flexible versions.
pub(crate) fn arb_unknown_tags_in(
    flexible: bool,
    tags: core::ops::Range<u32>,
) -> BoxedStrategy<UnknownTaggedFields> {
    if !flexible {
        return Just(UnknownTaggedFields::default()).boxed();
    }
    proptest::collection::btree_map(tags, proptest::collection::vec(any::<u8>(), 0..6), 0..3)
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

/// Unknown tagged fields with tags below 300, only in flexible versions.
pub(crate) fn arb_unknown_tags(flexible: bool) -> BoxedStrategy<UnknownTaggedFields> {
    arb_unknown_tags_in(flexible, 0..300)
}

/// Encode, then `decode_exact`, gives the value back, and re-encoding gives the same bytes.
pub(crate) fn check_round_trip<M: Message + PartialEq + core::fmt::Debug>(
    value: &M,
    version: i16,
) -> core::result::Result<(), TestCaseError> {
    let mut buf = BytesMut::new();
    value
        .encode(&mut buf, version)
        .map_err(|e| TestCaseError::fail(format!("encode v{version}: {e}")))?;
    let bytes = buf.freeze();
    let decoded: M = decode_exact(bytes.clone(), version)
        .map_err(|e| TestCaseError::fail(format!("decode v{version}: {e}")))?;
    prop_assert_eq!(&decoded, value, "version {}", version);
    let mut again = BytesMut::new();
    decoded
        .encode(&mut again, version)
        .map_err(|e| TestCaseError::fail(format!("re-encode v{version}: {e}")))?;
    prop_assert_eq!(&again[..], &bytes[..], "version {}", version);
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
    round_trip_every_version_with(Config::default(), versions, strategy);
}

/// [`round_trip_every_version`] with the runner's `config` (fewer cases for large messages).
pub(crate) fn round_trip_every_version_with<M, S>(
    config: Config,
    versions: core::ops::RangeInclusive<i16>,
    strategy: impl Fn(i16) -> S,
) where
    M: Message + PartialEq + core::fmt::Debug,
    S: Strategy<Value = M>,
{
    for version in versions {
        let mut runner = TestRunner::new(config.clone());
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

/// A topic struct declared with `wire_topic!`, put together from its parts by [`arb_topic`].
pub(crate) trait ArbTopic: core::fmt::Debug + Sized {
    /// The type of its partitions field.
    type Partitions: core::fmt::Debug;
    /// The last version that names the topic; later ones give its id.
    const LAST_NAMED: i16;
    /// The topic with these fields.
    fn from_parts(
        name: String,
        topic_id: Uuid,
        partitions: Self::Partitions,
        tags: UnknownTaggedFields,
    ) -> Self;
}

/// A topic of a message that names its topics up to a version and gives their ids after it
/// (KIP-516): at `version`, the name or the id that it carries, the other left at its default,
/// with `partitions` and, if `flexible`, unknown tags.
pub(crate) fn arb_topic<T: ArbTopic>(
    version: i16,
    flexible: bool,
    partitions: impl Strategy<Value = T::Partitions>,
) -> impl Strategy<Value = T> {
    let topic = (
        "\\PC{0,8}",
        arb_uuid(),
        partitions,
        arb_unknown_tags(flexible),
    );
    topic.prop_map(move |(name, id, partitions, tags)| {
        if version <= T::LAST_NAMED {
            T::from_parts(name, Uuid::ZERO, partitions, tags)
        } else {
            T::from_parts(String::new(), id, partitions, tags)
        }
    })
}

/// Every version `M` declares (with [`wire_message!`](crate::messages::codec::wire_message)).
pub(crate) fn declared_versions<M: Message>() -> core::ops::RangeInclusive<i16> {
    M::VERSIONS.min..=M::VERSIONS.max
}

/// The property tests of a message file whose strategies `request(v)` and `response(v)` draw
/// values for a version: at every version the request declares, both round-trip, and neither
/// their encodings with a few bytes mutated nor arbitrary bytes (up to `$max_len`) make a
/// decoder panic. Defines `versions()` too.
macro_rules! property_tests {
    ($request:ty, $response:ty, $max_len:expr) => {
        fn versions() -> core::ops::RangeInclusive<i16> {
            crate::messages::testing::declared_versions::<$request>()
        }

        proptest! {
            #[test]
            fn request_round_trips((v, m) in versions().prop_flat_map(|v| (Just(v), request(v)))) {
                crate::messages::testing::check_round_trip(&m, v)?;
            }

            #[test]
            fn response_round_trips((v, m) in versions().prop_flat_map(|v| (Just(v), response(v)))) {
                crate::messages::testing::check_round_trip(&m, v)?;
            }

            #[test]
            fn decoding_mutated_encodings_never_panics(
                (v, req, resp) in versions().prop_flat_map(|v| (Just(v), request(v), response(v))),
                edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
                cut in any::<usize>(),
            ) {
                use crate::messages::testing::{decode_both, encode, mutate_some};
                for bytes in [encode(&req, v), encode(&resp, v)] {
                    let bytes = mutate_some(&bytes, &edits, cut);
                    decode_both::<$request, $response>(&bytes, versions());
                }
            }

            #[test]
            fn decoding_arbitrary_bytes_never_panics(
                data in proptest::collection::vec(any::<u8>(), 0..$max_len),
            ) {
                crate::messages::testing::decode_both::<$request, $response>(&data, versions());
            }
        }
    };
}
pub(crate) use property_tests;

/// The property tests of a message file with strategies `arb_request(v)`, `arb_response(v)`
/// and hand-derived encodings: both types round-trip at every version the request declares,
/// and neither arbitrary bytes (up to 128) nor the `$samples` (encoding, version) with a few
/// bytes mutated, read at their version or a neighbouring one, make a decoder panic.
macro_rules! sample_property_tests {
    ($request:ty, $response:ty, $samples:expr) => {
        fn all_versions() -> core::ops::RangeInclusive<i16> {
            crate::messages::testing::declared_versions::<$request>()
        }

        #[test]
        fn request_round_trips_at_every_version() {
            crate::messages::testing::round_trip_every_version(all_versions(), arb_request);
        }

        #[test]
        fn response_round_trips_at_every_version() {
            crate::messages::testing::round_trip_every_version(all_versions(), arb_response);
        }

        proptest! {
            #[test]
            fn decoding_arbitrary_bytes_never_panics(
                data in proptest::collection::vec(any::<u8>(), 0..128),
                version in all_versions(),
            ) {
                crate::messages::testing::decode_both::<$request, $response>(&data, [version]);
            }

            /// Valid encodings with a few bytes overwritten and maybe cut short reach the
            /// deeper decoding paths that random bytes rarely do; none may panic, at any
            /// version.
            #[test]
            fn mutated_encodings_never_panic(
                which in any::<proptest::sample::Index>(),
                edits in proptest::collection::vec(
                    (any::<proptest::sample::Index>(), any::<u8>()),
                    1..4,
                ),
                cut in any::<proptest::sample::Index>(),
                version_shift in 0i16..3,
            ) {
                let samples: &[(&[u8], i16)] = &$samples;
                let (bytes, version) = samples[which.index(samples.len())];
                let data = crate::messages::testing::mutate(bytes, &edits, cut);
                // Also read the mutated bytes as a neighbouring version.
                let versions = [version, version + version_shift, version - version_shift];
                crate::messages::testing::decode_both::<$request, $response>(&data, versions);
            }
        }
    };
}
pub(crate) use sample_property_tests;

/// Each `(version, value)` holds a non-default value in a field that `version` lacks and
/// that isn't ignorable: encoding it fails with `FieldNotInVersion` at that version.
pub(crate) fn check_not_in_version<M: Message + core::fmt::Debug>(cases: &[(i16, M)]) {
    for (version, value) in cases {
        let r = value.encode(&mut BytesMut::new(), *version);
        assert!(
            matches!(r, Err(Error::FieldNotInVersion { version: v, .. }) if v == *version),
            "{value:?} at v{version}: {r:?}"
        );
    }
}

/// The table-driven tests of a message file, from its data alone:
///
/// - `hand_written_encodings`: [`check_encodings`] for each type's `(version, bytes, value)`;
/// - `length_bombs_fail_at_once`: [`check_length_bombs`] for each type's `(version, bytes)`;
/// - `versions_outside_the_range_are_refused`: [`check_versions_refused`] for each type with
///   encodings, with its first one, at the versions just outside the type's range.
macro_rules! codec_tests {
    (
        encodings { $($enc_ty:ty: [$($enc:expr),* $(,)?]),* $(,)? }
        length_bombs { $($bomb_ty:ty: [$($bomb:expr),* $(,)?]),* $(,)? }
    ) => {
        #[test]
        fn hand_written_encodings() {
            $(crate::messages::testing::check_encodings::<$enc_ty>(&[$($enc),*]);)*
        }

        #[test]
        fn length_bombs_fail_at_once() {
            $(crate::messages::testing::check_length_bombs::<$bomb_ty>(&[$($bomb),*]);)*
        }

        #[test]
        fn versions_outside_the_range_are_refused() {
            $({
                let cases: &[(i16, &[u8], $enc_ty)] = &[$($enc),*];
                let (_, bytes, value) = &cases[0];
                let range = <$enc_ty as crate::messages::Message>::VERSIONS;
                crate::messages::testing::check_versions_refused(
                    value,
                    bytes,
                    &[i16::MIN, range.min - 1, range.max + 1, i16::MAX],
                );
            })*
        }
    };
}
pub(crate) use codec_tests;

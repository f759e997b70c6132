//! The protocol crate's one error type.

/// A `Result` whose error is the protocol crate's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// What went wrong while decoding or encoding bytes of the Kafka protocol.
///
/// Every variant carries cheap static context (which field of which message), so an error
/// read from a log names the place in the wire format that was at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended before the field was complete.
    #[error("truncated {what}: needed {needed} bytes, {remaining} remain")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A length or count is negative (and not the null marker) or larger than the input could hold.
    #[error("invalid length {len} for {what}")]
    InvalidLength {
        /// The field whose length is wrong.
        what: &'static str,
        /// The length as read from the wire.
        len: i64,
    },
    /// A string field is not UTF-8.
    #[error("{what} is not valid UTF-8")]
    InvalidUtf8 {
        /// The field.
        what: &'static str,
    },
    /// A varint has more bytes than its type allows.
    #[error("varint too long in {what}")]
    VarintOverflow {
        /// The field.
        what: &'static str,
    },
    /// Bytes are left over after a complete message.
    #[error("{count} trailing bytes after {what}")]
    TrailingBytes {
        /// The message.
        what: &'static str,
        /// How many bytes were left.
        count: usize,
    },
    /// A field is null in a version where it may not be, or a value is out of its domain.
    #[error("invalid value {value} for {what}")]
    InvalidValue {
        /// The field.
        what: &'static str,
        /// The value read (or -1 for null).
        value: i64,
    },
    /// A null was given or read where the version does not allow it.
    #[error("{what} is null, which version {version} does not allow")]
    UnexpectedNull {
        /// The field.
        what: &'static str,
        /// The message version.
        version: i16,
    },
    /// Tagged fields are not in strictly ascending tag order.
    #[error("tagged fields out of order in {what}")]
    TagOrder {
        /// The struct.
        what: &'static str,
    },
    /// The message version is outside the range this crate implements.
    #[error("version {version} of {api} is not supported")]
    UnsupportedVersion {
        /// The API.
        api: &'static str,
        /// The version asked for.
        version: i16,
    },
    /// A field has a non-default value in a version that cannot carry it.
    #[error("{what} cannot be sent in version {version}")]
    FieldNotInVersion {
        /// The field.
        what: &'static str,
        /// The message version.
        version: i16,
    },
    /// A value is too long for its length prefix.
    #[error("{what} is too long to encode ({len} bytes or items)")]
    TooLong {
        /// The field.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// A frame's size prefix is above the configured maximum; nothing beyond the prefix was read.
    #[error("frame of {size} bytes exceeds the maximum of {max}")]
    FrameTooLarge {
        /// The declared size.
        size: u64,
        /// The maximum allowed.
        max: usize,
    },
    /// No version of an API is supported by both sides.
    #[error("no common version of {api}: broker supports {broker_min}..={broker_max}, kseek {ours_min}..={ours_max}")]
    NoCommonVersion {
        /// The API.
        api: &'static str,
        /// The broker's lowest version.
        broker_min: i16,
        /// The broker's highest version.
        broker_max: i16,
        /// Our lowest version.
        ours_min: i16,
        /// Our highest version.
        ours_max: i16,
    },
    /// The broker answered with a top-level error where a result was needed (for example an
    /// ApiVersions response carrying an error, handed to [`crate::negotiate::negotiate`]).
    #[error("{api} failed: broker returned {error_code}")]
    BrokerError {
        /// The API whose response carried the error.
        api: &'static str,
        /// The broker's error code.
        error_code: crate::error_code::ErrorCode,
    },
    /// The broker does not support an API at all.
    #[error("the broker does not support {api}")]
    ApiNotSupported {
        /// The API.
        api: &'static str,
    },
    /// A record batch's CRC does not match its contents.
    #[error("CRC mismatch in record batch at base offset {base_offset}: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch {
        /// The batch's base offset.
        base_offset: i64,
        /// The CRC stored in the batch.
        stored: u32,
        /// The CRC computed over the bytes.
        computed: u32,
    },
    /// A record batch or message has a magic byte this crate does not know.
    #[error("unknown magic byte {magic} at offset {offset}")]
    UnknownMagic {
        /// The magic byte.
        magic: i8,
        /// The offset of the batch or message.
        offset: i64,
    },
    /// A batch uses a compression codec that is unknown, or whose cargo feature is off.
    #[error("compression codec {codec} is not available (unknown, or its cargo feature is off)")]
    UnsupportedCompression {
        /// The codec's number in the attributes.
        codec: u8,
    },
    /// A compressed payload is corrupt.
    #[error("{codec} decompression failed: {reason}")]
    Decompression {
        /// The codec.
        codec: &'static str,
        /// What the codec reported.
        reason: &'static str,
    },
    /// Decompression would produce more than the configured cap.
    #[error("{codec} output exceeds the decompression cap of {limit} bytes")]
    DecompressedTooLarge {
        /// The codec.
        codec: &'static str,
        /// The cap.
        limit: usize,
    },
}

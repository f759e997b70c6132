//! Typed requests and responses, one file per API.
//!
//! Each message type implements [`Message`]: it knows its API key, the versions this crate
//! implements and its first flexible version, and encodes and decodes itself at any of those
//! versions following Kafka's JSON schema exactly (field presence, nullability, defaults,
//! tagged fields). Request types also implement [`Request`], which names the response type,
//! so a client can't decode an answer with the wrong decoder.

use bytes::{Bytes, BytesMut};

pub mod api_versions;
pub(crate) mod codec;
pub mod describe_configs;
pub mod describe_log_dirs;
pub mod fetch;
pub mod find_coordinator;
mod isolation;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_fetch;
pub mod sasl_authenticate;
pub mod sasl_handshake;
#[cfg(test)]
pub(crate) mod testing;

pub use isolation::IsolationLevel;

use crate::api_key::ApiKey;
use crate::error::{Error, Result};
use crate::header::{RequestHeader, ResponseHeader};

/// An inclusive range of API versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionRange {
    /// The lowest version.
    pub min: i16,
    /// The highest version.
    pub max: i16,
}

impl VersionRange {
    /// Whether `v` is in the range.
    pub const fn contains(self, v: i16) -> bool {
        self.min <= v && v <= self.max
    }
}

/// A request or response body of one Kafka API.
pub trait Message: Sized {
    /// The API this message belongs to.
    const API_KEY: ApiKey;
    /// The versions this crate encodes and decodes.
    const VERSIONS: VersionRange;
    /// The first version that uses compact encodings and tagged fields.
    const FIRST_FLEXIBLE_VERSION: i16;
    /// The message's name, for errors.
    const NAME: &'static str;

    /// Encodes the body at `version`. Fails for an unsupported version, or for a field
    /// that holds a non-default value the version cannot carry (where Kafka's schema marks
    /// the field not ignorable). On an error `buf` may hold part of the encoding
    /// ([`encode_request_frame`] takes it back).
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<()>;

    /// Decodes a body at `version`, advancing `buf` past it. Use [`decode_exact`] to also
    /// refuse trailing bytes.
    fn decode(buf: &mut Bytes, version: i16) -> Result<Self>;

    /// Fails with [`Error::UnsupportedVersion`] unless `version` is in [`Message::VERSIONS`].
    fn check_version(version: i16) -> Result<()> {
        if Self::VERSIONS.contains(version) {
            Ok(())
        } else {
            Err(Error::UnsupportedVersion {
                api: Self::NAME,
                version,
            })
        }
    }

    /// Whether `version` is flexible.
    fn is_flexible(version: i16) -> bool {
        version >= Self::FIRST_FLEXIBLE_VERSION
    }
}

/// A request, paired with the type of its response.
pub trait Request: Message {
    /// The response to this request.
    type Response: Message;

    /// The request header version for `version`.
    fn request_header_version(version: i16) -> i16 {
        RequestHeader::version_for(Self::FIRST_FLEXIBLE_VERSION, version)
    }

    /// The response header version for `version`.
    fn response_header_version(version: i16) -> i16 {
        ResponseHeader::version_for(Self::API_KEY, Self::FIRST_FLEXIBLE_VERSION, version)
    }
}

/// Decodes a whole message body from `buf`: bytes left after it are an error.
pub fn decode_exact<M: Message>(mut buf: Bytes, version: i16) -> Result<M> {
    let msg = M::decode(&mut buf, version)?;
    if buf.is_empty() {
        Ok(msg)
    } else {
        Err(Error::TrailingBytes {
            what: M::NAME,
            count: buf.len(),
        })
    }
}

/// Encodes a complete request frame: size prefix, header and body. On an error `buf` is left
/// as it was.
pub fn encode_request_frame<R: Request>(
    buf: &mut BytesMut,
    correlation_id: i32,
    client_id: Option<&str>,
    version: i16,
    body: &R,
) -> Result<()> {
    R::check_version(version)?;
    let header = RequestHeader {
        api_key: R::API_KEY.0,
        api_version: version,
        correlation_id,
        client_id: client_id.map(str::to_owned),
        unknown_tagged_fields: Default::default(),
    };
    let header_version = R::request_header_version(version);
    write_frame(buf, &header, header_version, R::NAME, &|b| {
        body.encode(b, version)
    })
}

/// [`encode_request_frame`]'s framing, compiled once for every request type: the size
/// prefix, `header`, the body `encode` writes; on an error `buf` is cut back to where it was.
fn write_frame(
    buf: &mut BytesMut,
    header: &RequestHeader,
    header_version: i16,
    name: &'static str,
    encode: &dyn Fn(&mut BytesMut) -> Result<()>,
) -> Result<()> {
    let start = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let written = header
        .encode(buf, header_version)
        .and_then(|()| encode(buf))
        .and_then(|()| {
            let len = buf.len() - start - 4;
            i32::try_from(len).map_err(|_| Error::TooLong { what: name, len })
        });
    match written {
        Ok(len) => {
            buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
            Ok(())
        }
        Err(e) => {
            buf.truncate(start);
            Err(e)
        }
    }
}

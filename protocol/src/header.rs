//! Request and response headers.
//!
//! Request header v1 is `api_key, api_version, correlation_id, client_id` (client id an `int16`
//! nullable string, even in v2); v2 adds a tagged section. Response header v0 is the
//! correlation id; v1 adds a tagged section. A flexible body version takes request v2 and
//! response v1, except that the ApiVersions response always uses response header v0 (KIP-511),
//! so that a client can read the error of a version the broker doesn't know.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_messages>, KIP-482, KIP-511.

use bytes::{BufMut, Bytes, BytesMut};

use crate::api_key::ApiKey;
use crate::error::Result;
use crate::primitives::{
    get_i16, get_i32, get_nullable_string, get_tags_if, put_nullable_string, put_tags_if,
    UnknownTaggedFields,
};

/// A request header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHeader {
    /// The API of the request.
    pub api_key: i16,
    /// The version of the request body.
    pub api_version: i16,
    /// Echoed in the response, to match it to this request.
    pub correlation_id: i32,
    /// The client's id, for the broker's logs and quotas.
    pub client_id: Option<String>,
    /// Tagged fields of header v2 that this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl RequestHeader {
    /// The header version that goes with `api_version` of an API whose first flexible version
    /// is `first_flexible`: 2 for flexible bodies, otherwise 1.
    pub fn version_for(first_flexible: i16, api_version: i16) -> i16 {
        if api_version >= first_flexible {
            2
        } else {
            1
        }
    }

    /// Encodes the header in `header_version` (1 or 2).
    pub fn encode(&self, buf: &mut BytesMut, header_version: i16) -> Result<()> {
        buf.put_i16(self.api_key);
        buf.put_i16(self.api_version);
        buf.put_i32(self.correlation_id);
        put_nullable_string(
            buf,
            self.client_id.as_deref(),
            false,
            "RequestHeader.client_id",
        )?;
        put_tags_if(buf, header_version >= 2, &self.unknown_tagged_fields);
        Ok(())
    }

    /// Decodes a header in `header_version` (1 or 2).
    pub fn decode(buf: &mut Bytes, header_version: i16) -> Result<Self> {
        let api_key = get_i16(buf, "RequestHeader.api_key")?;
        let api_version = get_i16(buf, "RequestHeader.api_version")?;
        let correlation_id = get_i32(buf, "RequestHeader.correlation_id")?;
        let client_id = get_nullable_string(buf, false, "RequestHeader.client_id")?;
        let unknown_tagged_fields = get_tags_if(buf, header_version >= 2, "RequestHeader")?;
        Ok(RequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
            unknown_tagged_fields,
        })
    }
}

/// A response header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseHeader {
    /// The correlation id of the request this answers.
    pub correlation_id: i32,
    /// Tagged fields of header v1 that this crate doesn't know.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl ResponseHeader {
    /// The header version of the response to `api_key` at `api_version`, for an API whose
    /// first flexible version is `first_flexible`. ApiVersions is always v0.
    pub fn version_for(api_key: ApiKey, first_flexible: i16, api_version: i16) -> i16 {
        if api_key != ApiKey::API_VERSIONS && api_version >= first_flexible {
            1
        } else {
            0
        }
    }

    /// Encodes the header in `header_version` (0 or 1).
    pub fn encode(&self, buf: &mut BytesMut, header_version: i16) -> Result<()> {
        buf.put_i32(self.correlation_id);
        put_tags_if(buf, header_version >= 1, &self.unknown_tagged_fields);
        Ok(())
    }

    /// Decodes a header in `header_version` (0 or 1).
    pub fn decode(buf: &mut Bytes, header_version: i16) -> Result<Self> {
        let correlation_id = get_i32(buf, "ResponseHeader.correlation_id")?;
        let unknown_tagged_fields = get_tags_if(buf, header_version >= 1, "ResponseHeader")?;
        Ok(ResponseHeader {
            correlation_id,
            unknown_tagged_fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_versions() {
        assert_eq!(RequestHeader::version_for(12, 11), 1);
        assert_eq!(RequestHeader::version_for(12, 12), 2);
        assert_eq!(ResponseHeader::version_for(ApiKey::FETCH, 12, 12), 1);
        assert_eq!(ResponseHeader::version_for(ApiKey::API_VERSIONS, 3, 4), 0);
    }

    #[test]
    fn request_header_round_trip_and_bytes() {
        let h = RequestHeader {
            api_key: 18,
            api_version: 3,
            correlation_id: 7,
            client_id: Some("ks".into()),
            unknown_tagged_fields: UnknownTaggedFields::default(),
        };
        let mut b = BytesMut::new();
        h.encode(&mut b, 2).unwrap();
        assert_eq!(&b[..], &[0, 18, 0, 3, 0, 0, 0, 7, 0, 2, b'k', b's', 0]);
        let mut r = b.freeze();
        assert_eq!(RequestHeader::decode(&mut r, 2).unwrap(), h);
        assert!(r.is_empty());
    }

    #[test]
    fn truncated_headers_error() {
        for n in 0..12 {
            let full = [0u8, 18, 0, 3, 0, 0, 0, 7, 0, 2, b'k', b's', 0];
            let mut r = Bytes::copy_from_slice(&full[..n]);
            assert!(RequestHeader::decode(&mut r, 2).is_err(), "prefix {n}");
        }
        let mut r = Bytes::from_static(&[0, 0, 0]);
        assert!(ResponseHeader::decode(&mut r, 0).is_err());
    }
}

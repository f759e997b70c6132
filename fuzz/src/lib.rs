//! Shared oracle for kseek's fuzz targets.
//!
//! A message target's input is `[selector, body...]`: the selector's low bit picks request or
//! response, the rest picks the version within the range kseek implements. The body is
//! decoded with the same public entry point a client uses (`decode_exact`). Whatever decodes
//! must re-encode, and the re-encoding must decode to an equal value and re-encode to the
//! same bytes: a decoder that accepts what its encoder can't reproduce is a bug too.

use std::fmt::Debug;

use bytes::{Bytes, BytesMut};
use kseek_protocol::{decode_exact, Message};

/// Picks the version and side from the selector byte and runs the oracle on the body.
pub fn fuzz_api<Req, Resp>(data: &[u8])
where
    Req: Message + PartialEq + Debug,
    Resp: Message + PartialEq + Debug,
{
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let span = (Req::VERSIONS.max - Req::VERSIONS.min + 1) as u8;
    let version = Req::VERSIONS.min + i16::from((selector >> 1) % span);
    if selector & 1 == 0 {
        round_trip::<Req>(body, version);
    } else {
        round_trip::<Resp>(body, version);
    }
}

/// Decodes `body` at `version`; if it decodes, checks that encoding is stable.
pub fn round_trip<M: Message + PartialEq + Debug>(body: &[u8], version: i16) {
    let Ok(msg) = decode_exact::<M>(Bytes::copy_from_slice(body), version) else {
        return;
    };
    let mut first = BytesMut::new();
    msg.encode(&mut first, version)
        .expect("a decoded message must re-encode at the same version");
    let again: M = decode_exact(first.clone().freeze(), version)
        .expect("our own encoding must decode");
    assert_eq!(msg, again, "decode(encode(m)) != m at version {version}");
    let mut second = BytesMut::new();
    again.encode(&mut second, version).expect("re-encode");
    assert_eq!(first, second, "encoding is not stable at version {version}");
}

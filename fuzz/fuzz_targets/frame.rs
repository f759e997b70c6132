#![no_main]
//! Framing and headers: split frames out of arbitrary bytes with an arbitrary maximum, then
//! parse each frame as a request header (v1, v2) and a response header (v0, v1).

use bytes::BytesMut;
use kseek_protocol::{header, split_frame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&max, rest)) = data.split_first() else {
        return;
    };
    let max = usize::from(max) * 64;
    let mut buf = BytesMut::from(rest);
    // Each round either consumes a frame or stops: bounded by the input length.
    while let Ok(Some(frame)) = split_frame(&mut buf, max) {
        assert!(frame.len() <= max);
        for v in [1, 2] {
            let _ = header::RequestHeader::decode(&mut frame.clone(), v);
        }
        for v in [0, 1] {
            let _ = header::ResponseHeader::decode(&mut frame.clone(), v);
        }
    }
});

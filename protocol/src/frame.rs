//! Framing: every Kafka message travels as an `int32` size followed by that many bytes.
//!
//! [`check_frame`] and [`split_frame`] are pure functions over a buffer, in the style of
//! `postgres-protocol`'s `Message::parse`: they say whether a complete frame is present, and
//! refuse a frame above the configured maximum from its size prefix alone, before any of it
//! is read or buffered. The async adapter lives in the client crate.
//!
//! # References
//! <https://kafka.apache.org/protocol#protocol_common>

use bytes::{Buf, Bytes, BytesMut};

use crate::error::{Error, Result};

/// The length of the size prefix.
pub const SIZE_PREFIX_LEN: usize = 4;

/// What [`check_frame`] found at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStatus {
    /// A whole frame is present; its body (after the size prefix) is `len` bytes long.
    Complete {
        /// Body length, without the 4-byte prefix.
        len: usize,
    },
    /// More bytes are needed: at least `needed` more before the frame can be complete.
    Incomplete {
        /// The number of further bytes needed (a lower bound while the prefix is partial).
        needed: usize,
    },
}

/// Looks at the start of `buf` for a frame of at most `max_size` body bytes.
///
/// A negative size, or one above `max_size`, is an error as soon as the 4-byte prefix is
/// present, so a caller never buffers a frame it will refuse.
pub fn check_frame(buf: &[u8], max_size: usize) -> Result<FrameStatus> {
    let Some(prefix) = buf.get(..SIZE_PREFIX_LEN) else {
        return Ok(FrameStatus::Incomplete {
            needed: SIZE_PREFIX_LEN - buf.len(),
        });
    };
    let size = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    let Ok(size) = usize::try_from(size) else {
        return Err(Error::InvalidLength {
            what: "frame size",
            len: i64::from(size),
        });
    };
    if size > max_size {
        return Err(Error::FrameTooLarge {
            size: size as u64,
            max: max_size,
        });
    }
    let have = buf.len() - SIZE_PREFIX_LEN;
    if have >= size {
        Ok(FrameStatus::Complete { len: size })
    } else {
        Ok(FrameStatus::Incomplete {
            needed: size - have,
        })
    }
}

/// Splits the first complete frame's body off `buf`, or returns `Ok(None)` when more bytes
/// are needed. The returned `Bytes` shares `buf`'s allocation: no copy.
pub fn split_frame(buf: &mut BytesMut, max_size: usize) -> Result<Option<Bytes>> {
    match check_frame(buf, max_size)? {
        FrameStatus::Incomplete { .. } => Ok(None),
        FrameStatus::Complete { len } => {
            buf.advance(SIZE_PREFIX_LEN);
            Ok(Some(buf.split_to(len).freeze()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_incomplete_and_split() {
        assert_eq!(
            check_frame(&[0, 0], 100).unwrap(),
            FrameStatus::Incomplete { needed: 2 }
        );
        assert_eq!(
            check_frame(&[0, 0, 0, 3, 1], 100).unwrap(),
            FrameStatus::Incomplete { needed: 2 }
        );
        let mut b = BytesMut::from(&[0, 0, 0, 2, 9, 8, 0, 0, 0][..]);
        assert_eq!(split_frame(&mut b, 100).unwrap().unwrap(), &[9, 8][..]);
        assert_eq!(&b[..], &[0, 0, 0]);
        assert_eq!(split_frame(&mut b, 100).unwrap(), None);
        let mut empty = BytesMut::from(&[0, 0, 0, 0][..]);
        assert_eq!(split_frame(&mut empty, 0).unwrap().unwrap().len(), 0);
    }

    #[test]
    fn oversized_and_negative_frames_are_refused_from_the_prefix() {
        assert_eq!(
            check_frame(&[0x7f, 0xff, 0xff, 0xff], 1 << 20),
            Err(Error::FrameTooLarge {
                size: 0x7fff_ffff,
                max: 1 << 20
            })
        );
        assert!(matches!(
            check_frame(&[0xff, 0xff, 0xff, 0xfe], 1 << 20),
            Err(Error::InvalidLength { len: -2, .. })
        ));
        assert_eq!(
            check_frame(&[0, 0, 0, 101], 100),
            Err(Error::FrameTooLarge {
                size: 101,
                max: 100
            })
        );
    }
}

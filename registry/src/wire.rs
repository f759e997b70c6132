//! Confluent's wire format: how a serializer frames a value (or key) whose schema is in a
//! Schema Registry.
//!
//! ```text
//! byte 0      magic byte, 0
//! bytes 1-4   the schema id, a big-endian 32-bit integer
//! (Protobuf)  the message indexes: a zigzag varint count, then that many zigzag varints,
//!             the path to the message type in the .proto file; a lone 0 means [0], the
//!             first message
//! the rest    the payload: Avro binary, Protobuf, or JSON text
//! ```

/// The magic byte of a framed value.
pub const MAGIC: u8 = 0;

/// A value framed by a Confluent serializer, borrowed from the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framed<'a> {
    /// The registry's id of the writer's schema.
    pub schema_id: u32,
    /// Everything after the schema id: the payload (for Protobuf, the message indexes first).
    pub rest: &'a [u8],
}

/// Why bytes are not a framed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Fewer than the five bytes of the magic byte and the schema id.
    #[error(
        "{len} bytes, too short for Schema Registry framing (a magic byte and a 4-byte schema id)"
    )]
    TooShort {
        /// How many bytes there were.
        len: usize,
    },
    /// The first byte is not the magic byte 0: not written by a Confluent serializer.
    #[error("the first byte is {0:#04x}, not the Schema Registry magic byte 0x00 (not written by a Confluent serializer)")]
    NoMagicByte(u8),
    /// The Protobuf message indexes are cut short or malformed.
    #[error("the Protobuf message indexes are malformed: {0}")]
    MessageIndexes(&'static str),
}

impl<'a> Framed<'a> {
    /// Splits `bytes` into the schema id and the rest.
    ///
    /// # Errors
    /// [`WireError::TooShort`], [`WireError::NoMagicByte`].
    pub fn parse(bytes: &'a [u8]) -> Result<Framed<'a>, WireError> {
        let Some((&magic, rest)) = bytes.split_first() else {
            return Err(WireError::TooShort { len: 0 });
        };
        if magic != MAGIC {
            return Err(WireError::NoMagicByte(magic));
        }
        let Some((id, rest)) = rest.split_first_chunk::<4>() else {
            return Err(WireError::TooShort { len: bytes.len() });
        };
        Ok(Framed {
            schema_id: u32::from_be_bytes(*id),
            rest,
        })
    }

    /// The Protobuf message indexes and the payload after them. The count is checked
    /// against the bytes present before anything is allocated (each index takes a byte at
    /// least).
    ///
    /// # Errors
    /// [`WireError::MessageIndexes`].
    pub fn protobuf_indexes(&self) -> Result<(Vec<i32>, &'a [u8]), WireError> {
        let mut rest = self.rest;
        let count = zigzag_varint(&mut rest)?;
        if count == 0 {
            // The short form of [0]: the first message of the file.
            return Ok((vec![0], rest));
        }
        if count < 0 || count as u64 > rest.len() as u64 {
            return Err(WireError::MessageIndexes(
                "the count is negative or larger than the bytes that follow",
            ));
        }
        let mut indexes = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let index = zigzag_varint(&mut rest)?;
            if index < 0 {
                return Err(WireError::MessageIndexes("a negative index"));
            }
            indexes.push(index);
        }
        Ok((indexes, rest))
    }
}

/// A zigzag-encoded varint of at most 32 bits, taken off the front of `bytes`.
fn zigzag_varint(bytes: &mut &[u8]) -> Result<i32, WireError> {
    let mut value: u32 = 0;
    for i in 0..5 {
        let Some((&b, rest)) = bytes.split_first() else {
            return Err(WireError::MessageIndexes("cut short"));
        };
        *bytes = rest;
        if i == 4 && b > 0x0f {
            return Err(WireError::MessageIndexes("a varint longer than 32 bits"));
        }
        value |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value >> 1) as i32 ^ -((value & 1) as i32));
        }
    }
    Err(WireError::MessageIndexes("a varint longer than 32 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing() {
        let bytes = [0, 0, 0, 1, 2, 0xaa, 0xbb];
        let f = Framed::parse(&bytes).unwrap();
        assert_eq!(f.schema_id, 258);
        assert_eq!(f.rest, [0xaa, 0xbb]);
        assert_eq!(Framed::parse(&[]), Err(WireError::TooShort { len: 0 }));
        assert_eq!(
            Framed::parse(&[0, 1, 2]),
            Err(WireError::TooShort { len: 3 })
        );
        assert_eq!(
            Framed::parse(b"{\"a\":1}"),
            Err(WireError::NoMagicByte(b'{'))
        );
        assert_eq!(
            WireError::NoMagicByte(b'{').to_string(),
            "the first byte is 0x7b, not the Schema Registry magic byte 0x00 (not written by a Confluent serializer)"
        );
    }

    #[test]
    fn message_indexes() {
        let framed = |rest: &'static [u8]| Framed { schema_id: 1, rest };
        // The short form: a lone 0 is [0].
        assert_eq!(
            framed(&[0, 9]).protobuf_indexes().unwrap(),
            (vec![0], &[9][..])
        );
        // [1, 0]: count 2 (zigzag 4), 1 (zigzag 2), 0.
        assert_eq!(
            framed(&[4, 2, 0, 7]).protobuf_indexes().unwrap(),
            (vec![1, 0], &[7][..])
        );
        // 300 (zigzag 600 = 0xd8 0x04).
        assert_eq!(
            framed(&[2, 0xd8, 0x04]).protobuf_indexes().unwrap(),
            (vec![300], &[][..])
        );
        // A count far beyond the bytes present allocates nothing.
        assert!(framed(&[0xfe, 0xff, 0xff, 0xff, 0x0f])
            .protobuf_indexes()
            .is_err());
        assert!(framed(&[1]).protobuf_indexes().is_err(), "a negative count");
        assert!(framed(&[4, 2]).protobuf_indexes().is_err(), "cut short");
        assert!(framed(&[2, 0xff, 0xff, 0xff, 0xff, 0xff])
            .protobuf_indexes()
            .is_err());
    }
}

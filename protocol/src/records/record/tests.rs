//! Tests of `record`.

use super::*;

fn zigzag(n: i64) -> Vec<u8> {
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

#[test]
fn varints_round_trip_and_reject_overlong() {
    for n in [
        0i64,
        1,
        -1,
        63,
        -64,
        64,
        300,
        -300,
        i32::MAX.into(),
        i32::MIN.into(),
    ] {
        let enc = zigzag(n);
        let mut s = &enc[..];
        assert_eq!(i64::from(read_varint(&mut s, "t").unwrap()), n);
        assert!(s.is_empty());
    }
    for n in [0i64, i64::MAX, i64::MIN, 1 << 40] {
        let enc = zigzag(n);
        let mut s = &enc[..];
        assert_eq!(read_varlong(&mut s, "t").unwrap(), n);
    }
    let mut s: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x1f];
    assert_eq!(
        read_varint(&mut s, "t"),
        Err(Error::VarintOverflow { what: "t" })
    );
    let mut s: &[u8] = &[0xff; 6];
    assert!(read_varint(&mut s, "t").is_err());
    let mut s: &[u8] = &[0x80];
    assert!(matches!(
        read_varint(&mut s, "t"),
        Err(Error::Truncated { .. })
    ));
    let mut s: &[u8] = &[0xff; 11];
    assert!(read_varlong(&mut s, "t").is_err());
}

fn iter(data: &[u8], buf: &'static Bytes) -> V2Iter<'static> {
    let data: &'static [u8] = Box::leak(data.to_vec().into_boxed_slice());
    V2Iter {
        data,
        buf,
        remaining: 1,
        base_offset: 100,
        timestamp_base: 1_000,
        delta_mask: -1,
    }
}

fn same(a: &Record<'_>, b: &Record<'_>) -> bool {
    a.offset == b.offset
        && a.timestamp == b.timestamp
        && a.key == b.key
        && a.value == b.value
        && a.headers.data == b.headers.data
        && a.headers.remaining == b.headers.remaining
}

proptest::proptest! {
    /// The error-free fast path accepts exactly what the checked path accepts, with the
    /// same result; anything it declines, the checked path rejects.
    #[test]
    fn fast_and_checked_paths_agree(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        seed in proptest::sample::select(vec![
            // length 11: attrs, ts 1, offset 2, key "ab", null value, one header "h"->null
            vec![0x16u8, 0, 2, 4, 4, b'a', b'b', 1, 2, 2, b'h', 1],
            // two-byte varints everywhere
            vec![0x16u8, 0, 0x80, 1, 0x80, 1, 1, 0x06, 1, 2, 3, 0],
            // a three-byte timestamp delta (the last inline varint case), key "a"
            vec![0x12u8, 0, 0x80, 0x80, 1, 2, 2, b'a', 1, 0],
            // a four-byte timestamp delta (the out-of-line varint path), key "a"
            vec![0x14u8, 0, 0x80, 0x80, 0x80, 1, 2, 2, b'a', 1, 0],
            // three-byte key length and offset delta (overlong but valid), key "a"
            vec![0x16u8, 0, 2, 0x82, 0x80, 0, 0x82, 0x80, 0, b'a', 1, 0],
        ]),
        flips in proptest::collection::vec((0usize..12, proptest::prelude::any::<u8>()), 0..3),
    ) {
        static EMPTY: Bytes = Bytes::new();
        proptest::prop_assert!(iter(&seed, &EMPTY).decode_fast().is_some());
        let mut mutated = seed.clone();
        for (i, x) in flips {
            if let Some(b) = mutated.get_mut(i) {
                *b ^= x;
            }
        }
        for input in [&bytes, &seed, &mutated] {
            let mut fast = iter(input, &EMPTY);
            let mut checked = iter(input, &EMPTY);
            let f = fast.decode_fast();
            let c = checked.decode();
            if let Some(f) = f {
                let c = c.expect("checked path rejects what the fast path accepted");
                proptest::prop_assert!(same(&f, &c));
                proptest::prop_assert_eq!(fast.data, checked.data);
            } else {
                // Declined: data is untouched, and the checked path finds an error (the
                // fast path declines only malformed records; see `decode_error`).
                proptest::prop_assert_eq!(fast.data, &input[..]);
                proptest::prop_assert!(c.is_err(), "fast path declined a good record");
            }
        }
    }
}

#[test]
fn header_count_bomb_is_refused_without_walking() {
    // count = 1_000_000 with two bytes of header data.
    let err = check_headers(&[0, 1], 1_000_000).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidLength {
            what: "record header count",
            ..
        }
    ));
    assert!(check_headers(&[0, 1], -2).is_err());
    // A null header key is refused.
    assert!(check_headers(&[1, 1], 1).is_err());
    // key "a", null value
    assert_eq!(check_headers(&[2, b'a', 1], 1).unwrap(), 1);
}

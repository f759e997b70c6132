//! JSON text written straight into byte buffers (no `fmt` machinery on the per-record path):
//! strings, bytes (a string, or base64 when not UTF-8), integers.

/// `n` in decimal, as `{}` prints it (no `fmt` machinery: this is per record).
pub(crate) fn write_int(out: &mut Vec<u8>, n: i64) {
    // "00" to "99": two digits per division.
    const PAIRS: &[u8; 200] = b"\
        0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    // 20 digits hold u64::MAX; the sign goes in front.
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + rest as u8;
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

/// Bytes as JSON: a string when valid UTF-8, `null` when null, else `{"base64":"..."}`.
pub(crate) fn write_json_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => out.extend_from_slice(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => write_json_str(out, s),
            Err(_) => {
                out.extend_from_slice(b"{\"base64\":\"");
                write_base64(out, b);
                out.extend_from_slice(b"\"}");
            }
        },
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    // `bytes[start..i]` needs no escape and is not written yet.
    let (mut start, mut i) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        // Eight bytes at a time while none needs an escape (the common case).
        if let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
        {
            if !needs_escape(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(escape);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any of the eight bytes of `word` is a control character, `"` or `\` (exact: the
/// zero-byte test `(v - 0x01..) & !v & 0x80..` is exact about whether some byte is zero, and
/// `(w - 0x20..) & !w & 0x80..` about whether some byte is below 0x20).
#[inline]
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let control = word.wrapping_sub(0x20 * ONES) & !word & HIGH != 0;
    control
        || has_zero(word ^ (u64::from(b'"') * ONES))
        || has_zero(word ^ (u64::from(b'\\') * ONES))
}

/// `s` as a JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_json_str(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends standard base64 with padding (RFC 4648 section 4).
pub(crate) fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]);
            } else {
                out.push(b'=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_quotes_backslashes_and_control_characters() {
        assert_eq!(json_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(json_str("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(json_str("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
        assert_eq!(json_str("héllo ✓"), "\"héllo ✓\"");
        let mut out = Vec::new();
        write_json_bytes(&mut out, Some(b"\xc3\x28"));
        assert_eq!(out, b"{\"base64\":\"wyg=\"}");
    }

    #[test]
    fn base64_pads() {
        let base64 = |b: &[u8]| {
            let mut out = Vec::new();
            write_base64(&mut out, b);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn json_escapes_in_long_strings_at_every_position() {
        for at in 0..20 {
            for (c, escaped) in [
                ('"', "\\\""),
                ('\\', "\\\\"),
                ('\u{1}', "\\u0001"),
                ('\u{1f}', "\\u001f"),
            ] {
                let mut s = "abcdefghijklmnopqrs".to_owned();
                s.insert(at, c);
                let want = format!("\"{}{escaped}{}\"", &s[..at], &s[at + 1..]);
                assert_eq!(json_str(&s), want, "{s:?}");
            }
        }
        // Plain bytes next to the escaped ones, and UTF-8 beyond ASCII, pass as they are.
        assert_eq!(json_str("\u{7f} !#[]~ é ✓ 𝄞"), "\"\u{7f} !#[]~ é ✓ 𝄞\"");
    }

    #[test]
    fn the_eight_byte_escape_test_agrees_with_the_byte_by_byte_one() {
        let interesting = [
            0x00u8, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0xa2, 0xdc,
            0xff,
        ];
        for fill in [0x41u8, 0x20, 0x7f, 0x80, 0xff] {
            for at in 0..8 {
                for b in interesting {
                    let mut word = [fill; 8];
                    word[at] = b;
                    let naive = word.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
                    assert_eq!(needs_escape(u64::from_le_bytes(word)), naive, "{word:x?}");
                }
            }
        }
    }

    #[test]
    fn integers_print_as_display_does() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            42,
            99,
            100,
            101,
            999,
            1000,
            -1234567890,
            i64::MAX,
            i64::MIN,
        ] {
            let mut out = Vec::new();
            write_int(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }
}

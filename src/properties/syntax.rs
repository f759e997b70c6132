//! `java.util.Properties.load`: lines, continuations, separators and escapes.

use super::{Error, Result};

/// `java.util.Properties.load`: the (line, key, value) of every property in `text`, the line
/// being where the property starts.
pub(super) fn parse_properties(text: &str, source: &str) -> Result<Vec<(usize, String, String)>> {
    let mut out = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((index, first)) = lines.next() {
        let first = first.strip_suffix('\r').unwrap_or(first);
        let trimmed = first.trim_start_matches([' ', '\t', '\u{c}']);
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join continuation lines: a line ending in an odd number of backslashes goes on,
        // the next line's leading whitespace dropped.
        let mut logical = String::from(trimmed);
        while ends_in_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => {
                    let next = next.strip_suffix('\r').unwrap_or(next);
                    logical.push_str(next.trim_start_matches([' ', '\t', '\u{c}']));
                }
                None => break,
            }
        }
        let line = index + 1;
        let (key, value) = split_key_value(&logical);
        let unescape = |s: &str| {
            unescape(s).map_err(|reason| Error::Syntax {
                origin: format!("{source}:{line}"),
                reason,
            })
        };
        out.push((line, unescape(key)?, unescape(value)?));
    }
    Ok(out)
}

pub(super) fn ends_in_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Splits a logical line at the first unescaped `=`, `:` or whitespace; whitespace around
/// the separator is dropped, one `=` or `:` after whitespace too.
pub(super) fn split_key_value(line: &str) -> (&str, &str) {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\u{c}');
    let mut escaped = false;
    let mut end = line.len();
    let mut separator = None;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_ws(c) {
            end = i;
            separator = Some(c);
            break;
        }
    }
    let key = &line[..end];
    let mut rest = &line[end..];
    if let Some(sep) = separator {
        rest = &rest[sep.len_utf8()..];
        if is_ws(sep) {
            rest = rest.trim_start_matches(is_ws);
            if let Some(r) = rest.strip_prefix(['=', ':']) {
                rest = r;
            }
        }
        rest = rest.trim_start_matches(is_ws);
    }
    (key, rest)
}

pub(super) fn unescape(s: &str) -> std::result::Result<String, &'static str> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or("malformed \\uXXXX escape")?;
                // A surrogate (half of a UTF-16 pair) can't stand alone in a Rust string.
                out.push(char::from_u32(code).ok_or("\\u escape of a lone UTF-16 surrogate")?);
            }
            Some(other) => out.push(other),
            // A trailing backslash at the end of the text: Java drops it.
            None => {}
        }
    }
    Ok(out)
}

//! Positions written as text, the language of `kseek read --from/--to`, of the Python
//! package's `start=`/`end=` and of other front ends: parsing them, and turning them into the
//! library's [`Start`] and [`End`] for the selected partitions.
//!
//! The forms: `earliest`, `latest`, `now`, an RFC 3339 time (`2026-11-30T10:00:00Z`,
//! `2026-11-30T10:00:00.250+01:00`) or a bare date (`2026-11-30`, that day's 00:00 UTC), epoch
//! milliseconds (`1767261600000`), a time relative to now (`-2h`, `-1h30m`, `-90s`, `-1d`,
//! `-500ms`), `offset:N` (every selected partition), `offset:P=N,P=N` (per partition), and
//! `group` (the committed offsets of a consumer group).
//!
//! ```
//! use kseek::position::{self, Position};
//!
//! let now = 1_764_496_800_000; // 2025-11-30T10:00:00Z
//! assert_eq!(position::parse("-2h", now), Ok(Position::Time(now - 7_200_000)));
//! assert_eq!(position::parse("2025-11-30", now), Ok(Position::Time(1_764_460_800_000)));
//! assert!(position::parse("2025-11-30T10:00:00", now).unwrap_err().contains("Add Z"));
//! ```

use std::collections::BTreeMap;

use crate::{Client, End, Start, TimestampMs};

/// A parsed position, before it is applied to the selected partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// The log start offset.
    Earliest,
    /// The last fetchable offset at resolution.
    Latest,
    /// A time (ms since the epoch): `now`, RFC 3339, epoch ms, or relative.
    Time(TimestampMs),
    /// `offset:N`: the same offset in every selected partition.
    Offset(i64),
    /// `offset:P=N,...`: offsets per partition id (of every selected topic).
    Offsets(BTreeMap<i32, i64>),
    /// `group`: the group's committed offsets.
    Group,
}

/// Parses `text` as a position; `now_ms` is the current time, for `now` and relative times.
/// The error is the reason with a hint, ready to follow "invalid position ...: ".
pub fn parse(text: &str, now_ms: TimestampMs) -> Result<Position, String> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "" => return Err(format!("empty position. {FORMS}")),
        "earliest" | "beginning" => return Ok(Position::Earliest),
        "latest" | "end" => return Ok(Position::Latest),
        "now" => return Ok(Position::Time(now_ms)),
        "group" => return Ok(Position::Group),
        _ => {}
    }
    if let Some(rest) = t.strip_prefix("offset:") {
        return parse_offsets(rest);
    }
    if let Some(rest) = t.strip_prefix('-') {
        const HINT: &str = "Write a relative time as -2h, -30m, -90s, -1d, -1h30m or -500ms";
        if rest.is_empty() {
            return Err(format!("'-' needs a duration. {HINT}"));
        }
        let ms = parse_duration(rest).map_err(|why| format!("{why}. {HINT}"))?;
        return now_ms
            .checked_sub(ms)
            .filter(|t| *t >= 0)
            .map(Position::Time)
            .ok_or_else(|| format!("{t} reaches before 1970-01-01. Use a shorter duration"));
    }
    if t.starts_with('+') {
        return Err(format!(
            "relative times count back from now and start with '-' (e.g. -2h). {FORMS}"
        ));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().map(Position::Time).map_err(|_| {
            format!(
                "{t} is too large for epoch milliseconds. Use a time such as 2026-11-30T10:00:00Z"
            )
        });
    }
    if t.as_bytes().get(4) == Some(&b'-') && t.bytes().take(4).all(|b| b.is_ascii_digit()) {
        return parse_rfc3339(t).map(Position::Time);
    }
    Err(format!("unknown position {t:?}. {FORMS}"))
}

/// The list of forms, for error messages.
const FORMS: &str = "Use earliest, latest, now, an RFC 3339 time (2026-11-30T10:00:00Z), a date \
                     (2026-11-30), epoch milliseconds, a relative time (-2h, -1h30m, -90s), \
                     offset:N, offset:P=N,P=N or group";

/// `N` or `P=N,P=N` after `offset:`.
fn parse_offsets(rest: &str) -> Result<Position, String> {
    let offset = |s: &str| -> Result<i64, String> {
        s.trim()
            .parse::<i64>()
            .ok()
            .filter(|o| *o >= 0)
            .ok_or_else(|| format!("offset {:?} is not a non-negative integer", s.trim()))
    };
    if !rest.contains('=') {
        return offset(rest).map(Position::Offset);
    }
    let mut map = BTreeMap::new();
    for pair in rest.split(',') {
        let Some((p, o)) = pair.split_once('=') else {
            return Err(format!(
                "{pair:?} is not PARTITION=OFFSET. Write offset:0=42,1=17"
            ));
        };
        let p: i32 = p
            .trim()
            .parse()
            .ok()
            .filter(|p| *p >= 0)
            .ok_or_else(|| format!("partition {:?} is not a non-negative integer", p.trim()))?;
        if map.insert(p, offset(o)?).is_some() {
            return Err(format!("partition {p} is given twice"));
        }
    }
    Ok(Position::Offsets(map))
}

/// `2h`, `1h30m`, `90s`, `1d`, `500ms` in milliseconds (a relative time after its '-', and
/// the timeout flags). The error says what is wrong, for the caller to add how to write it.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    if text.is_empty() {
        return Err("empty duration".to_owned());
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut total: i64 = 0;
    while i < bytes.len() {
        let digits_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_start {
            return Err(format!("expected a number at {:?}", &text[i..]));
        }
        let n: i64 = text[digits_start..i]
            .parse()
            .map_err(|_| "number too large".to_owned())?;
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit_ms = match &text[unit_start..i] {
            "d" => 86_400_000,
            "h" => 3_600_000,
            "m" => 60_000,
            "s" => 1_000,
            "ms" => 1,
            "" => return Err(format!("{n} needs a unit (d, h, m, s or ms)")),
            other => return Err(format!("unknown unit {other:?}")),
        };
        total = n
            .checked_mul(unit_ms)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| "duration too large".to_owned())?;
    }
    Ok(total)
}

/// An RFC 3339 time or a bare date, in ms since the epoch. Fractions below a millisecond are
/// dropped (Kafka timestamps are milliseconds).
pub fn parse_rfc3339(text: &str) -> Result<TimestampMs, String> {
    let bad = |why: &str| {
        format!("{text:?} is not an RFC 3339 time ({why}). Write e.g. 2026-11-30T10:00:00Z, 2026-11-30T10:00:00.250+01:00 or 2026-11-30")
    };
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = b.get(from..from + len)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (num(0, 4), num(5, 2), num(8, 2)) else {
        return Err(bad("the date must be YYYY-MM-DD"));
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Err(bad("the date must be YYYY-MM-DD"));
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    let days = days_from_civil(year, month, day);
    if b.len() == 10 {
        return check_epoch(text, days * 86_400_000);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return Err(bad("the time must follow a 'T'"));
    }
    let (Some(hour), Some(minute), Some(second)) = (num(11, 2), num(14, 2), num(17, 2)) else {
        return Err(bad("the time must be hh:mm:ss"));
    };
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return Err(bad("the time must be hh:mm:ss"));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(bad("hour, minute or second out of range"));
    }
    let mut i = 19;
    let mut millis = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(bad("a '.' needs digits after it"));
        }
        // The first three digits, right-padded: .2 = 200 ms, .25 = 250 ms, .2509 = 250 ms.
        millis = (0..3).fold(0, |ms, k| {
            ms * 10
                + b.get(start + k)
                    .filter(|_| start + k < i)
                    .map_or(0, |d| i64::from(d - b'0'))
        });
    }
    let offset_ms = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b.get(i + 3) == Some(&b':') => {
            let (Some(oh), Some(om)) = (num(i + 1, 2), num(i + 4, 2)) else {
                return Err(bad("the zone must be Z or +hh:mm"));
            };
            if oh > 23 || om > 59 {
                return Err(bad("zone offset out of range"));
            }
            let ms = (oh * 60 + om) * 60_000;
            if *sign == b'+' {
                ms
            } else {
                -ms
            }
        }
        None => {
            return Err(format!(
                "{text:?} has no time zone. Add Z or +hh:mm (e.g. {text}Z for UTC)"
            ))
        }
        _ => return Err(bad("the zone must be Z or +hh:mm")),
    };
    let local = days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1_000 + millis;
    check_epoch(text, local - offset_ms)
}

fn check_epoch(text: &str, ms: i64) -> Result<TimestampMs, String> {
    if ms < 0 {
        Err(format!(
            "{text:?} is before 1970-01-01T00:00:00Z; Kafka timestamps start there"
        ))
    } else {
        Ok(ms)
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 UTC rendering of `ms` (`2026-11-30T10:00:00.250Z`), for messages.
pub fn format_time(ms: TimestampMs) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // H. Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1_000 % 60,
        rem % 1_000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// Which side of a range a position is for: the rules for partial offset lists differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `--from`, or `commit --to`: every selected partition needs a start.
    Start,
    /// `--to`: unlisted partitions end at latest.
    End,
}

/// The selected partitions, per topic, that positions apply to.
pub type Selection = Vec<(String, Vec<i32>)>;

/// The offsets `given` (`offset:N` or `offset:P=N`; any other position gives none) for the
/// selection: every listed partition must be selected, and for a start every selected
/// partition must have an offset. Returns the (topic, partition) map.
fn offsets_for(
    flag: &str,
    side: Side,
    selection: &Selection,
    given: &Position,
) -> Result<BTreeMap<(String, i32), i64>, String> {
    let (per_partition, all) = match given {
        Position::Offsets(listed) => (Some(listed), None),
        Position::Offset(o) => (None, Some(*o)),
        _ => (None, None),
    };
    let mut map = BTreeMap::new();
    if let Some(listed) = per_partition {
        for p in listed.keys() {
            if !selection.iter().any(|(_, ps)| ps.contains(p)) {
                return Err(format!(
                    "{flag} names partition {p}, which is not selected. Select it with --partition or leave it out of {flag}"
                ));
            }
        }
    }
    for (topic, partitions) in selection {
        for p in partitions {
            let offset = match (per_partition.and_then(|m| m.get(p)), all) {
                (Some(o), _) => *o,
                (None, Some(o)) => o,
                (None, None) if side == Side::Start => {
                    return Err(format!(
                        "{flag} gives no offset for partition {p} of topic {topic:?}. List every selected partition (offset:0=N,1=N) or select fewer with --partition"
                    ))
                }
                (None, None) => continue,
            };
            map.insert((topic.clone(), *p), offset);
        }
    }
    Ok(map)
}

/// The [`Start`] of `position` for the selected partitions. `flag` names the option in errors.
pub fn to_start(
    position: &Position,
    flag: &str,
    group: Option<&str>,
    selection: &Selection,
) -> Result<Start, String> {
    Ok(match position {
        Position::Earliest => Start::Earliest,
        Position::Latest => Start::Latest,
        Position::Time(t) => Start::Timestamp(*t),
        Position::Offset(_) | Position::Offsets(_) => Start::Offsets {
            offsets: offsets_for(flag, Side::Start, selection, position)?,
            default: None,
        },
        Position::Group => Start::Committed {
            group: need_group(flag, group)?,
            fallback: None,
        },
    })
}

/// The [`End`] of `position` for the selected partitions. `flag` names the option in errors.
pub fn to_end(
    position: &Position,
    flag: &str,
    group: Option<&str>,
    selection: &Selection,
) -> Result<End, String> {
    Ok(match position {
        Position::Earliest => End::Earliest,
        Position::Latest => End::Latest,
        Position::Time(t) => End::Timestamp(*t),
        Position::Offset(_) | Position::Offsets(_) => {
            End::Offsets(offsets_for(flag, Side::End, selection, position)?)
        }
        Position::Group => End::Committed {
            group: need_group(flag, group)?,
        },
    })
}

fn need_group(flag: &str, group: Option<&str>) -> Result<String, String> {
    group
        .map(str::to_owned)
        .ok_or_else(|| format!("{flag} group needs --group. Add --group <GROUP>"))
}

/// The partitions that `offset:` positions apply to, per topic (in the order given, without
/// repeats): `partitions` when given, else every partition of the topic as the cluster's
/// metadata lists it. The cluster is asked only when one of `positions` names offsets (the
/// other positions don't depend on the partitions; their selection lists no partitions).
pub async fn selection(
    client: &Client,
    topics: &[String],
    partitions: &[i32],
    positions: &[&Position],
) -> crate::Result<Selection> {
    let names = distinct(topics);
    let names_offsets = positions
        .iter()
        .any(|p| matches!(p, Position::Offset(_) | Position::Offsets(_)));
    if !names_offsets {
        return Ok(names.into_iter().map(|t| (t, Vec::new())).collect());
    }
    if let Some(only) = partition_filter(partitions) {
        return Ok(names.into_iter().map(|t| (t, only.clone())).collect());
    }
    let metadata = client.metadata(&names).await?;
    Ok(metadata
        .into_iter()
        .map(|t| {
            let ps = t.partitions.iter().map(|p| p.partition).collect();
            (t.name, ps)
        })
        .collect())
}

/// `names` without repeats, in the order given.
pub fn distinct(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for n in names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// `partitions` sorted, without repeats; `None` (every partition) when empty.
pub fn partition_filter(partitions: &[i32]) -> Option<Vec<i32>> {
    if partitions.is_empty() {
        return None;
    }
    let mut ps = partitions.to_vec();
    ps.sort_unstable();
    ps.dedup();
    Some(ps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_496_800_000; // 2025-11-30T10:00:00Z

    fn ok(text: &str) -> Position {
        parse(text, NOW).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn err(text: &str) -> String {
        match parse(text, NOW) {
            Ok(p) => panic!("{text} parsed as {p:?}"),
            Err(e) => e,
        }
    }

    /// Each text parses as the time beside it.
    fn times(cases: &[(&str, i64)]) {
        for &(text, ms) in cases {
            assert_eq!(ok(text), Position::Time(ms), "{text}");
        }
    }

    /// Each text is refused with an error that contains the words beside it.
    fn refused(cases: &[(&str, &str)]) {
        for &(text, words) in cases {
            let e = err(text);
            assert!(e.contains(words), "{text}: {e:?} lacks {words:?}");
        }
    }

    #[test]
    fn named_positions() {
        assert_eq!(ok("earliest"), Position::Earliest);
        assert_eq!(ok("LATEST"), Position::Latest);
        assert_eq!(ok("now"), Position::Time(NOW));
        assert_eq!(ok("group"), Position::Group);
    }

    #[test]
    fn rfc3339_times_and_dates() {
        const T: i64 = 1_796_032_800_000; // 2026-11-30T10:00:00Z
        times(&[
            ("2026-11-30T10:00:00Z", T),
            ("2026-11-30T10:00:00.250+01:00", T - 3_600_000 + 250),
            ("2026-11-30t10:00:00-02:30", T + 9_000_000),
            ("2026-11-30 10:00:00.5Z", T + 500),
            ("2026-11-30T10:00:00.123999Z", T + 123),
            ("2026-11-30", T - 36_000_000),
            ("1970-01-01", 0),
            ("2024-02-29T00:00:00Z", 1_709_164_800_000),
            ("2026-01-01T10:00:00Z", 1_767_261_600_000),
        ]);
    }

    #[test]
    fn rfc3339_errors_say_what_to_write() {
        refused(&[
            ("2026-11-30T10:00:00", "no time zone"),
            ("2026-11-30T10:00:00", "Add Z or +hh:mm"),
            ("2026-02-29", "no such date"),
            ("2026-13-01", "no such date"),
            ("2026-11-30T24:00:00Z", "out of range"),
            ("2026-11-30T10:00Z", "hh:mm:ss"),
            ("2026-11-30T10:00:00.Z", "needs digits"),
            ("2026-11-30T10:00:00+0100", "Z or +hh:mm"),
            ("2026-11-30T10:00:00+24:00", "zone offset out of range"),
            ("2026-11-30T10:00:00Zjunk", "Z or +hh:mm"),
            ("2026-1-30", "YYYY-MM-DD"),
            ("1969-12-31", "before 1970"),
        ]);
    }

    #[test]
    fn epoch_milliseconds() {
        times(&[("1767261600000", 1_767_261_600_000), ("0", 0)]);
        refused(&[("99999999999999999999", "too large")]);
    }

    #[test]
    fn relative_times() {
        times(&[
            ("-2h", NOW - 7_200_000),
            ("-30m", NOW - 1_800_000),
            ("-90s", NOW - 90_000),
            ("-1d", NOW - 86_400_000),
            ("-1h30m", NOW - 5_400_000),
            ("-500ms", NOW - 500),
            ("-1m30s250ms", NOW - 90_250),
        ]);
    }

    #[test]
    fn relative_time_errors() {
        refused(&[
            ("-", "needs a duration"),
            ("-2", "needs a unit"),
            ("-2w", "unknown unit \"w\""),
            ("-h", "expected a number"),
            ("+2h", "start with '-'"),
            ("-100000d", "before 1970"),
            ("-99999999999999999999d", "too large"),
        ]);
    }

    #[test]
    fn offsets() {
        assert_eq!(ok("offset:42"), Position::Offset(42));
        assert_eq!(
            ok("offset:0=5, 2=7"),
            Position::Offsets(BTreeMap::from([(0, 5), (2, 7)]))
        );
        refused(&[
            ("offset:-1", "not a non-negative integer"),
            ("offset:x", "not a non-negative integer"),
            ("offset:0=1,0=2", "given twice"),
            ("offset:0=1,7", "not PARTITION=OFFSET"),
            ("offset:-1=3", "partition \"-1\""),
        ]);
    }

    #[test]
    fn unknown_forms_list_the_valid_ones() {
        for text in ["", "yesterday", "10:00", "offset"] {
            let e = err(text);
            assert!(e.contains("earliest, latest, now"), "{text}: {e}");
        }
    }

    #[test]
    fn time_formatting_round_trips() {
        for ms in [0, 1_767_261_600_250, 1_709_164_800_000, 951_782_400_000] {
            assert_eq!(parse_rfc3339(&format_time(ms)), Ok(ms), "{ms}");
        }
        assert_eq!(format_time(1_767_261_600_250), "2026-01-01T10:00:00.250Z");
    }

    fn selection() -> Selection {
        vec![("a".into(), vec![0, 1]), ("b".into(), vec![0])]
    }

    #[test]
    fn starts_for_the_selection() {
        let s = selection();
        assert_eq!(
            to_start(&Position::Earliest, "--from", None, &s),
            Ok(Start::Earliest)
        );
        assert_eq!(
            to_start(&Position::Time(5), "--from", None, &s),
            Ok(Start::Timestamp(5))
        );
        assert_eq!(
            to_start(&Position::Offset(3), "--from", None, &s),
            Ok(Start::Offsets {
                offsets: BTreeMap::from([
                    (("a".into(), 0), 3),
                    (("a".into(), 1), 3),
                    (("b".into(), 0), 3)
                ]),
                default: None
            })
        );
        let e = to_start(
            &Position::Offsets(BTreeMap::from([(0, 1)])),
            "--from",
            None,
            &s,
        )
        .unwrap_err();
        assert!(
            e.contains("no offset for partition 1 of topic \"a\""),
            "{e}"
        );
        let e = to_start(
            &Position::Offsets(BTreeMap::from([(0, 1), (1, 2), (5, 1)])),
            "--from",
            None,
            &s,
        )
        .unwrap_err();
        assert!(e.contains("partition 5, which is not selected"), "{e}");
        let e = to_start(&Position::Group, "--from", None, &s).unwrap_err();
        assert_eq!(e, "--from group needs --group. Add --group <GROUP>");
        assert_eq!(
            to_start(&Position::Group, "--from", Some("g"), &s),
            Ok(Start::Committed {
                group: "g".into(),
                fallback: None
            })
        );
    }

    #[test]
    fn ends_for_the_selection() {
        let s = selection();
        assert_eq!(to_end(&Position::Latest, "--to", None, &s), Ok(End::Latest));
        assert_eq!(
            to_end(&Position::Earliest, "--to", None, &s),
            Ok(End::Earliest)
        );
        assert_eq!(
            to_end(&Position::Time(9), "--to", None, &s),
            Ok(End::Timestamp(9))
        );
        assert_eq!(
            to_end(
                &Position::Offsets(BTreeMap::from([(1, 4)])),
                "--to",
                None,
                &s
            ),
            Ok(End::Offsets(BTreeMap::from([(("a".into(), 1), 4)])))
        );
        assert_eq!(
            to_end(&Position::Group, "--to", Some("g"), &s),
            Ok(End::Committed { group: "g".into() })
        );
    }
}

//! The README's command line examples, run as printed against a real Kafka 4.4 broker.
//!
//! The commands are taken from README.md itself (the `sh` block of "The command line", and
//! the `$ kseek ...` lines of its error examples), so an example edited there is the one that
//! runs here. The only changes: the topic `events` (and `demo` in the error examples) becomes
//! a topic this test creates, and the group `reports` one of its own. The topic gets records
//! written by Kafka's Java producer inside every window the examples name (2026-11-30
//! 10:00-11:00 UTC, two hours ago, since 1767261600000), more than 110 in partitions 0 and 2.
//!
//! Run with `cargo test -p kseek-cli --test readme`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use support::{NewRecord, Record};

/// 2026-11-30T00:00:00Z in ms.
const NOV_30: i64 = 1_795_996_800_000;
const MINUTE: i64 = 60_000;
/// Partitions of the topic.
const PARTITIONS: i32 = 3;

/// The README's text.
fn readme() -> String {
    std::fs::read_to_string(support::repo_root().join("README.md")).expect("README.md")
}

/// The lines of the first fenced block tagged `tag` after the heading `heading`.
fn block(readme: &str, heading: &str, tag: &str) -> Vec<String> {
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has no {heading:?}"));
    let fence = format!("```{tag}\n");
    let start = readme[at..]
        .find(&fence)
        .unwrap_or_else(|| panic!("no ```{tag} block after {heading:?}"))
        + at
        + fence.len();
    let end = readme[start..].find("```").expect("the block ends") + start;
    readme[start..end].lines().map(str::to_owned).collect()
}

/// Runs `line` with bash as a user would type it, in folder `dir`, `kseek` being the binary
/// under test and `KSEEK_BOOTSTRAP` the broker: (exit code, stdout, stderr).
fn run(line: &str, bootstrap: &str, dir: &std::path::Path) -> (i32, String, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_kseek"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env("KSEEK_BOOTSTRAP", bootstrap)
        .stdin(Stdio::null())
        .output()
        .expect("bash");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Replaces the word `from` (not inside a longer word) by `to` in `line`.
fn replace_word(line: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + from.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-');
        out.push_str(&rest[..i]);
        out.push_str(if word(before) || word(after) {
            from
        } else {
            to
        });
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

fn now_ms() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    i64::try_from(now.as_millis()).expect("ms")
}

/// Creates the topic and writes, per partition, one record a minute from 2026-11-30 09:30
/// to 11:30 UTC (120) and one a minute over the last three hours (180).
fn seed() -> (String, Vec<Record>) {
    let broker = support::broker();
    let topic = support::unique_name("readme-events");
    broker.create_topic(&topic, PARTITIONS, &[]);
    let recent = now_ms() - 180 * MINUTE;
    let times: Vec<i64> = (0..120)
        .map(|m| NOV_30 + 570 * MINUTE + m * MINUTE)
        .chain((0..180).map(|m| recent + m * MINUTE))
        .collect();
    let input: Vec<_> = times
        .iter()
        .enumerate()
        .flat_map(|(i, &t)| {
            (0..PARTITIONS).map(move |p| {
                NewRecord::new()
                    .partition(p)
                    .key(format!("user-{i}"))
                    .value(format!("{{\"seq\":{i}}}"))
                    .timestamp(t + i64::from(p))
                    .into()
            })
        })
        .collect();
    let records = broker.produce(&topic, &input);
    assert_eq!(records.len(), input.len());
    (topic, records)
}

#[test]
fn the_command_line_examples_run_as_printed() {
    let (topic, records) = seed();
    let group = support::unique_name("readme-reports");
    let bootstrap = support::broker().bootstrap();
    let lines: Vec<String> = block(&readme(), "## The command line", "sh")
        .into_iter()
        .filter(|l| l.starts_with("kseek "))
        .collect();
    assert!(lines.len() >= 9, "the examples: {lines:?}");
    let dir = std::env::temp_dir().join(support::unique_name("readme"));
    std::fs::create_dir_all(&dir).expect("a folder to run the examples in");
    for line in &lines {
        let line = replace_word(&replace_word(line, "events", &topic), "reports", &group);
        eprintln!("$ {line}");
        let (code, stdout, stderr) = run(&line, bootstrap, &dir);
        assert_eq!(code, 0, "{line}\nstdout: {stdout}\nstderr: {stderr}");
        assert!(
            !stderr.contains("kseek:"),
            "no error or notice: {line}\n{stderr}"
        );
        // The hour of 2026-11-30 the first example reads: exactly the records written in it,
        // one JSON line each.
        if line.starts_with("kseek read --topic")
            && line.contains("--from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z")
            && !line.contains(" -o ")
        {
            let (from, to) = (NOV_30 + 600 * MINUTE, NOV_30 + 660 * MINUTE);
            let expected = records
                .iter()
                .filter(|r| (from..to).contains(&r.timestamp))
                .count();
            assert_eq!(
                expected, 180,
                "the seeding puts 60 records a partition there"
            );
            assert_eq!(stdout.lines().count(), expected, "{line}");
        }
        if line.contains("-o window.parquet") {
            let file = std::fs::read(dir.join("window.parquet")).expect("window.parquet written");
            assert_eq!(&file[..4], b"PAR1", "a Parquet file");
            assert!(
                stderr.starts_with("read 180 records"),
                "the hour's 180 records: {stderr}"
            );
        }
        // The hour's splits: the topic's few bytes make one split a partition, each of the
        // hour's 60 offsets there.
        if line.starts_with("kseek splits") {
            let splits: Vec<serde_json::Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).expect("a split as JSON"))
                .collect();
            assert_eq!(splits.len(), PARTITIONS as usize, "{stdout}");
            for split in &splits {
                assert_eq!(split["topic"], topic.as_str(), "{split}");
                let (start, end) = (split["start"].as_i64(), split["end"].as_i64());
                assert_eq!(end.unwrap() - start.unwrap(), 60, "{split}");
            }
        }
        if line.contains("--format raw") {
            assert_eq!(stdout.lines().count(), 10, "--count 10: {line}\n{stdout}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_error_examples_print_what_the_readme_says() {
    let (topic, _) = seed();
    let bootstrap = support::broker().bootstrap();
    let lines = block(&readme(), "Every error is one line on stderr", "text");
    let mut checked = 0;
    for pair in lines.windows(2) {
        let Some(command) = pair[0].strip_prefix("$ ") else {
            continue;
        };
        let expected = &pair[1];
        let command = replace_word(command, "demo", &topic);
        let (code, stdout, stderr) = run(&command, bootstrap, &std::env::temp_dir());
        assert!(code == 2 || code == 3, "{command}: exit {code}\n{stderr}");
        assert_eq!(stdout, "", "{command}");
        assert_eq!(stderr.trim_end(), expected.as_str(), "{command}");
        checked += 1;
    }
    assert!(checked >= 4, "the error examples: {lines:?}");
}

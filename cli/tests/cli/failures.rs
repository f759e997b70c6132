//! Failures and their exit codes: bad arguments and positions (2), unknown topics,
//! unreachable or silent servers (3), and their one-line messages; help and version.

use super::*;

#[test]
fn bad_positions_and_arguments_exit_2_with_one_line() {
    // No broker needed: these fail before connecting (the bootstrap goes nowhere).
    let b = ["--bootstrap", "127.0.0.1:9"];
    for (pos, hint) in [
        ("yesterday", "yesterday"),
        ("2026-01-01T10:00:00", "add Z or +hh:mm"),
        ("offset:x", "offset:x"),
        ("2026-13-01", "2026-13-01"),
        ("-5x", "-5x"),
    ] {
        let r = kseek_bare(&[&["read", "--topic", "t", "--from", pos], &b[..]].concat());
        let line = r.error(2);
        assert!(
            line.to_lowercase().contains(&hint.to_lowercase()),
            "{line:?} mentions {hint:?}"
        );
        let r = kseek_bare(&[&["offsets", "--topic", "t", "--to", pos], &b[..]].concat());
        r.error(2);
    }
    let r = kseek_bare(&[&["read", "--topic", "t", "--from", "group"], &b[..]].concat());
    let line = r.error(2);
    assert!(line.contains("--group"), "{line}");
    for args in [
        &["read", "--topic", "t", "--commit"][..],
        &["read", "--topic", "t", "--follow", "--to", "latest"],
        &["read", "--topic", "t", "--isolation", "sometimes"],
        &["read", "--topic", "t", "--count", "many"],
        &["read"],
        &["frobnicate"],
    ] {
        let r = kseek_bare(&[args, &b[..]].concat());
        assert_eq!(r.code, 2, "{}: {}", r.what, r.stderr);
    }
}

#[test]
fn offset_positions_must_name_every_partition_for_from() {
    let broker = support::broker();
    let s = seeded(broker);
    let r = kseek(
        broker,
        &["read", "--topic", &s.topic, "--from", "offset:0=1"],
    );
    assert_eq!(r.stdout, b"", "{}", r.what);
    r.error(2);
}

#[test]
fn an_unknown_topic_and_an_unreachable_bootstrap_exit_3_with_one_line_quickly() {
    let broker = support::broker();
    let missing = support::unique_name("cli-no-such-topic");
    for sub in ["read", "offsets"] {
        let r = kseek(broker, &[sub, "--topic", &missing]);
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(line.contains(&missing), "{line}");
        assert!(
            r.took < Duration::from_secs(30),
            "{} took {:?}",
            r.what,
            r.took
        );
    }
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dead = format!("127.0.0.1:{port}");
    for args in [
        &["read", "--topic", "t"][..],
        &["metadata"],
        &["committed", "--group", "g"],
    ] {
        let r = kseek_bare(&[args, &["--bootstrap", &dead][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(line.contains(&dead), "{line}");
        assert!(
            r.took < Duration::from_secs(30),
            "{} took {:?}",
            r.what,
            r.took
        );
    }
}

/// Every usage error, clap's own included, is one line `kseek: ...` that names the flag (or
/// what is missing) and says what to do, with exit 2 and nothing on stdout. No broker needed.
#[test]
fn usage_errors_are_one_line_that_names_the_flag_and_says_what_to_do() {
    let b = ["--bootstrap", "127.0.0.1:9"];
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["read", "--topic", "t", "--partition", "-1"],
            &["--partition", "\"-1\"", "must be >= 0"],
        ),
        (
            &["read", "--topic", "t", "--partition", "abc"],
            &["--partition", "\"abc\"", "Give 0, 1, 2"],
        ),
        (
            &["offsets", "--topic", "t", "--partition", "0,x"],
            &["--partition", "\"x\""],
        ),
        (
            &["commit", "--group", "g", "--topic", "t"],
            &["commit needs --to", "Add it"],
        ),
        (
            &["read", "--topic", "t", "--isolation", "committed"],
            &[
                "--isolation",
                "\"committed\"",
                "read_uncommitted or read_committed",
                "did you mean read_committed?",
            ],
        ),
        (
            &["read", "--topic", "t", "--bogus"],
            &["read has no flag --bogus", "kseek read --help"],
        ),
        (
            &["read", "--topic", "t", "--topc", "x"],
            &["--topc", "did you mean --topic?"],
        ),
        (&["read", "--topic"], &["--topic needs a value"]),
        (
            &["read", "--topic", "t", "--from"],
            &["--from needs a value"],
        ),
        (
            &["commit", "--group", "g", "--topic", "t", "--to"],
            &["--to needs a value"],
        ),
        (
            &["offsets", "--topic", "t", "--format"],
            &["--format needs a value", "table or json"],
        ),
        (
            &["offsets", "--topic", "t", "--format", "raw"],
            &["--format", "\"raw\"", "table or json"],
        ),
        (&["read"], &["read needs --topic"]),
        (
            &["read", "--topic", "t", "--commit"],
            &["read needs --group"],
        ),
        (
            &["read", "--topic", "t", "--count", "0"],
            &["--count", "1 or more"],
        ),
        (
            &["read", "--topic", "t", "--count", "many"],
            &["--count", "\"many\""],
        ),
        (
            &["read", "--topic", "t", "--follow", "--to", "latest"],
            &["--follow can't be used with --to"],
        ),
        (
            &["read", "--topic", "t", "--from", "-1h", "--from", "-2h"],
            &["--from is given twice"],
        ),
        (
            &["read", "--topic", "t", "stray"],
            &["\"stray\"", "kseek read --help"],
        ),
        (
            &["frobnicate"],
            &[
                "unknown subcommand \"frobnicate\"",
                "read, offsets, splits, read-split, metadata",
            ],
        ),
        (&["comit"], &["did you mean", "commit"]),
        (
            &[],
            &[
                "needs a subcommand",
                "read, offsets, splits, read-split, metadata",
            ],
        ),
        (
            &["metadata", "--request-timeout", "5x"],
            &["--request-timeout", "\"5x\"", "500ms, 5s"],
        ),
        (
            &["metadata", "--connect-timeout", "0s"],
            &["--connect-timeout", "more than 0"],
        ),
        (
            &["metadata", "--request-timeout", "-1s"],
            &["--request-timeout", "can't be negative"],
        ),
        (
            &["metadata", "--bootstrap", ","],
            &["--bootstrap", "names no server", "HOST:PORT"],
        ),
    ];
    for (args, says) in cases {
        // The bootstrap goes first, so that it is no flag's missing value.
        let all: Vec<&str> = if args.contains(&"--bootstrap") {
            args.to_vec()
        } else {
            [&b[..], args].concat()
        };
        let r = kseek_bare(&all);
        let line = r.error(2);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(line.ends_with('.'), "{}: {line}", r.what);
        assert!(!line.contains("error:"), "{}: {line}", r.what);
        for s in *says {
            assert!(line.contains(s), "{}: {line:?} does not say {s:?}", r.what);
        }
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.arg("metadata").env("KSEEK_BOOTSTRAP", " , ");
    let r = run(cmd);
    let line = r.error(2);
    assert!(line.contains("KSEEK_BOOTSTRAP"), "{line}");
}

/// --help and --version print as clap prints them, on stdout, with exit 0.
#[test]
fn help_and_version_are_clap_s_own_with_exit_0() {
    let r = kseek_bare(&["--version"]).ok();
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        format!("kseek {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(r.stderr, "");
    for (args, usage) in [
        (&["--help"][..], "Usage: kseek [OPTIONS] <COMMAND>"),
        (
            &["read", "--help"],
            "Usage: kseek read [OPTIONS] --topic <TOPIC>",
        ),
        (&["help", "commit"], "Usage: kseek commit [OPTIONS]"),
    ] {
        let r = kseek_bare(args).ok();
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains(usage), "{}: {out}", r.what);
        assert!(out.lines().count() > 10, "{}: {out}", r.what);
        assert_eq!(r.stderr, "", "{}", r.what);
    }
    let r = kseek_bare(&["metadata", "--help"]).ok();
    let out = String::from_utf8_lossy(&r.stdout);
    for flag in ["--connect-timeout", "--request-timeout", "--retry-deadline"] {
        assert!(out.contains(flag), "{flag} in {out}");
    }
}

/// A server that accepts connections and never answers fails the command by
/// --request-timeout, with exit 3 and one line, instead of the default 30 s.
#[test]
fn a_server_that_accepts_and_never_answers_fails_by_the_request_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
    let address = listener.local_addr().expect("its address").to_string();
    // Accepts every connection and keeps it open, reading nothing and writing nothing. The
    // listener is bound before kseek starts, so kseek's connect can't come too early.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    for (args, timeout) in [
        (
            &["metadata", "--request-timeout", "1s"][..],
            Duration::from_secs(1),
        ),
        (
            &["read", "--topic", "t", "--request-timeout", "700ms"],
            Duration::from_millis(700),
        ),
    ] {
        let r = kseek_bare(&[args, &["--bootstrap", &address][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(
            r.took >= timeout,
            "{}: failed before its timeout: {:?}",
            r.what,
            r.took
        );
        assert!(
            r.took < Duration::from_secs(10),
            "{} took {:?}",
            r.what,
            r.took
        );
        assert!(line.contains(&address), "{line}");
        assert!(line.contains("timed out"), "{line}");
        assert!(line.contains("--request-timeout"), "{line}");
    }
}

/// A partition the topic doesn't have is the library's error (no CLI pre-check), one line
/// naming the topic's partitions, exit 3.
#[test]
fn a_partition_the_topic_does_not_have_names_the_partitions_it_has() {
    let broker = support::broker();
    let s = seeded(broker);
    for sub in ["read", "offsets"] {
        let r = kseek(broker, &[sub, "--topic", &s.topic, "--partition", "1,7"]);
        let line = r.error(3);
        assert_eq!(r.stdout, b"", "{}", r.what);
        assert!(line.contains("has no partition 7"), "{line}");
        assert!(line.contains("(it has 3: 0 to 2)"), "{line}");
        assert!(
            line.contains(&format!("kseek metadata --topic {}", s.topic)),
            "{line}"
        );
    }
}

/// A time lookup on a topic in message format v0 (no timestamps; Kafka 2.8 still allows it)
/// ends with advice about the format, not about the broker's log or access rights.
#[test]
fn a_time_lookup_on_a_message_format_v0_topic_says_to_use_an_offset_position() {
    let broker = support::broker_28();
    let topic = broker.new_topic("cli-format-v0", 1, &[("message.format.version", "0.9.0")]);
    let r = kseek(broker, &["offsets", "--topic", &topic, "--from", "-1h"]);
    let line = r.error(3);
    assert!(line.contains("UNSUPPORTED_FOR_MESSAGE_FORMAT"), "{line}");
    assert!(
        line.contains("offset, earliest or latest position"),
        "{line}"
    );
    assert!(!line.contains("access rights"), "{line}");
    assert!(!line.contains("broker's log"), "{line}");
    // Offsets need no timestamps: the same topic reads from earliest.
    kseek(
        broker,
        &["offsets", "--topic", &topic, "--from", "earliest"],
    )
    .ok();
}

/// A missing topic is waited for by the library's retries (a topic just created may be
/// unknown for a moment), as long as --retry-deadline says, then reported in one line.
#[test]
fn a_missing_topic_is_retried_until_the_retry_deadline_then_reported() {
    let broker = support::broker();
    let missing = support::unique_name("cli-missing");
    for args in [
        &["offsets", "--topic", &missing][..],
        &["metadata", "--topic", &missing],
        &["committed", "--group", "g", "--topic", &missing],
        &[
            "commit", "--group", "g", "--topic", &missing, "--to", "offset:0",
        ],
    ] {
        let r = kseek(broker, &[args, &["--retry-deadline", "1s"][..]].concat());
        let line = r.error(3);
        eprintln!("{:?}: {line}", r.took);
        assert!(
            line.contains(&format!("topic {missing:?} does not exist")),
            "{line}"
        );
        // Retried (backoff 100 ms, then 200 ms, ...), and given up well before the CLI's
        // default deadline of 10 s: the flag took effect.
        assert!(
            r.took >= Duration::from_millis(300),
            "{}: {:?}",
            r.what,
            r.took
        );
        assert!(r.took < Duration::from_secs(8), "{}: {:?}", r.what, r.took);
    }
}

#[test]
fn a_start_after_the_end_exits_2_for_latest_and_earliest_too() {
    let broker = support::broker();
    let s = seeded(broker);
    let earlier = rfc3339(at(5, 0));
    for args in [
        &[
            "read", "--topic", &s.topic, "--from", "latest", "--to", "earliest",
        ][..],
        &[
            "offsets", "--topic", &s.topic, "--from", "latest", "--to", &earlier,
        ],
        &[
            "read", "--topic", &s.topic, "--from", &earlier, "--to", "earliest",
        ],
    ] {
        let r = kseek(broker, args);
        let line = r.error(2);
        assert!(
            line.contains("is after end offset")
                && line.ends_with("Pick a --from position before --to."),
            "{line}"
        );
    }
    // A start time after the newest record finds nothing: an empty read, not an error.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &s.topic,
            "--from",
            "2027-01-01T00:00:00Z",
            "--to",
            "earliest",
        ],
    )
    .ok();
    assert_eq!(r.stdout, b"", "{}", r.what);
    assert_eq!(summary(&r).0, 0, "{}", r.stderr);
}

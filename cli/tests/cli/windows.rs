//! Reading windows: every form of position, the output formats, counts and summaries, exact
//! time, empty windows, short partitions, and the same records as kcat.

use super::*;

#[test]
fn read_a_time_window_given_as_rfc3339_epoch_ms_or_with_a_zone_prints_exactly_its_records() {
    for broker in support::brokers() {
        let s = seeded(broker);
        // 10:05:00 to 10:10:00: partition 0 has records exactly at both edges (the first is
        // in, the last is out), partitions 1 and 2 one and two seconds later.
        let (from, to) = (at(5, 0), at(10, 0));
        let expected = s.window(from, to);
        assert_eq!(expected.len(), 15, "minutes 5..9 of 3 partitions");

        let rfc = read(
            broker,
            &s.topic,
            &["--from", &rfc3339(from), "--to", &rfc3339(to)],
        );
        assert_json_records(&rfc, &s.topic, &expected);

        let ms = read(
            broker,
            &s.topic,
            &["--from", &from.to_string(), "--to", &to.to_string()],
        );
        assert_eq!(
            ms.stdout,
            rfc.stdout,
            "epoch ms as RFC 3339 ({:?})",
            broker.version()
        );

        let zoned = read(
            broker,
            &s.topic,
            &[
                "--from",
                "2026-01-01T11:05:00.000+01:00",
                "--to",
                "2026-01-01T05:10:00-05:00",
                "--format",
                "json",
            ],
        );
        assert_eq!(
            zoned.stdout,
            rfc.stdout,
            "with a zone ({:?})",
            broker.version()
        );

        // One millisecond after the edge record of partition 0: it is out, and the record
        // one ms before the end of partition 1 (10:10:01) is in with --to 10:10:01.001.
        let edge = read(
            broker,
            &s.topic,
            &[
                "--from",
                "2026-01-01T10:05:00.001Z",
                "--to",
                "1767262201001",
            ],
        );
        assert_json_records(&edge, &s.topic, &s.window(from + 1, at(10, 1) + 1));
    }
}

#[test]
fn read_by_offsets_earliest_latest_dates_relative_times_and_partitions() {
    for broker in support::brokers() {
        let s = seeded(broker);
        let t = s.topic.as_str();
        let all: Vec<&Record> = s.records.iter().collect();

        let r = read(broker, t, &["--from", "offset:3", "--to", "offset:7"]);
        let want: Vec<&Record> = (0..PARTITIONS).flat_map(|p| s.offsets(p, 3, 7)).collect();
        assert_json_records(&r, t, &want);

        // Per partition: partitions not named in --to end at latest.
        let r = read(
            broker,
            t,
            &["--from", "offset:0=2,1=4,2=6", "--to", "offset:0=5"],
        );
        let want: Vec<&Record> =
            [s.offsets(0, 2, 5), s.offsets(1, 4, 99), s.offsets(2, 6, 99)].concat();
        assert_json_records(&r, t, &want);

        // Everything, including the null key, the base64 value and header, the tombstone.
        let r = read(broker, t, &["--from", "earliest", "--to", "latest"]);
        assert_json_records(&r, t, &all);
        assert_eq!(read(broker, t, &[]).stdout, r.stdout, "the defaults");
        let dates = read(broker, t, &["--from", "2026-01-01", "--to", "2026-01-02"]);
        assert_eq!(dates.stdout, r.stdout, "bare dates are 00:00 UTC");
        let now = read(broker, t, &["--to", "now", "--isolation", "read_committed"]);
        assert_eq!(now.stdout, r.stdout, "--to now");
        // The data is from 2026-01-01, long before an hour ago.
        let recent = read(broker, t, &["--from", "-1h30m"]);
        assert_eq!(recent.lines(), Vec::<String>::new(), "--from -1h30m");
        let day = read(
            broker,
            t,
            &["--from", "2026-01-01T09:00:00Z", "--to", "-1d"],
        );
        assert_eq!(day.stdout, r.stdout, "--to -1d");

        let r = read(broker, t, &["--partition", "0,2", "--to", "offset:2"]);
        assert_json_records(&r, t, &[s.offsets(0, 0, 2), s.offsets(2, 0, 2)].concat());
        let r = read(
            broker,
            t,
            &[
                "--partition",
                "1",
                "--partition",
                "2",
                "--from",
                "offset:19",
            ],
        );
        assert_json_records(
            &r,
            t,
            &[s.offsets(1, 19, 20), s.offsets(2, 19, 20)].concat(),
        );
    }
}

#[test]
fn raw_and_template_formats() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let window = [
        "--from",
        "2026-01-01T10:18:00Z",
        "--to",
        "2026-01-01T11:00:00Z",
    ];

    // raw: the value bytes and a newline; a null value is an empty line.
    let raw = read(
        broker,
        t,
        &[&window[..], &["--partition", "0", "--format", "raw"]].concat(),
    );
    let mut want = b"v18-p0\nv19-p0\n".to_vec();
    want.extend([0xff, 0x00, 0x80, b'x', b'\n', b'\n']);
    assert_eq!(raw.stdout, want, "{}", raw.what);

    let fmt = r"%t|%p|%o|%T|%k|%s|%K|%S|%h|%%|\t|\\\n";
    let r = read(
        broker,
        t,
        &[&window[..], &["--partition", "1", "--format", fmt]].concat(),
    );
    let want: String = s
        .offsets(1, 18, 20)
        .iter()
        .map(|r| {
            let i = r.offset;
            format!(
                "{t}|1|{i}|{}|k1-{i}|v{i}-p1|{}|{}|minute={i},src=cli-test|%|\t|\\\n",
                r.timestamp,
                format!("k1-{i}").len(),
                format!("v{i}-p1").len()
            )
        })
        .collect();
    assert_eq!(String::from_utf8_lossy(&r.stdout), want, "{}", r.what);

    // The tombstone: an empty value and length -1; a null key prints empty, length -1.
    let r = read(
        broker,
        t,
        &[
            "--partition",
            "0",
            "--from",
            "offset:20",
            "--format",
            "[%k|%K|%S]\n",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "[|-1|4]\n[tomb|4|-1]\n",
        "{}",
        r.what
    );
}

#[test]
fn count_stops_after_n_records_and_the_summary_counts_them() {
    let broker = support::broker();
    let s = seeded(broker);
    let t = s.topic.as_str();
    let args = ["read", "--topic", t, "--partition", "1", "--count", "5"];
    let r = kseek(broker, &args).ok();
    assert_json_records(&r, t, &s.offsets(1, 0, 5));
    // Keys "k1-0".."k1-4" (4 bytes) and values "v0-p1".."v4-p1" (5 bytes).
    let (records, bytes, partitions, _) = summary(&r);
    assert_eq!((records, bytes, partitions), (5, 45, 1), "{}", r.stderr);

    // Unbounded (--follow) reads end after --count too.
    let r = read(
        broker,
        t,
        &[
            "--partition",
            "2",
            "--from",
            "offset:10",
            "--follow",
            "--count",
            "3",
        ],
    );
    assert_json_records(&r, t, &s.offsets(2, 10, 13));

    // -q: no summary.
    let r = read(broker, t, &["--count", "1", "--partition", "0"]);
    assert_eq!(r.stderr, "", "{}", r.what);
}

#[test]
fn a_whole_read_reports_records_bytes_and_partitions() {
    let broker = support::broker();
    let s = seeded(broker);
    let r = kseek(broker, &["read", "--topic", &s.topic, "--format", "raw"]).ok();
    let bytes: usize = s
        .records
        .iter()
        .map(|r| r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len))
        .sum();
    let (records, b, partitions, _) = summary(&r);
    assert_eq!(
        (records, b, partitions),
        (s.records.len() as u64, bytes as u64, 3),
        "{}",
        r.stderr
    );
}

#[test]
fn exact_time_drops_the_out_of_order_records_inside_the_offset_range() {
    let broker = support::broker();
    let topic = broker.new_topic("cli-exact", 1, &[]);
    // Create times out of order: 10:00, 10:03, 10:01, 10:09, 10:04, 10:12.
    let minutes = [0, 3, 1, 9, 4, 12];
    let input: Vec<support::Input> = minutes
        .iter()
        .map(|&m| {
            NewRecord::new()
                .partition(0)
                .timestamp(at(m, 0))
                .key(format!("m{m}"))
                .value("x")
                .into()
        })
        .collect();
    let written = broker.produce(&topic, &input);
    let window = [
        "--from",
        "2026-01-01T10:02:00Z",
        "--to",
        "2026-01-01T10:10:00Z",
    ];
    // The offset range: from the first offset at or after 10:02 (offset 1, 10:03) to the
    // first at or after 10:10 (offset 5, 10:12): offsets 1..5, including 10:01.
    let plain = read(broker, &topic, &window);
    assert_json_records(&plain, &topic, &written[1..5].iter().collect::<Vec<_>>());
    // --exact-time keeps only 10:02 <= t < 10:10 of that range: 10:03, 10:09, 10:04.
    let exact = read(broker, &topic, &[&window[..], &["--exact-time"]].concat());
    assert_json_records(&exact, &topic, &[&written[1], &written[3], &written[4]]);
}

#[test]
fn an_empty_window_and_a_window_after_the_last_record_end_at_once_with_nothing() {
    for broker in support::brokers() {
        let s = seeded(broker);
        for (from, to) in [
            ("2026-01-01T09:00:00Z", "2026-01-01T09:30:00Z"),
            ("2026-01-01T10:05:00Z", "2026-01-01T10:05:00Z"),
            ("2027-01-01T00:00:00Z", "latest"),
            ("2027-01-01T00:00:00Z", "2027-01-02T00:00:00Z"),
        ] {
            let r = kseek(
                broker,
                &["read", "--topic", &s.topic, "--from", from, "--to", to],
            )
            .ok();
            assert_eq!(r.stdout, b"", "{}", r.what);
            let (records, bytes, _, _) = summary(&r);
            assert_eq!((records, bytes), (0, 0), "{}", r.stderr);
            assert!(
                r.took < Duration::from_secs(5),
                "{} took {:?}",
                r.what,
                r.took
            );
        }
    }
}

/// The `--format json` plan rows of `kseek offsets` as (partition, start, end, records).
fn plan_rows(run: &Run) -> Vec<(i64, i64, i64, i64)> {
    run.json_lines()
        .iter()
        .map(|v| {
            let n = |f: &str| {
                v[f].as_i64()
                    .unwrap_or_else(|| panic!("{}: {f} in {v}", run.what))
            };
            (n("partition"), n("start"), n("end"), n("records"))
        })
        .collect()
}

#[test]
fn a_start_past_a_short_partition_reads_the_others_and_the_plan_starts_at_the_log_start() {
    let broker = support::broker();
    let topic = broker.new_topic("kseek-short", 3, &[]);
    // Partitions 0 and 1 hold 120 records, partition 2 only 36.
    let input: Vec<support::Input> = [(0, 120), (1, 120), (2, 36)]
        .into_iter()
        .flat_map(|(p, n)| {
            (0..n).map(move |i| {
                NewRecord::new()
                    .partition(p)
                    .timestamp(at(0, 0) + i)
                    .value(format!("p{p}-{i}"))
                    .into()
            })
        })
        .collect();
    broker.produce(&topic, &input);
    let all = broker.consume(&topic);
    let want = |p: i32, from: i64| -> Vec<&Record> {
        all.iter()
            .filter(|r| r.partition == p && r.offset >= from)
            .collect()
    };

    // The form the help shows: partition 2 ends at 36, so its range is empty, with a notice;
    // partition 0 is read from 100.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &topic,
            "--partition",
            "0,2",
            "--from",
            "offset:100",
            "-q",
        ],
    )
    .ok();
    assert_json_records(&r, &topic, &want(0, 100));
    assert!(
        r.stderr.contains(&format!(
            "partition 2 of topic \"{topic}\" ends at offset 36, before --from offset 100: nothing to read there."
        )),
        "{}",
        r.stderr
    );
    // Over all partitions, and the plan says the same without reading.
    let r = kseek(
        broker,
        &[
            "offsets",
            "--topic",
            &topic,
            "--from",
            "offset:50",
            "--format",
            "json",
        ],
    )
    .ok();
    assert_eq!(
        plan_rows(&r),
        [(0, 50, 120, 70), (1, 50, 120, 70), (2, 36, 36, 0)],
        "{}",
        r.what
    );
    // An explicit end before the start stays an error.
    let r = kseek(
        broker,
        &[
            "read",
            "--topic",
            &topic,
            "--from",
            "offset:100",
            "--to",
            "offset:50",
        ],
    );
    assert!(
        r.error(2)
            .contains("start offset 100 is after end offset 50"),
        "{}",
        r.stderr
    );

    // After DeleteRecords up to 100 in partition 1, the plan starts at the log start and
    // counts what is left; the notice says "deleted" without guessing why.
    broker.delete_records(&topic, 1, 100);
    let args = [
        "--topic",
        &topic,
        "--partition",
        "1",
        "--from",
        "offset:50",
        "--to",
        "offset:120",
    ];
    let r = kseek(
        broker,
        &[&["offsets"][..], &args, &["--format", "json"]].concat(),
    )
    .ok();
    assert_eq!(plan_rows(&r), [(1, 100, 120, 20)], "{}", r.what);
    let notice = format!(
        "partition 1 of topic \"{topic}\": offsets 50 to 99 were deleted; the range starts at the log start, 100."
    );
    assert!(r.stderr.contains(&notice), "{}", r.stderr);
    let r = kseek(broker, &[&["read"][..], &args, &["-q"]].concat()).ok();
    assert_json_records(&r, &topic, &want(1, 100));
    assert!(r.stderr.contains(&notice), "{}", r.stderr);
    assert!(!r.stderr.contains("retention"), "{}", r.stderr);
}

/// Splits template output into lines grouped by partition (the first field), in output order.
fn by_partition(out: &[u8]) -> BTreeMap<Vec<u8>, Vec<Vec<u8>>> {
    let mut m: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    let body = out.strip_suffix(b"\n").unwrap_or(out);
    if body.is_empty() {
        return m;
    }
    for line in body.split(|&b| b == b'\n') {
        let p = line.split(|&b| b == b' ').next().unwrap_or_default();
        m.entry(p.to_vec()).or_default().push(line.to_vec());
    }
    m
}

#[test]
fn kcat_and_kseek_print_the_same_records_for_the_same_time_window() {
    let version = Command::new("kcat").arg("-V").output();
    assert!(
        matches!(&version, Ok(o) if o.status.success()),
        "kcat is not installed (Debian/Ubuntu: apt-get install kcat); the comparison with kcat \
         needs it: {version:?}"
    );
    let format = r"%p %o %T %k %s\n";
    for broker in support::brokers() {
        let s = seeded(broker);
        // Windows whose edges fall exactly on records of some partition (kcat's s@ is inclusive,
        // e@ exclusive, like kseek), one covering the odd records at the end of partition 0,
        // one before everything, one after everything.
        for (from, to) in [
            (at(5, 0), at(12, 1)),
            (at(5, 2), at(12, 0)),
            (at(15, 0), at(60, 0)),
            (TEN - 60 * MINUTE, at(3, 1)),
            (at(7, 1), at(7, 1) + 1),
            (at(100, 0), at(200, 0)),
        ] {
            let mut cmd = Command::new("kcat");
            cmd.args(["-C", "-q", "-e", "-b", broker.bootstrap(), "-t", &s.topic])
                .args(["-o", &format!("s@{from}"), "-o", &format!("e@{to}")])
                .args(["-f", format]);
            let kcat = run(cmd).ok();
            let kseek = read(
                broker,
                &s.topic,
                &[
                    "--from",
                    &from.to_string(),
                    "--to",
                    &to.to_string(),
                    "--format",
                    format,
                ],
            );
            let (k, ks) = (by_partition(&kcat.stdout), by_partition(&kseek.stdout));
            let count =
                |m: &BTreeMap<Vec<u8>, Vec<Vec<u8>>>| m.values().map(Vec::len).sum::<usize>();
            eprintln!(
                "kcat vs kseek on {:?}, {from}..{to}: {} and {} records",
                broker.version(),
                count(&k),
                count(&ks)
            );
            assert_eq!(
                k,
                ks,
                "kcat and kseek differ on {from}..{to} ({:?})",
                broker.version()
            );
            // And both are exactly the records the Java producer wrote in the window.
            let mut want = Vec::new();
            for r in s.window(from, to) {
                want.extend(format!("{} {} {} ", r.partition, r.offset, r.timestamp).bytes());
                want.extend(r.key.as_deref().unwrap_or_default());
                want.push(b' ');
                want.extend(r.value.as_deref().unwrap_or_default());
                want.push(b'\n');
            }
            assert_eq!(
                ks,
                by_partition(&want),
                "{from}..{to} ({:?})",
                broker.version()
            );
        }
    }
}

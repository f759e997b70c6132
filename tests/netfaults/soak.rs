//! The soak: connections cut at random while a large read runs, every record compared by
//! its fingerprint (the short soak runs by default; `tests/soak` runs `soak_long`).

use super::*;

/// FNV-1a over a record's timestamp, key, value and headers: a per-record fingerprint, so a
/// soak of millions of records is compared record by record without keeping the records.
fn fingerprint(
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], Option<&[u8]>)],
) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&timestamp.to_le_bytes());
    let field = |eat: &mut dyn FnMut(&[u8]), b: Option<&[u8]>| match b {
        None => eat(&[0xff; 8]),
        Some(b) => {
            eat(&(b.len() as u64).to_le_bytes());
            eat(b);
        }
    };
    field(&mut eat, key);
    field(&mut eat, value);
    for (k, v) in headers {
        field(&mut eat, Some(k));
        field(&mut eat, *v);
    }
    h
}

/// What the producer stored, per partition: the first offset and each record's fingerprint.
struct Stored {
    partitions: BTreeMap<i32, (i64, Vec<u64>)>,
}

impl Stored {
    fn records(&self) -> usize {
        self.partitions.values().map(|(_, f)| f.len()).sum()
    }
}

/// Writes `records` records over `partitions` partitions with the Java producer (ktool,
/// streamed: a flush every 10k records keeps its memory flat) and returns what it stored.
fn produce_fingerprinted(broker: &Broker, topic: &str, partitions: i32, records: usize) -> Stored {
    let mut child = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kafka/ktool"))
        .args(["produce", "--topic", topic, "--batch-size", "65536"])
        .args(["--bootstrap", broker.bootstrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running tests/kafka/ktool");
    let mut stdin = std::io::BufWriter::new(child.stdin.take().unwrap());
    let feeder = std::thread::spawn(move || -> std::io::Result<()> {
        for i in 0..records {
            let p = i as i32 % partitions;
            // About 100 bytes of value, different for every record.
            writeln!(
                stdin,
                "{{\"partition\":{p},\"key\":\"k{i}\",\"value\":\"{i:012}-{:088x}\",\"headers\":[[\"n\",\"{i}\"]]}}",
                (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834)
            )?;
            if i % 10_000 == 9_999 {
                writeln!(stdin, "{{\"flush\":true}}")?;
            }
        }
        stdin.flush()
    });
    let mut partitions_out: BTreeMap<i32, (i64, Vec<u64>)> = BTreeMap::new();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        let line = line.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let p = v["partition"].as_i64().unwrap() as i32;
        let offset = v["offset"].as_i64().unwrap();
        let text = |f: &serde_json::Value| f.as_str().map(|s| s.as_bytes().to_vec());
        let key = text(&v["key"]);
        let value = text(&v["value"]);
        let header_value = text(&v["headers"][0][1]);
        let f = fingerprint(
            v["timestamp"].as_i64().unwrap(),
            key.as_deref(),
            value.as_deref(),
            &[(b"n", header_value.as_deref())],
        );
        let entry = partitions_out.entry(p).or_insert((offset, Vec::new()));
        assert_eq!(
            entry.0 + entry.1.len() as i64,
            offset,
            "partition {p}: the producer's offsets are contiguous"
        );
        entry.1.push(f);
    }
    feeder.join().unwrap().expect("feeding ktool");
    assert!(child.wait().unwrap().success(), "ktool produce failed");
    let stored = Stored {
        partitions: partitions_out,
    };
    assert_eq!(stored.records(), records);
    stored
}

/// VmRSS and VmHWM of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The soak's settings.
struct Soak {
    partitions: i32,
    records: usize,
    /// Cuts go on at least this long; the whole plan is read again until it has passed.
    cut_for: Duration,
    cuts: RandomCuts,
}

/// One RSS sample of the soak.
#[derive(Debug)]
struct Sample {
    at: Duration,
    records_read: u64,
    rss_kib: u64,
    hwm_kib: u64,
}

/// Writes the records, then reads the whole plan through a proxy that cuts responses at
/// random, again and again until `cut_for` has passed, checking every record against its
/// stored fingerprint (offset order, no gap, no duplicate) and sampling RSS once a second.
async fn soak(soak: Soak) {
    let broker = support::broker();
    let topic = broker.new_topic("netfaults-soak", soak.partitions, &[]);
    let produced = Instant::now();
    let stored = produce_fingerprinted(broker, &topic, soak.partitions, soak.records);
    eprintln!(
        "soak: {} records in {} partitions written in {:?}",
        stored.records(),
        soak.partitions,
        produced.elapsed()
    );
    let proxy = FaultProxy::start(broker.bootstrap());
    let client = client_via(&proxy).await;
    let plan = whole_plan(&client, &topic).await;
    for p in &plan.partitions {
        let (first, prints) = &stored.partitions[&p.partition];
        assert_eq!(
            (p.start, p.end),
            (*first, Some(first + prints.len() as i64))
        );
    }
    let options = ReadOptions::default()
        .partition_max_bytes(256 * 1024)
        .fetch_max_bytes(1024 * 1024);
    proxy.set_random_cuts(Some(soak.cuts));
    let started = Instant::now();
    let read_so_far = Arc::new(AtomicU64::new(0));
    let (stop_sampling, mut sampling_stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = {
        let read_so_far = read_so_far.clone();
        tokio::spawn(async move {
            let mut samples = vec![];
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                let last = tokio::select! {
                    _ = tick.tick() => false,
                    _ = &mut sampling_stopped => true,
                };
                let (rss_kib, hwm_kib) = memory_kib();
                samples.push(Sample {
                    at: started.elapsed(),
                    records_read: read_so_far.load(Ordering::Relaxed),
                    rss_kib,
                    hwm_kib,
                });
                if last {
                    return samples;
                }
            }
        })
    };
    let mut total: u64 = 0;
    let mut passes = 0;
    // The longest wait for a record (reconnects and retry backoff after cuts).
    let mut longest_stall = Duration::ZERO;
    let mut last_record;
    while passes == 0 || started.elapsed() < soak.cut_for {
        passes += 1;
        let mut next: BTreeMap<i32, i64> = stored
            .partitions
            .iter()
            .map(|(p, (first, _))| (*p, *first))
            .collect();
        let mut stream = client.read(plan.clone(), options.clone()).records();
        last_record = Instant::now();
        let pass = async {
            while let Some(r) = stream.next().await {
                let r = r.unwrap_or_else(|e| {
                    panic!("pass {passes}: the read failed after {total} records: {e}")
                });
                let expected_offset = next.get_mut(&r.partition).expect("a planned partition");
                assert_eq!(
                    r.offset, *expected_offset,
                    "partition {}: offset {} where {} was next (a gap, duplicate or reorder)",
                    r.partition, r.offset, expected_offset
                );
                *expected_offset += 1;
                let (first, prints) = &stored.partitions[&r.partition];
                let headers: Vec<(&[u8], Option<&[u8]>)> = r
                    .headers
                    .iter()
                    .map(|h| (&h.key[..], h.value.as_deref()))
                    .collect();
                let got = fingerprint(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers);
                assert_eq!(
                    got,
                    prints[(r.offset - first) as usize],
                    "partition {} offset {}: not the record the producer stored",
                    r.partition,
                    r.offset
                );
                total += 1;
                let stall = last_record.elapsed();
                last_record = Instant::now();
                if stall > Duration::from_secs(1) {
                    eprintln!(
                        "soak: no record for {stall:?} before record {total} ({:?})",
                        proxy.counters()
                    );
                }
                longest_stall = longest_stall.max(stall);
                read_so_far.store(total, Ordering::Relaxed);
            }
        };
        tokio::time::timeout(soak.cut_for + READ_LIMIT, pass)
            .await
            .expect("a pass of the soak ends");
        for (p, (first, prints)) in &stored.partitions {
            assert_eq!(
                next[p],
                first + prints.len() as i64,
                "pass {passes}: partition {p} ended early"
            );
        }
        assert!(stream.positions().iter().all(|p| p.done));
    }
    proxy.set_random_cuts(None);
    let took = started.elapsed();
    let _ = stop_sampling.send(());
    let samples = sampler.await.expect("the RSS sampler");
    let c = proxy.counters();
    eprintln!(
        "soak: {passes} passes, {total} records compared in {took:?}; {} random cuts, {} connections, {} MiB to the client; longest wait for a record {longest_stall:?}",
        c.random_cuts,
        c.connections,
        c.bytes_to_clients >> 20
    );
    for s in &samples {
        eprintln!(
            "soak rss: t={:>6.1}s records={:>9} VmRSS={:>7} KiB VmHWM={:>7} KiB",
            s.at.as_secs_f64(),
            s.records_read,
            s.rss_kib,
            s.hwm_kib
        );
    }
    assert_eq!(total, passes * stored.records() as u64);
    assert!(
        c.random_cuts >= 5,
        "the soak cut too little to mean anything: {c:?}"
    );
    assert_eq!(c.rewrite_failures, 0);
    // Flat memory: the peak at the end is within a margin of the peak a fifth into the soak.
    let early = samples
        .iter()
        .find(|s| s.at >= took / 5)
        .or(samples.first());
    if let (Some(early), Some(last)) = (early, samples.last()) {
        let allowed = early.hwm_kib + early.hwm_kib / 2 + 32 * 1024;
        assert!(
            last.hwm_kib <= allowed,
            "peak RSS grew from {} KiB at {:?} to {} KiB at {:?}",
            early.hwm_kib,
            early.at,
            last.hwm_kib,
            last.at
        );
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_short_random_cuts_give_the_exact_record_set() {
    soak(Soak {
        partitions: 4,
        records: 200_000,
        cut_for: Duration::from_secs(15),
        cuts: RandomCuts {
            seed: 11,
            probability: 0.25,
            min_gap: Duration::from_millis(100),
        },
    })
    .await;
}

/// The long soak, run by `tests/soak`: `KSEEK_SOAK_RECORDS` (default 2 M) records, cuts for
/// `KSEEK_SOAK_SECONDS` (default 150), seed `KSEEK_SOAK_SEED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "heavy: run through tests/soak"]
async fn soak_long() {
    soak(Soak {
        partitions: 8,
        records: env_or("KSEEK_SOAK_RECORDS", 2_000_000),
        cut_for: Duration::from_secs(env_or("KSEEK_SOAK_SECONDS", 150)),
        cuts: RandomCuts {
            seed: env_or("KSEEK_SOAK_SEED", 20_261_201),
            probability: env_or("KSEEK_SOAK_CUT_PROBABILITY", 0.25),
            min_gap: Duration::from_millis(env_or("KSEEK_SOAK_CUT_GAP_MS", 100)),
        },
    })
    .await;
}

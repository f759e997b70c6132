//! The crate documentation's "read a time window, then commit" example, run for real against
//! Kafka 4.4, 3.9 and 2.8: the records it prints are exactly those the Java producer wrote inside
//! the window, and Kafka's own tools see the commit.

mod support;

use kseek::{CommitOffset, End, ReadOptions, ReadRecord, ReadSpec, Start};
use support::{NewRecord, Record};

/// The example's code, with the printing replaced by collecting.
async fn window(
    bootstrap: &str,
    topic: &str,
    from: i64,
    to: i64,
    group: &str,
) -> kseek::Result<Vec<ReadRecord>> {
    let client = kseek::Client::connect([bootstrap]).await?;
    let spec = ReadSpec::new([topic], Start::Timestamp(from), End::Timestamp(to));
    let plan = client.resolve(&spec).await?;
    let mut records = client.read(plan, ReadOptions::default()).records();
    let mut seen = Vec::new();
    while let Some(record) = records.next().await {
        seen.push(record?);
    }
    let commits: Vec<CommitOffset> = records.positions().into_iter().map(Into::into).collect();
    client.commit(group, &commits).await?;
    Ok(seen)
}

#[tokio::test]
async fn the_documented_window_read_returns_exactly_the_window_and_commits() {
    const TEN: i64 = 1_767_261_600_000; // 2026-01-01T10:00:00Z
    const MINUTE: i64 = 60_000;
    for broker in support::brokers() {
        let topic = broker.new_topic("quickstart", 2, &[]);
        let group = support::unique_name("quickstart-group");
        // One record a minute from 09:55 to 10:10 in each partition, monotonic per partition.
        let input: Vec<_> = (0..16)
            .flat_map(|i| {
                (0..2).map(move |p| {
                    NewRecord::new()
                        .partition(p)
                        .timestamp(TEN - 5 * MINUTE + i * MINUTE)
                        .key(format!("k{i}"))
                        .value(format!("v{i}-p{p}"))
                        .header("minute", Some(i.to_string().as_bytes()))
                        .into()
                })
            })
            .collect();
        let written = broker.produce(&topic, &input);

        let got = window(broker.bootstrap(), &topic, TEN, TEN + 5 * MINUTE, &group)
            .await
            .unwrap();

        let mut expected: Vec<&Record> = written
            .iter()
            .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
            .collect();
        expected.sort_by_key(|r| (r.partition, r.offset));
        let mut got_sorted: Vec<&ReadRecord> = got.iter().collect();
        got_sorted.sort_by_key(|r| (r.partition, r.offset));
        assert_eq!(got_sorted.len(), 10, "5 minutes x 2 partitions");
        assert_eq!(got_sorted.len(), expected.len());
        for (r, e) in got_sorted.iter().zip(&expected) {
            assert_eq!(
                (r.partition, r.offset, r.timestamp),
                (e.partition, e.offset, e.timestamp)
            );
            assert_eq!(r.key.as_deref(), e.key.as_deref());
            assert_eq!(r.value.as_deref(), e.value.as_deref());
            let headers: Vec<(String, Option<Vec<u8>>)> = r
                .headers
                .iter()
                .map(|h| {
                    (
                        String::from_utf8(h.key.to_vec()).unwrap(),
                        h.value.as_ref().map(|v| v.to_vec()),
                    )
                })
                .collect();
            assert_eq!(headers, e.headers);
        }

        // The commit is the next offset after the window in each partition, as Kafka's Admin
        // API (what kafka-consumer-groups --describe uses) reports it.
        let mut committed = broker.describe_group(&group);
        committed.sort_by_key(|c| c.partition);
        let next: Vec<(i32, Option<i64>)> = (0..2)
            .map(|p| {
                let last = expected
                    .iter()
                    .filter(|e| e.partition == p)
                    .map(|e| e.offset)
                    .max();
                (p, last.map(|o| o + 1))
            })
            .collect();
        let seen: Vec<(i32, Option<i64>)> =
            committed.iter().map(|c| (c.partition, c.offset)).collect();
        assert_eq!(seen, next, "{:?}", broker.version());
    }
}

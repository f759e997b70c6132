//! Splits against real Kafka 4.4 and 3.9: reading every split of a plan, in any order and each
//! on a client of its own, gives exactly the records of the unsplit read and of Kafka's own
//! Java consumer, with transactions (read_committed, split boundaries inside an aborted
//! transaction and on its markers) and an exact-time window over out-of-order timestamps.

mod support;

use std::time::Duration;

use kseek::read::{ReadOptions, TimeFilter};
use kseek::{Client, End, IsolationLevel, Plan, ReadSpec, Start};
use support::{Input, Isolation, NewRecord, ProduceOptions, Record};

/// 2026-01-01T10:00:00Z in ms.
const TEN: i64 = 1_767_261_600_000;

fn record(partition: i32, second: i64, value: &str) -> Input {
    NewRecord::new()
        .partition(partition)
        .timestamp(TEN + second * 1000)
        .key(format!("k-{value}"))
        .value(value)
        .header("h", Some(value.as_bytes()))
        .into()
}

/// Reads `plan` on a new client, sorted by partition and offset.
async fn read(bootstrap: &str, plan: Plan, options: ReadOptions) -> Vec<Record> {
    let client = Client::connect(bootstrap.split(',')).await.unwrap();
    support::read_plan_exactly(&client, plan, options, Duration::from_secs(60), |_| {}).await
}

/// Every split of `plan` read on its own client, last split first (any order must do),
/// sorted by partition and offset.
async fn read_splits(bootstrap: &str, plan: &Plan, max: u64, options: &ReadOptions) -> Vec<Record> {
    let splits = plan.splits(max);
    assert!(
        splits.len() > plan.partitions.len(),
        "{} splits",
        splits.len()
    );
    let mut all = Vec::new();
    for split in splits.into_iter().rev() {
        all.extend(read(bootstrap, split, options.clone()).await);
    }
    all.sort_by_key(|r| (r.partition, r.offset));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_split_read_apart_gives_exactly_the_unsplit_read_and_the_java_consumer() {
    for broker in support::brokers_with_transactions() {
        let topic = broker.new_topic("kseek-splits", 2, &[]);
        let transactional = ProduceOptions {
            transactional_id: Some(support::unique_name("txn")),
            ..ProduceOptions::default()
        };
        // Both partitions: a committed transaction, an aborted one of 7 records (so splits of
        // 3 offsets start inside it and on its abort marker), and a committed one; timestamps
        // out of order within each.
        let mut input = vec![Input::Begin];
        for (p, s) in [(0, 0), (1, 1), (0, 5), (0, 2), (1, 9), (0, 3), (1, 4)] {
            input.push(record(p, s, &format!("c1-{p}-{s}")));
        }
        input.extend([Input::Commit, Input::Begin]);
        for s in 10..17 {
            input.push(record(0, s, &format!("aborted-0-{s}")));
            input.push(record(1, s + 1, &format!("aborted-1-{s}")));
        }
        input.extend([Input::Abort, Input::Begin]);
        for (p, s) in [
            (0, 30),
            (0, 21),
            (1, 25),
            (0, 40),
            (1, 20),
            (1, 35),
            (0, 22),
        ] {
            input.push(record(p, s, &format!("c2-{p}-{s}")));
        }
        input.push(Input::Commit);
        let written = broker.produce_with(&topic, &transactional, &input);
        assert_eq!(written.iter().filter(|w| w.aborted).count(), 14);

        let client = Client::connect(broker.bootstrap().split(','))
            .await
            .unwrap();
        for (level, java) in [
            (IsolationLevel::READ_COMMITTED, Isolation::ReadCommitted),
            (IsolationLevel::READ_UNCOMMITTED, Isolation::ReadUncommitted),
        ] {
            let mut expected = broker.consume_with(
                &topic,
                &support::ConsumeOptions {
                    isolation: java,
                    ..Default::default()
                },
            );
            expected.sort_by_key(|r| (r.partition, r.offset));
            let spec = ReadSpec::new([&topic], Start::Earliest, End::Latest).isolation(level);
            let plan = client.resolve(&spec).await.unwrap();
            let whole = read(broker.bootstrap(), plan.clone(), ReadOptions::default()).await;
            assert_eq!(whole, expected, "{:?} {level:?}", broker.version());
            for max in [1, 3, 5] {
                let union =
                    read_splits(broker.bootstrap(), &plan, max, &ReadOptions::default()).await;
                assert_eq!(
                    union,
                    expected,
                    "{:?} {level:?} splits of {max}",
                    broker.version()
                );
            }
        }

        // An exact-time window: 10:00:02 to 10:00:31, over out-of-order timestamps.
        let (from, to) = (TEN + 2_000, TEN + 31_000);
        let spec = ReadSpec::new([&topic], Start::Timestamp(from), End::Timestamp(to))
            .isolation(IsolationLevel::READ_COMMITTED);
        let plan = client.resolve(&spec).await.unwrap();
        let exact = ReadOptions::default().time_filter(TimeFilter::from_spec(&spec).unwrap());
        let whole = read(broker.bootstrap(), plan.clone(), exact.clone()).await;
        assert!(!whole.is_empty());
        assert!(
            whole.iter().all(|r| (from..to).contains(&r.timestamp)),
            "{whole:?}"
        );
        let union = read_splits(broker.bootstrap(), &plan, 2, &exact).await;
        assert_eq!(union, whole, "{:?} exact time", broker.version());
    }
}

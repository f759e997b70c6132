//! Splits against real Kafka 4.4 and 3.9: reading every split of a plan, in any order and each
//! on a client of its own, gives exactly the records of the unsplit read and of Kafka's own
//! Java consumer, with transactions (read_committed, split boundaries inside an aborted
//! transaction and on its markers) and an exact-time window over out-of-order timestamps.

mod support;

use std::time::Duration;

use kseek::read::{ReadOptions, TimeFilter};
use kseek::{Client, End, IsolationLevel, Plan, ReadSpec, Start};
use support::{Isolation, Record, TEN};

/// Reads `plan` on a new client, sorted by partition and offset.
async fn read(bootstrap: &str, plan: Plan, options: ReadOptions) -> Vec<Record> {
    let client = Client::connect(bootstrap.split(',')).await.unwrap();
    support::read_plan_exactly(&client, plan, options, Duration::from_secs(60), |_| {}).await
}

/// Every split in `splits` (pieces of a plan) read on its own client, last split first (any
/// order must do), sorted by partition and offset.
async fn read_splits(bootstrap: &str, splits: Vec<Plan>, options: &ReadOptions) -> Vec<Record> {
    let mut all = Vec::new();
    for split in splits.into_iter().rev() {
        all.extend(read(bootstrap, split, options.clone()).await);
    }
    all.sort_by_key(|r| (r.partition, r.offset));
    all
}

/// `plan` cut into splits of about `fraction` of its bytes, after checking the log sizes
/// kseek learnt (DescribeLogDirs) against Kafka's own LogDirsCommand; more splits than
/// partitions.
async fn by_bytes(client: &Client, broker: &support::Broker, plan: &Plan, parts: u64) -> Vec<Plan> {
    let sizes = client.log_sizes(plan).await.unwrap();
    let topic = &plan.partitions[0].topic;
    let kafka = broker.log_sizes(topic);
    let expected: Vec<u64> = plan
        .partitions
        .iter()
        .map(|p| kafka[&p.partition])
        .collect();
    assert_eq!(
        sizes,
        expected,
        "{:?} log sizes of {topic}",
        broker.version()
    );
    let max_bytes = sizes.iter().sum::<u64>() / parts;
    let splits = plan.splits_by_bytes(max_bytes, &sizes);
    assert!(
        splits.len() > plan.partitions.len(),
        "{} splits of {max_bytes} bytes",
        splits.len()
    );
    splits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_split_read_apart_gives_exactly_the_unsplit_read_and_the_java_consumer() {
    for broker in support::brokers_with_transactions() {
        let topic = support::topic_with_an_aborted_transaction(broker, "kseek-splits");

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
                let union = read_splits(
                    broker.bootstrap(),
                    plan.splits(max),
                    &ReadOptions::default(),
                )
                .await;
                assert_eq!(
                    union,
                    expected,
                    "{:?} {level:?} splits of {max}",
                    broker.version()
                );
            }
            let splits = by_bytes(&client, broker, &plan, 5).await;
            let union = read_splits(broker.bootstrap(), splits, &ReadOptions::default()).await;
            assert_eq!(union, expected, "{:?} {level:?} by bytes", broker.version());
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
        let union = read_splits(broker.bootstrap(), plan.splits(2), &exact).await;
        assert_eq!(union, whole, "{:?} exact time", broker.version());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn splits_across_compaction_gaps_give_exactly_the_java_consumers_records() {
    for broker in support::brokers() {
        // Offsets 0, 2, 4, 6 and 8 compacted away: splits start, end and lie inside gaps.
        let (topic, expected) = support::compacted_topic(broker, "kseek-splits-compact");
        let client = Client::connect(broker.bootstrap().split(','))
            .await
            .unwrap();
        let spec = ReadSpec::new([&topic], Start::Earliest, End::Latest);
        let plan = client.resolve(&spec).await.unwrap();
        for max in [1, 2, 3] {
            let union = read_splits(
                broker.bootstrap(),
                plan.splits(max),
                &ReadOptions::default(),
            )
            .await;
            assert_eq!(union, expected, "{:?} splits of {max}", broker.version());
        }
        // The records grow with their offset, so splits by bytes hold uneven offset counts.
        let splits = by_bytes(&client, broker, &plan, 4).await;
        let union = read_splits(broker.bootstrap(), splits, &ReadOptions::default()).await;
        assert_eq!(union, expected, "{:?} by bytes", broker.version());
    }
}

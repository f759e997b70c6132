//! `kseek committed`: a consumer group's committed offsets, the end offsets and the lag.

use kseek::{ClientConfig, End, ReadSpec, Start};

use crate::args::{CommittedArgs, TableFormat};
use crate::fail::Fail;
use crate::output::{json_str, note, opt, print, table};

/// One row of `kseek committed`: topic, partition, committed offset, end offset, lag.
type LagRow = (String, i32, Option<i64>, Option<i64>, Option<i64>);

/// Runs `kseek committed`: the group's offsets, the end offsets and the lag.
pub(crate) async fn run(config: &ClientConfig, args: CommittedArgs) -> Result<(), Fail> {
    super::check_names("topic", &args.topic)?;
    super::check_names("group", std::slice::from_ref(&args.group))?;
    let client = super::connect(config).await?;
    // The topics asked for go to the library as given: it checks that they exist.
    let asked: Vec<String> = if args.topic.is_empty() {
        let cluster = client
            .cluster_metadata()
            .await
            .map_err(|e| Fail::kafka("fetching the cluster metadata", &e))?;
        cluster.topics.into_iter().map(|t| t.name).collect()
    } else {
        kseek::position::distinct(&args.topic)
    };
    let doing = format!("fetching the committed offsets of group {:?}", args.group);
    let mut offsets = if asked.is_empty() {
        Vec::new()
    } else {
        client
            .committed(&args.group, &asked)
            .await
            .map_err(|e| Fail::kafka(&doing, &e))?
    };
    if args.topic.is_empty() {
        // Every topic: only those the group has an offset for.
        let with_commits: Vec<String> = offsets
            .iter()
            .filter(|c| c.offset.is_some())
            .map(|c| c.topic.clone())
            .collect();
        offsets.retain(|c| with_commits.contains(&c.topic));
    }
    let mut topics: Vec<String> = offsets.iter().map(|c| c.topic.clone()).collect();
    topics.dedup();
    let plan = if topics.is_empty() {
        None
    } else {
        let spec = ReadSpec::new(topics, Start::Earliest, End::Latest);
        Some(
            client
                .resolve(&spec)
                .await
                .map_err(|e| Fail::kafka("looking up the end offsets", &e))?,
        )
    };
    let end = |topic: &str, partition: i32| {
        plan.as_ref().and_then(|plan| {
            plan.partitions
                .iter()
                .find(|p| p.topic == topic && p.partition == partition)
                .map(|p| p.last_fetchable_offset)
        })
    };
    // (topic, partition, committed, end, lag)
    let rows: Vec<LagRow> = offsets
        .iter()
        .map(|c| {
            let end = end(&c.topic, c.partition);
            let lag = c.offset.zip(end).map(|(c, e)| (e - c).max(0));
            (c.topic.clone(), c.partition, c.offset, end, lag)
        })
        .collect();
    let text = match args.format {
        TableFormat::Json => rows
            .iter()
            .map(|(t, p, c, e, l)| {
                format!(
                    "{{\"topic\":{},\"partition\":{p},\"committed\":{},\"end\":{},\"lag\":{}}}\n",
                    json_str(t),
                    opt(*c, true),
                    opt(*e, true),
                    opt(*l, true)
                )
            })
            .collect(),
        TableFormat::Table => {
            let rows: Vec<Vec<String>> = rows
                .iter()
                .map(|(t, p, c, e, l)| {
                    vec![
                        t.clone(),
                        p.to_string(),
                        opt(*c, false),
                        opt(*e, false),
                        opt(*l, false),
                    ]
                })
                .collect();
            table(&["TOPIC", "PARTITION", "COMMITTED", "END", "LAG"], &rows)
        }
    };
    print(&text)?;
    if rows.is_empty() {
        note(&format!("group {:?} has no committed offsets", args.group));
    }
    Ok(())
}

//! `kseek offsets`, `metadata`, `commit` and `committed`: everything that doesn't read records.

use std::fmt::Write as _;
use std::io::Write;

use kseek::{ClusterMetadata, CommitOffset, End, Plan, ReadSpec, Start};

use crate::fail::Fail;
use crate::output::json_str;
use crate::position::Selection;
use crate::{CommitArgs, CommittedArgs, MetadataArgs, OffsetsArgs, TableFormat};

/// One line on stderr (a summary or a warning); a closed stderr is ignored.
pub(crate) fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Writes `text` to stdout.
fn print(text: &str) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(crate::output_failed)
}

/// `n`, or `null` / `-` for none.
fn opt(n: Option<i64>, json: bool) -> String {
    n.map_or_else(
        || if json { "null" } else { "-" }.to_owned(),
        |n| n.to_string(),
    )
}

/// Runs `kseek offsets`: the resolved plan, without reading.
pub(crate) async fn offsets(bootstrap: &str, args: OffsetsArgs, now: i64) -> Result<(), Fail> {
    let (_, _, plan) = crate::resolve_selector(bootstrap, &args.select, now).await?;
    print(&render_plan(&plan, args.format))
}

fn render_plan(plan: &Plan, format: TableFormat) -> String {
    let records = |r: Option<u64>| r.map(|r| r as i64);
    match format {
        TableFormat::Json => {
            let mut out = String::new();
            for p in &plan.partitions {
                let _ = writeln!(
                    out,
                    "{{\"topic\":{},\"partition\":{},\"start\":{},\"end\":{},\"records\":{}}}",
                    json_str(&p.topic),
                    p.partition,
                    p.start,
                    opt(p.end, true),
                    opt(records(p.max_records()), true)
                );
            }
            out
        }
        TableFormat::Table => {
            let mut rows: Vec<Vec<String>> = plan
                .partitions
                .iter()
                .map(|p| {
                    vec![
                        p.topic.clone(),
                        p.partition.to_string(),
                        p.start.to_string(),
                        opt(p.end, false),
                        opt(records(p.max_records()), false),
                    ]
                })
                .collect();
            rows.push(vec![
                "total".to_owned(),
                String::new(),
                String::new(),
                String::new(),
                opt(records(plan.max_records()), false),
            ]);
            crate::table(&["TOPIC", "PARTITION", "START", "END", "RECORDS"], &rows)
        }
    }
}

/// Runs `kseek metadata`.
pub(crate) async fn metadata(bootstrap: &str, args: MetadataArgs) -> Result<(), Fail> {
    crate::check_names("topic", &args.topic)?;
    let client = crate::connect(bootstrap).await?;
    let mut cluster = crate::cluster_with(&client, &args.topic).await?;
    if !args.topic.is_empty() {
        cluster.topics.retain(|t| args.topic.contains(&t.name));
    }
    print(&render_metadata(&cluster, args.format))
}

fn render_metadata(cluster: &ClusterMetadata, format: TableFormat) -> String {
    let is_controller = |id: i32| cluster.controller_id == Some(id);
    let error = |code: kseek::protocol::ErrorCode| {
        (!code.is_ok()).then(|| {
            code.name()
                .map_or_else(|| code.0.to_string(), str::to_owned)
        })
    };
    match format {
        TableFormat::Json => {
            let brokers: Vec<String> = cluster
                .brokers
                .iter()
                .map(|b| {
                    format!(
                        "{{\"id\":{},\"host\":{},\"port\":{},\"rack\":{},\"controller\":{}}}",
                        b.node_id,
                        json_str(&b.host),
                        b.port,
                        b.rack
                            .as_deref()
                            .map_or_else(|| "null".to_owned(), json_str),
                        is_controller(b.node_id)
                    )
                })
                .collect();
            let topics: Vec<String> = cluster
                .topics
                .iter()
                .map(|t| {
                    let partitions: Vec<String> = t
                        .partitions
                        .iter()
                        .map(|p| {
                            format!(
                                "{{\"partition\":{},\"leader\":{},\"leader_epoch\":{},\"error\":{}}}",
                                p.partition,
                                p.leader_id,
                                p.leader_epoch,
                                error(p.error_code).map_or_else(|| "null".to_owned(), |e| json_str(&e))
                            )
                        })
                        .collect();
                    format!(
                        "{{\"topic\":{},\"partitions\":[{}]}}",
                        json_str(&t.name),
                        partitions.join(",")
                    )
                })
                .collect();
            format!(
                "{{\"cluster_id\":{},\"controller_id\":{},\"brokers\":[{}],\"topics\":[{}]}}\n",
                cluster
                    .cluster_id
                    .as_deref()
                    .map_or_else(|| "null".to_owned(), json_str),
                opt(cluster.controller_id.map(i64::from), true),
                brokers.join(","),
                topics.join(",")
            )
        }
        TableFormat::Table => {
            let brokers: Vec<Vec<String>> = cluster
                .brokers
                .iter()
                .map(|b| {
                    vec![
                        b.node_id.to_string(),
                        format!("{}:{}", b.host, b.port),
                        if is_controller(b.node_id) {
                            "controller"
                        } else {
                            ""
                        }
                        .to_owned(),
                    ]
                })
                .collect();
            let mut partitions = Vec::new();
            for t in &cluster.topics {
                for p in &t.partitions {
                    partitions.push(vec![
                        t.name.clone(),
                        p.partition.to_string(),
                        if p.leader_id < 0 {
                            "none".to_owned()
                        } else {
                            p.leader_id.to_string()
                        },
                        p.leader_epoch.to_string(),
                        error(p.error_code).unwrap_or_default(),
                    ]);
                }
            }
            let mut out = String::new();
            if let Some(id) = &cluster.cluster_id {
                let _ = writeln!(out, "cluster {id}\n");
            }
            out.push_str(&crate::table(&["BROKER", "ADDRESS", ""], &brokers));
            out.push('\n');
            out.push_str(&crate::table(
                &["TOPIC", "PARTITION", "LEADER", "EPOCH", ""],
                &partitions,
            ));
            out
        }
    }
}

/// Runs `kseek commit`: resolves `--to` as a start and commits it, or prints it (--dry-run).
pub(crate) async fn commit(bootstrap: &str, args: CommitArgs, now: i64) -> Result<(), Fail> {
    crate::check_names("topic", &args.topic)?;
    crate::check_names("group", std::slice::from_ref(&args.group))?;
    let to = crate::parse_position("--to", &args.to, now)?;
    let client = crate::connect(bootstrap).await?;
    let cluster = crate::cluster_with(&client, &args.topic).await?;
    let selection = crate::select(&cluster, &args.topic, &args.partition)?;
    let start = crate::position::to_start(&to, "--to", Some(&args.group), &selection)
        .map_err(Fail::usage)?;
    let plan = client
        .resolve(&spec(&selection, &args.partition, start, End::Unbounded))
        .await
        .map_err(|e| Fail::kafka("resolving --to", &e))?;
    let commits: Vec<CommitOffset> = plan
        .partitions
        .iter()
        .map(|p| CommitOffset {
            topic: p.topic.clone(),
            partition: p.partition,
            offset: p.start,
            leader_epoch: -1,
            metadata: None,
        })
        .collect();
    if !args.dry_run {
        client.commit(&args.group, &commits).await.map_err(|e| {
            Fail::kafka(
                &format!("committing the offsets of group {:?}", args.group),
                &e,
            )
        })?;
    }
    let text = match args.format {
        TableFormat::Json => commits
            .iter()
            .map(|c| {
                format!(
                    "{{\"topic\":{},\"partition\":{},\"offset\":{}}}\n",
                    json_str(&c.topic),
                    c.partition,
                    c.offset
                )
            })
            .collect(),
        TableFormat::Table => {
            let rows: Vec<Vec<String>> = commits
                .iter()
                .map(|c| {
                    vec![
                        c.topic.clone(),
                        c.partition.to_string(),
                        c.offset.to_string(),
                    ]
                })
                .collect();
            crate::table(&["TOPIC", "PARTITION", "OFFSET"], &rows)
        }
    };
    print(&text)?;
    if args.dry_run {
        note(&format!(
            "dry run: nothing committed; {} offsets would be committed for group {:?}",
            commits.len(),
            args.group
        ));
    } else {
        note(&format!(
            "committed {} offsets for group {:?}",
            commits.len(),
            args.group
        ));
    }
    Ok(())
}

/// A spec over `selection`.
fn spec(selection: &Selection, partitions: &[i32], start: Start, end: End) -> ReadSpec {
    let mut spec = ReadSpec::new(selection.iter().map(|(t, _)| t.clone()), start, end);
    if !partitions.is_empty() {
        let mut ps = partitions.to_vec();
        ps.sort_unstable();
        ps.dedup();
        spec.partitions = Some(ps);
    }
    spec
}

/// One row of `kseek committed`: topic, partition, committed offset, end offset, lag.
type LagRow = (String, i32, Option<i64>, Option<i64>, Option<i64>);

/// Runs `kseek committed`: the group's offsets, the end offsets and the lag.
pub(crate) async fn committed(bootstrap: &str, args: CommittedArgs) -> Result<(), Fail> {
    crate::check_names("topic", &args.topic)?;
    crate::check_names("group", std::slice::from_ref(&args.group))?;
    let client = crate::connect(bootstrap).await?;
    let cluster = crate::cluster_with(&client, &args.topic).await?;
    let asked: Vec<String> = if args.topic.is_empty() {
        cluster.topics.iter().map(|t| t.name.clone()).collect()
    } else {
        let mut topics = args.topic.clone();
        topics.dedup();
        topics
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
            crate::table(&["TOPIC", "PARTITION", "COMMITTED", "END", "LAG"], &rows)
        }
    };
    print(&text)?;
    if rows.is_empty() {
        note(&format!("group {:?} has no committed offsets", args.group));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kseek::protocol::{ErrorCode, Uuid};
    use kseek::{BrokerMetadata, IsolationLevel, PartitionMetadata, PartitionPlan, TopicMetadata};

    use super::*;

    fn partition(topic: &str, partition: i32, start: i64, end: Option<i64>) -> PartitionPlan {
        PartitionPlan {
            topic: topic.into(),
            topic_id: Uuid::ZERO,
            partition,
            start,
            end,
            log_start_offset: 0,
            last_fetchable_offset: 100,
            leader_epoch: 0,
        }
    }

    #[test]
    fn plans_as_tables_and_json() {
        let plan = Plan {
            partitions: vec![
                partition("t", 0, 10, Some(20)),
                partition("t", 1, 5, Some(5)),
            ],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        assert_eq!(
            render_plan(&plan, TableFormat::Table),
            "TOPIC  PARTITION  START  END  RECORDS\n\
             t      0          10     20   10\n\
             t      1          5      5    0\n\
             total                         10\n"
        );
        assert_eq!(
            render_plan(&plan, TableFormat::Json),
            "{\"topic\":\"t\",\"partition\":0,\"start\":10,\"end\":20,\"records\":10}\n\
             {\"topic\":\"t\",\"partition\":1,\"start\":5,\"end\":5,\"records\":0}\n"
        );
        let unbounded = Plan {
            partitions: vec![partition("t", 0, 10, None)],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        assert_eq!(
            render_plan(&unbounded, TableFormat::Json),
            "{\"topic\":\"t\",\"partition\":0,\"start\":10,\"end\":null,\"records\":null}\n"
        );
        assert!(render_plan(&unbounded, TableFormat::Table)
            .ends_with("total                         -\n"));
    }

    #[test]
    fn metadata_as_tables_and_json() {
        let cluster = ClusterMetadata {
            cluster_id: Some("c1".into()),
            controller_id: Some(1),
            brokers: vec![BrokerMetadata {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                rack: None,
            }],
            topics: vec![TopicMetadata {
                name: "t".into(),
                topic_id: Uuid::ZERO,
                partitions: vec![
                    PartitionMetadata {
                        partition: 0,
                        leader_id: 1,
                        leader_epoch: 3,
                        error_code: ErrorCode::NONE,
                    },
                    PartitionMetadata {
                        partition: 1,
                        leader_id: -1,
                        leader_epoch: 4,
                        error_code: ErrorCode::LEADER_NOT_AVAILABLE,
                    },
                ],
            }],
        };
        assert_eq!(
            render_metadata(&cluster, TableFormat::Table),
            "cluster c1\n\n\
             BROKER  ADDRESS\n\
             1       h:9092   controller\n\n\
             TOPIC  PARTITION  LEADER  EPOCH\n\
             t      0          1       3\n\
             t      1          none    4      LEADER_NOT_AVAILABLE\n"
        );
        assert_eq!(
            render_metadata(&cluster, TableFormat::Json),
            "{\"cluster_id\":\"c1\",\"controller_id\":1,\"brokers\":[{\"id\":1,\"host\":\"h\",\"port\":9092,\"rack\":null,\"controller\":true}],\
             \"topics\":[{\"topic\":\"t\",\"partitions\":[{\"partition\":0,\"leader\":1,\"leader_epoch\":3,\"error\":null},\
             {\"partition\":1,\"leader\":-1,\"leader_epoch\":4,\"error\":\"LEADER_NOT_AVAILABLE\"}]}]}\n"
        );
    }
}

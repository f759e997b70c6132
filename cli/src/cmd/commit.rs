//! `kseek commit`: set a consumer group's offsets to a position, without reading.

use kseek::{ClientConfig, CommitOffset, End, ReadSpec};

use crate::args::{CommitArgs, TableFormat};
use crate::fail::Fail;
use crate::output::{json_str, note, print, table};

/// Runs `kseek commit`: resolves `--to` as a start and commits it, or prints it (--dry-run).
pub(crate) async fn run(config: &ClientConfig, args: CommitArgs, now: i64) -> Result<(), Fail> {
    super::check_names("topic", &args.topic)?;
    super::check_names("group", std::slice::from_ref(&args.group))?;
    let to = super::parse_position("--to", &args.to, now)?;
    let client = super::connect(config).await?;
    let selection = super::selection(&client, &args.topic, &args.partition, &[&to]).await?;
    let start = kseek::position::to_start(&to, "--to", Some(&args.group), &selection)
        .map_err(Fail::usage)?;
    let mut spec = ReadSpec::new(
        kseek::position::distinct(&args.topic),
        start,
        End::Unbounded,
    );
    spec.partitions = super::partition_filter(&args.partition);
    let plan = client
        .resolve(&spec)
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
            table(&["TOPIC", "PARTITION", "OFFSET"], &rows)
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

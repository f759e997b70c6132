//! The subcommands, one module each, and what they share: connecting, and turning the
//! selector's flags into a resolved plan.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kseek::{
    Client, ClientConfig, ClusterMetadata, End, IsolationLevel, Plan, ReadSpec, TopicMetadata,
};

use crate::args::{Cli, Command, Isolation, Selector};
use crate::fail::{self, Fail};
use crate::position::{self, Position, Selection};

mod commit;
mod committed;
mod metadata;
mod offsets;
mod read;

pub(crate) async fn run(cli: Cli) -> Result<(), Fail> {
    let bootstrap = cli
        .bootstrap
        .or_else(|| std::env::var("KSEEK_BOOTSTRAP").ok())
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "localhost:9092".to_owned());
    let now = now_ms();
    match cli.command {
        Command::Read(args) => read::run(&bootstrap, args, now).await,
        Command::Offsets(args) => offsets::run(&bootstrap, args, now).await,
        Command::Metadata(args) => metadata::run(&bootstrap, args).await,
        Command::Commit(args) => commit::run(&bootstrap, args, now).await,
        Command::Committed(args) => committed::run(&bootstrap, args).await,
    }
}

/// The current time in ms since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses the position of `flag`, or says what is wrong with it.
pub(crate) fn parse_position(flag: &str, text: &str, now: i64) -> Result<Position, Fail> {
    position::parse(text, now).map_err(|why| Fail::usage(format!("invalid {flag} {text:?}: {why}")))
}

/// Refuses empty names before anything goes to the network.
pub(crate) fn check_names(what: &str, names: &[String]) -> Result<(), Fail> {
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(Fail::usage(format!(
            "{what} names can't be empty. Give a name"
        )));
    }
    Ok(())
}

/// Connects to the cluster.
pub(crate) async fn connect(bootstrap: &str) -> Result<Client, Fail> {
    Client::with_config(ClientConfig::new([bootstrap]))
        .await
        .map_err(|e| Fail::kafka(&format!("connecting to {bootstrap}"), &e))
}

/// How long to wait for a topic that the cluster doesn't list (yet): a topic created a moment
/// ago may be unknown to the broker for a short while.
const TOPIC_WAIT: Duration = Duration::from_secs(3);

/// The cluster's metadata, once every topic in `topics` is in it (waiting up to
/// [`TOPIC_WAIT`] for missing ones); a topic still missing then is an error.
pub(crate) async fn cluster_with(
    client: &Client,
    topics: &[String],
) -> Result<ClusterMetadata, Fail> {
    let started = std::time::Instant::now();
    loop {
        let cluster = client
            .cluster_metadata()
            .await
            .map_err(|e| Fail::kafka("fetching the cluster metadata", &e))?;
        let missing = topics
            .iter()
            .find(|t| !cluster.topics.iter().any(|m| &m.name == *t));
        match missing {
            None => return Ok(cluster),
            Some(t) if started.elapsed() >= TOPIC_WAIT => {
                return Err(Fail {
                    code: fail::KAFKA,
                    message: format!(
                        "topic {t:?} does not exist (UNKNOWN_TOPIC_OR_PARTITION). Check the name with kseek metadata."
                    ),
                })
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// The selected partitions of `topics` (all, or those of `partitions`), checked against the
/// metadata.
pub(crate) fn select(
    cluster: &ClusterMetadata,
    topics: &[String],
    partitions: &[i32],
) -> Result<Selection, Fail> {
    let mut selection = Selection::new();
    for name in topics {
        if selection.iter().any(|(t, _)| t == name) {
            continue;
        }
        let Some(meta) = cluster.topics.iter().find(|t| &t.name == name) else {
            return Err(Fail::kafka(
                "selecting partitions",
                &kseek::Error::UnknownTopic {
                    topic: name.clone(),
                    broker: String::new(),
                },
            ));
        };
        selection.push((name.clone(), selected(meta, partitions)?));
    }
    Ok(selection)
}

pub(crate) fn selected(meta: &TopicMetadata, partitions: &[i32]) -> Result<Vec<i32>, Fail> {
    if partitions.is_empty() {
        return Ok(meta.partitions.iter().map(|p| p.partition).collect());
    }
    let mut out = Vec::new();
    for &p in partitions {
        if meta.partition(p).is_none() {
            return Err(Fail {
                code: fail::KAFKA,
                message: format!(
                    "topic {:?} has no partition {p} (it has {} partitions: 0 to {}). Pick partitions that exist; kseek metadata --topic {} lists them.",
                    meta.name,
                    meta.partitions.len(),
                    meta.partitions.len().saturating_sub(1),
                    meta.name
                ),
            });
        }
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The [`ReadSpec`] of a selector: positions parsed and applied to the selected partitions.
/// `parsed` are the (already parsed) --from and --to.
pub(crate) fn spec_for(
    select: &Selector,
    selection: &Selection,
    from: &Position,
    to: &Position,
) -> Result<ReadSpec, Fail> {
    let group = select.group.as_deref();
    let start = position::to_start(from, "--from", group, selection).map_err(Fail::usage)?;
    let end = if select.follow {
        End::Unbounded
    } else {
        position::to_end(to, "--to", group, selection).map_err(Fail::usage)?
    };
    let mut spec = ReadSpec::new(selection.iter().map(|(t, _)| t.clone()), start, end);
    if !select.partition.is_empty() {
        let mut ps = select.partition.clone();
        ps.sort_unstable();
        ps.dedup();
        spec.partitions = Some(ps);
    }
    spec.isolation = match select.isolation {
        Isolation::ReadCommitted => IsolationLevel::READ_COMMITTED,
        Isolation::ReadUncommitted => IsolationLevel::READ_UNCOMMITTED,
    };
    Ok(spec)
}

/// What `read` and `offsets` share: the selector's positions parsed, the topics and
/// partitions checked against the cluster, the read resolved into a plan.
pub(crate) async fn resolve_selector(
    bootstrap: &str,
    selector: &Selector,
    now: i64,
) -> Result<(Client, ReadSpec, Plan), Fail> {
    let (from, to) = parse_selector(selector, now)?;
    let client = connect(bootstrap).await?;
    let cluster = cluster_with(&client, &selector.topic).await?;
    let selection = select(&cluster, &selector.topic, &selector.partition)?;
    let spec = spec_for(selector, &selection, &from, &to)?;
    let plan = client
        .resolve(&spec)
        .await
        .map_err(|e| Fail::kafka("resolving the read", &e))?;
    Ok((client, spec, plan))
}

/// Parses --from and --to of a selector, and checks what can be checked before connecting.
pub(crate) fn parse_selector(select: &Selector, now: i64) -> Result<(Position, Position), Fail> {
    check_names("topic", &select.topic)?;
    if let Some(g) = &select.group {
        check_names("group", std::slice::from_ref(g))?;
    }
    let from = parse_position("--from", &select.from, now)?;
    let to = parse_position("--to", &select.to, now)?;
    for (flag, p) in [("--from", &from), ("--to", &to)] {
        if *p == Position::Group && select.group.is_none() {
            return Err(Fail::usage(format!(
                "{flag} group needs --group. Add --group <GROUP>"
            )));
        }
    }
    if let (Position::Time(a), Position::Time(b)) = (&from, &to) {
        if a > b && !select.follow {
            return Err(Fail::usage(format!(
                "--from {} is after --to {}. Swap them",
                position::format_time(*a),
                position::format_time(*b)
            )));
        }
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn selector_checks_before_connecting() {
        let parse = |args: &[&str]| {
            let cli = Cli::try_parse_from(args).unwrap();
            let Command::Read(r) = cli.command else {
                panic!("not read")
            };
            parse_selector(&r.select, 1_000_000)
        };
        let e = parse(&["kseek", "read", "--topic", "t", "--from", "group"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kseek: --from group needs --group. Add --group <GROUP>."
        );
        assert_eq!(e.code, fail::USAGE);
        let e = parse(&[
            "kseek",
            "read",
            "--topic",
            "t",
            "--from",
            "2026-11-30T10:00:00",
        ])
        .unwrap_err();
        assert!(
            e.message
                .starts_with("invalid --from \"2026-11-30T10:00:00\": "),
            "{e}"
        );
        assert!(e.message.contains("Add Z or +hh:mm"), "{e}");
        let e = parse(&[
            "kseek", "read", "--topic", "t", "--from", "2000", "--to", "1000",
        ])
        .unwrap_err();
        assert_eq!(
            e.message,
            "--from 1970-01-01T00:00:02.000Z is after --to 1970-01-01T00:00:01.000Z. Swap them"
        );
        let e = parse(&["kseek", "read", "--topic", ""]).unwrap_err();
        assert_eq!(e.code, fail::USAGE);
        assert_eq!(
            parse(&["kseek", "read", "--topic", "t", "--from", "-1s"]).unwrap(),
            (Position::Time(999_000), Position::Latest)
        );
    }
}

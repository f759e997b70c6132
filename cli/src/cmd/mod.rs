//! The subcommands, one module each, and what they share: connecting, and turning the
//! selector's flags into a resolved plan.
//!
//! Topics and partitions are not checked here: the library's resolve, metadata and commit
//! calls check them (waiting for a topic just created until the retry deadline) and their
//! typed errors become the failure lines of [`crate::fail`].

use std::time::{SystemTime, UNIX_EPOCH};

use kseek::{Adjusted, Client, ClientConfig, End, IsolationLevel, Plan, ReadSpec};

use crate::args::{Cli, Command, Isolation, Selector};
use crate::fail::Fail;
use kseek::position::{self, partition_filter, Position, Selection};

mod commit;
mod committed;
mod metadata;
mod offsets;
mod read;
mod splits;
mod sql;

/// Runs the subcommand of `cli`.
pub(crate) async fn run(cli: Cli) -> Result<(), Fail> {
    let config = cli.client_config()?;
    let properties = cli.properties()?;
    let now = now_ms();
    match cli.command {
        Command::Read(args) => read::run(&config, &properties, args, now).await,
        Command::Offsets(args) => offsets::run(&config, args, now).await,
        Command::Splits(args) => splits::run(&config, args, now).await,
        Command::ReadSplit(args) => read::run_split(&config, &properties, args).await,
        Command::Metadata(args) => metadata::run(&config, args).await,
        Command::Commit(args) => commit::run(&config, args, now).await,
        Command::Committed(args) => committed::run(&config, args).await,
        Command::Sql(args) => sql::run(&config, &properties, args).await,
    }
}

/// The current time in ms since the epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses the position of `flag`, or says what is wrong with it.
fn parse_position(flag: &str, text: &str, now: i64) -> Result<Position, Fail> {
    position::parse(text, now).map_err(|why| Fail::usage(format!("invalid {flag} {text:?}: {why}")))
}

/// Refuses empty names before anything goes to the network.
fn check_names(what: &str, names: &[String]) -> Result<(), Fail> {
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(Fail::usage(format!(
            "{what} names can't be empty. Give a name"
        )));
    }
    Ok(())
}

/// Connects to the cluster.
async fn connect(config: &ClientConfig) -> Result<Client, Fail> {
    Client::with_config(config.clone())
        .await
        .map_err(|e| Fail::kafka(&format!("connecting to {}", config.bootstrap.join(",")), &e))
}

/// [`position::selection`], its error a failure line.
async fn selection(
    client: &Client,
    topics: &[String],
    partitions: &[i32],
    positions: &[&Position],
) -> Result<Selection, Fail> {
    position::selection(client, topics, partitions, positions)
        .await
        .map_err(|e| Fail::kafka("fetching the topics' metadata", &e))
}

/// The [`ReadSpec`] of a selector: `from` and `to` (the parsed --from and --to) applied to the
/// selected partitions.
fn spec_for(
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
    spec.partitions = partition_filter(&select.partition);
    spec.isolation = match select.isolation {
        Isolation::ReadCommitted => IsolationLevel::READ_COMMITTED,
        Isolation::ReadUncommitted => IsolationLevel::READ_UNCOMMITTED,
    };
    Ok(spec)
}

/// What `read` and `offsets` share: the selector's positions parsed, the read resolved into a
/// plan (the library checks the topics and partitions).
async fn resolve_selector(
    config: &ClientConfig,
    selector: &Selector,
    now: i64,
) -> Result<(Client, ReadSpec, Plan), Fail> {
    let (from, to) = parse_selector(selector, now)?;
    let client = connect(config).await?;
    let selection = selection(&client, &selector.topic, &selector.partition, &[&from, &to]).await?;
    let spec = spec_for(selector, &selection, &from, &to)?;
    let plan = client
        .resolve(&spec)
        .await
        .map_err(|e| Fail::kafka("resolving the read", &e))?;
    for line in adjustments(&plan) {
        crate::output::note(&line);
    }
    Ok((client, spec, plan))
}

/// One notice per partition whose range resolution moved to keep it inside the log.
fn adjustments(plan: &Plan) -> Vec<String> {
    plan.partitions
        .iter()
        .filter_map(|p| {
            let what = format!("kseek: partition {} of topic {:?}", p.partition, p.topic);
            Some(match p.adjusted? {
                Adjusted::PastEnd { requested } => format!(
                    "{what} ends at offset {}, before --from offset {requested}: nothing to read there.",
                    p.start
                ),
                Adjusted::BelowLogStart { requested } => format!(
                    "{what}: offsets {requested} to {} were deleted; the range starts at the log start, {}.",
                    p.start - 1,
                    p.start
                ),
                _ => return None,
            })
        })
        .collect()
}

/// Parses --from and --to of a selector, and checks what can be checked before connecting.
fn parse_selector(select: &Selector, now: i64) -> Result<(Position, Position), Fail> {
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
    use crate::fail;

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

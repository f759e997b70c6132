//! `kseek`: read Kafka topics by time from the command line.
//!
//! Subcommands: `read` (print records of a resolved range), `offsets` (the plan without
//! reading), `metadata`, `commit` (set a group's offsets) and `committed` (show them). Exit
//! codes: 0 success, 1 other failures, 2 usage, 3 Kafka or network, 4 corrupt data.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand, ValueEnum};
use kseek::{
    Client, ClientConfig, ClusterMetadata, End, IsolationLevel, Plan, ReadSpec, TopicMetadata,
};

mod fail;
mod info;
mod output;
mod position;
mod progress;
mod read;

use fail::Fail;
use position::{Position, Selection};

const EXAMPLES: &str = "\
Positions (--from, --to, commit --to):
  earliest, latest, now
  2026-11-30T10:00:00Z, 2026-11-30T10:00:00.250+01:00, 2026-11-30 (00:00 UTC)
  1767261600000 (epoch milliseconds)
  -2h, -30m, -90s, -1d, -1h30m (relative to now)
  offset:42, offset:0=42,1=17 (per partition)
  group (the committed offsets of --group)

Examples:
  kseek offsets --topic events --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z
  kseek read --topic events --from -1h
  kseek read --topic events --from 2026-11-30 --format '%p %o %T %k %s\\n'
  kseek read --topic events --group g --from group --commit
  kseek metadata
  kseek commit --group g --topic events --to 2026-11-30
  kseek committed --group g

Exit codes: 0 ok, 1 other failure, 2 usage, 3 Kafka or network, 4 corrupt data.";

/// Read Kafka topics by time: resolve exact offset ranges first, then read exactly them.
#[derive(Debug, Parser)]
#[command(name = "kseek", version, after_help = EXAMPLES)]
struct Cli {
    /// Kafka brokers, HOST:PORT[,HOST:PORT...] [default: $KSEEK_BOOTSTRAP, else localhost:9092]
    #[arg(long, global = true, value_name = "HOST:PORT")]
    bootstrap: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the records between two positions (JSON lines by default)
    #[command(after_help = READ_EXAMPLES)]
    Read(ReadArgs),
    /// Show the resolved plan (per partition start, end, records) without reading
    #[command(after_help = OFFSETS_EXAMPLES)]
    Offsets(OffsetsArgs),
    /// Show brokers, topics, partitions and their leaders
    #[command(after_help = METADATA_EXAMPLES)]
    Metadata(MetadataArgs),
    /// Set a consumer group's offsets to a position, without reading
    #[command(after_help = COMMIT_EXAMPLES)]
    Commit(CommitArgs),
    /// Show a consumer group's committed offsets, the end offsets and the lag
    #[command(after_help = COMMITTED_EXAMPLES)]
    Committed(CommittedArgs),
}

const READ_EXAMPLES: &str = "\
Positions: earliest, latest, now, 2026-11-30T10:00:00Z, 2026-11-30, 1767261600000, -2h,
-1h30m, offset:42, offset:0=42,1=17, group.

Template tokens (--format): %t topic, %p partition, %o offset, %T timestamp (ms), %k key,
%s value, %K key length, %S value length (-1 for null), %h headers (k=v,k=v; a null value
as NULL), %%;
escapes \\n \\t \\r \\\\.

Examples:
  kseek read --topic events --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z
  kseek read --topic events --from -15m --follow
  kseek read --topic events --partition 0,2 --from offset:100 --count 10 --format raw
  kseek read --topic events --from -1h --format '%p %o %T %k %s\\n'
  kseek read --topic events --group g --from group --commit";

const OFFSETS_EXAMPLES: &str = "\
Examples:
  kseek offsets --topic events --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z
  kseek offsets --topic events --from -1h --format json
  kseek offsets --topic events --group g --from group";

const METADATA_EXAMPLES: &str = "\
Examples:
  kseek metadata
  kseek metadata --topic events --format json";

const COMMIT_EXAMPLES: &str = "\
Examples:
  kseek commit --group g --topic events --to 2026-11-30      # restart from today 00:00 UTC
  kseek commit --group g --topic events --to -1h --dry-run
  kseek commit --group g --topic events --partition 0 --to offset:42";

const COMMITTED_EXAMPLES: &str = "\
Examples:
  kseek committed --group g
  kseek committed --group g --topic events --format json";

/// The partitions and range of a read (shared by `read` and `offsets`).
#[derive(Debug, Args)]
struct Selector {
    /// Topic to read (repeat for several)
    #[arg(long, short = 't', required = true, value_name = "TOPIC")]
    topic: Vec<String>,
    /// Only these partitions (repeat, or a comma list) [default: all]
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P",
          value_parser = clap::value_parser!(i32).range(0..))]
    partition: Vec<i32>,
    /// Where to start
    #[arg(
        long,
        default_value = "earliest",
        value_name = "POS",
        allow_hyphen_values = true
    )]
    from: String,
    /// Where to stop (exclusive)
    #[arg(
        long,
        default_value = "latest",
        value_name = "POS",
        allow_hyphen_values = true
    )]
    to: String,
    /// Never stop: follow the log after the last record
    #[arg(long, conflicts_with = "to")]
    follow: bool,
    /// The consumer group for `group` positions and --commit
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: Option<String>,
    /// Which records to see of transactions
    #[arg(long, value_enum, default_value_t = Isolation::ReadUncommitted)]
    isolation: Isolation,
}

#[derive(Debug, Args)]
struct ReadArgs {
    #[command(flatten)]
    select: Selector,
    /// Commit the positions reached to --group, after the output is flushed (with --count,
    /// after Ctrl-C or after a read error, up to the last record printed; nothing when stdout
    /// was closed)
    #[arg(long, requires = "group")]
    commit: bool,
    /// Also drop records whose own timestamp is outside the --from/--to times
    #[arg(long)]
    exact_time: bool,
    /// Stop after this many records
    #[arg(long, short = 'c', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// json, raw, or a template such as '%p %o %T %k %s\n'
    #[arg(long, short = 'f', default_value = "json", value_name = "FORMAT")]
    format: String,
    /// No summary on stderr
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
struct OffsetsArgs {
    #[command(flatten)]
    select: Selector,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(Debug, Args)]
struct MetadataArgs {
    /// Only these topics (repeat for several) [default: all]
    #[arg(long, short = 't', value_name = "TOPIC")]
    topic: Vec<String>,
    /// table or json (one document)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(Debug, Args)]
struct CommitArgs {
    /// The consumer group
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: String,
    /// Topic (repeat for several)
    #[arg(long, short = 't', required = true, value_name = "TOPIC")]
    topic: Vec<String>,
    /// Only these partitions (repeat, or a comma list) [default: all]
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P",
          value_parser = clap::value_parser!(i32).range(0..))]
    partition: Vec<i32>,
    /// The position to commit: the group restarts there
    #[arg(long, value_name = "POS", allow_hyphen_values = true)]
    to: String,
    /// Print what would be committed, without committing
    #[arg(long)]
    dry_run: bool,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(Debug, Args)]
struct CommittedArgs {
    /// The consumer group
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: String,
    /// Only these topics [default: every topic the group has committed offsets for]
    #[arg(long, short = 't', value_name = "TOPIC")]
    topic: Vec<String>,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Isolation {
    /// Every record, also of open and aborted transactions
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
    /// Only committed transactions' records, up to the last stable offset
    #[value(name = "read_committed")]
    ReadCommitted,
}

/// The output of the subcommands other than `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TableFormat {
    /// Aligned columns with a header
    Table,
    /// JSON
    Json,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version land here too (exit 0); a closed stdout is not an error.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                fail::USAGE
            } else {
                fail::OK
            });
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            report(&Fail {
                code: fail::OTHER,
                message: format!(
                    "starting the async runtime failed: {e}. Check the process limits"
                ),
            });
            return ExitCode::from(fail::OTHER);
        }
    };
    let result = runtime.block_on(run(cli));
    // Don't wait for the read's background tasks (they may be in a long poll).
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::from(fail::OK),
        Err(f) => {
            report(&f);
            ExitCode::from(f.code)
        }
    }
}

/// Prints a failure's one line (nothing for a quiet stop, such as a closed pipe).
fn report(f: &Fail) {
    if !f.message.is_empty() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{f}");
    }
}

async fn run(cli: Cli) -> Result<(), Fail> {
    let bootstrap = cli
        .bootstrap
        .or_else(|| std::env::var("KSEEK_BOOTSTRAP").ok())
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "localhost:9092".to_owned());
    let now = now_ms();
    match cli.command {
        Command::Read(args) => read::run(&bootstrap, args, now).await,
        Command::Offsets(args) => info::offsets(&bootstrap, args, now).await,
        Command::Metadata(args) => info::metadata(&bootstrap, args).await,
        Command::Commit(args) => info::commit(&bootstrap, args, now).await,
        Command::Committed(args) => info::committed(&bootstrap, args).await,
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
async fn connect(bootstrap: &str) -> Result<Client, Fail> {
    Client::with_config(ClientConfig::new([bootstrap]))
        .await
        .map_err(|e| Fail::kafka(&format!("connecting to {bootstrap}"), &e))
}

/// How long to wait for a topic that the cluster doesn't list (yet): a topic created a moment
/// ago may be unknown to the broker for a short while.
const TOPIC_WAIT: Duration = Duration::from_secs(3);

/// The cluster's metadata, once every topic in `topics` is in it (waiting up to
/// [`TOPIC_WAIT`] for missing ones); a topic still missing then is an error.
async fn cluster_with(client: &Client, topics: &[String]) -> Result<ClusterMetadata, Fail> {
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
fn select(
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

fn selected(meta: &TopicMetadata, partitions: &[i32]) -> Result<Vec<i32>, Fail> {
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
async fn resolve_selector(
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

/// Turns an output error into a failure: a closed pipe (`| head`) is a quiet stop.
fn output_failed(error: std::io::Error) -> Fail {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        Fail {
            code: fail::OK,
            message: String::new(),
        }
    } else {
        Fail::output(&error)
    }
}

/// Writes rows as aligned columns under `header`, two spaces apart.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i + 1 < row.len() {
                line.push_str(&format!("{cell:<w$}  "));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let t = table(
            &["TOPIC", "PARTITION", "END"],
            &[
                vec!["events".into(), "0".into(), "10".into()],
                vec!["e".into(), "12".into(), "".into()],
            ],
        );
        assert_eq!(
            t,
            "TOPIC   PARTITION  END\nevents  0          10\ne       12\n"
        );
    }

    #[test]
    fn the_command_line_parses() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "kseek",
            "read",
            "--topic",
            "t",
            "--partition",
            "0,2",
            "--partition",
            "5",
            "--from",
            "-2h",
            "--bootstrap",
            "b:1",
        ])
        .unwrap();
        let Command::Read(r) = cli.command else {
            panic!("not read")
        };
        assert_eq!(r.select.partition, [0, 2, 5]);
        assert_eq!(r.select.from, "-2h");
        assert_eq!(cli.bootstrap.as_deref(), Some("b:1"));
        let usage = |args: &[&str]| Cli::try_parse_from(args).unwrap_err().exit_code();
        assert_eq!(
            usage(&["kseek", "read", "--topic", "t", "--follow", "--to", "now"]),
            2
        );
        assert_eq!(usage(&["kseek", "read", "--topic", "t", "--commit"]), 2);
        assert_eq!(usage(&["kseek", "read"]), 2);
        assert_eq!(usage(&["kseek", "read", "--topic", "t", "--count", "0"]), 2);
        assert_eq!(
            usage(&["kseek", "read", "--topic", "t", "--partition", "-1"]),
            2
        );
        assert_eq!(
            usage(&["kseek", "offsets", "--topic", "t", "--format", "raw"]),
            2
        );
    }

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

    #[test]
    fn a_closed_pipe_is_a_quiet_success() {
        let f = output_failed(std::io::ErrorKind::BrokenPipe.into());
        assert_eq!((f.code, f.message.as_str()), (fail::OK, ""));
        let f = output_failed(std::io::ErrorKind::StorageFull.into());
        assert_eq!(f.code, fail::OTHER);
    }
}

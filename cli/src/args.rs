//! The command line's definition (clap): the subcommands, their flags and help texts.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::table::ParquetCompression;
use kseek::ClientConfig;

use crate::fail::Fail;

pub(crate) const EXAMPLES: &str = "\
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

Exit codes: 0 ok, 1 other failure, 2 usage, 3 Kafka or network, 4 corrupt data,
  5 a key or value that does not decode (-s), 6 Schema Registry failure.";

/// The help heading of the global flags: where the brokers are and how to reach them.
const CONNECTION: &str = "Connection and security";
/// The help heading of the flags that shape what is printed.
const OUTPUT: &str = "Output";
/// The help heading of the flags that decode keys and values.
const DECODING: &str = "Decoding (Schema Registry)";

/// Read Kafka topics by time: resolve exact offset ranges first, then read exactly them.
#[derive(Debug, Parser)]
#[command(name = "kseek", version, after_help = EXAMPLES)]
pub(crate) struct Cli {
    /// Kafka brokers, HOST:PORT[,HOST:PORT...] [default: $KSEEK_BOOTSTRAP, else localhost:9092]
    #[arg(long, global = true, value_name = "HOST:PORT", value_parser = bootstrap, help_heading = CONNECTION)]
    pub(crate) bootstrap: Option<String>,
    /// How long a TCP connect to a broker may take, e.g. 500ms, 5s [default: 10s]
    #[arg(long, global = true, value_name = "DURATION", allow_hyphen_values = true, value_parser = timeout, help_heading = CONNECTION)]
    pub(crate) connect_timeout: Option<Duration>,
    /// How long a broker may take to answer a request, e.g. 500ms, 5s [default: 30s]
    #[arg(long, global = true, value_name = "DURATION", allow_hyphen_values = true, value_parser = timeout, help_heading = CONNECTION)]
    pub(crate) request_timeout: Option<Duration>,
    /// How long errors that may pass (a leader election, a broker restarting) are retried
    /// before giving up, e.g. 30s, 2m; a missing topic is waited for at most 3s of it
    /// [default: 30s]
    #[arg(long, global = true, value_name = "DURATION", allow_hyphen_values = true, value_parser = timeout, help_heading = CONNECTION)]
    pub(crate) retry_deadline: Option<Duration>,
    /// A Kafka client property, as in client.properties or librdkafka: security.protocol,
    /// sasl.mechanism, sasl.jaas.config, sasl.username, sasl.password, ssl.ca.location, ... A
    /// value may read a secret from the environment: ${env:NAME}. Repeatable; later wins
    #[arg(short = 'X', global = true, value_name = "KEY=VALUE", help_heading = CONNECTION)]
    pub(crate) property: Vec<String>,
    /// A properties file: a Java client's client.properties or a kcat config file (read
    /// before -X). Repeatable
    #[arg(long = "config", short = 'F', global = true, value_name = "FILE", help_heading = CONNECTION)]
    pub(crate) config_file: Vec<std::path::PathBuf>,
    /// Also list the properties of --config and -X that are accepted but not used (a Java
    /// consumer's group, deserializer and fetch settings)
    #[arg(long, short = 'v', global = true, help_heading = CONNECTION)]
    pub(crate) verbose: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// How long the CLI retries what may pass: long enough for a leader election after a broker
/// dies (KRaft notices it after `broker.session.timeout.ms`, 9 s), as the library's default.
const RETRY_DEADLINE: Duration = Duration::from_secs(30);

/// How long a topic that doesn't exist is waited for: long enough for one just created,
/// short enough that a mistyped name is reported while the user waits.
const MISSING_TOPIC_WAIT: Duration = Duration::from_secs(3);

impl Cli {
    /// The client's settings: the bootstrap servers (--bootstrap, else $KSEEK_BOOTSTRAP, else
    /// localhost:9092) and the timeouts.
    pub(crate) fn client_config(&self) -> Result<ClientConfig, Fail> {
        let mut config = ClientConfig::default();
        self.apply_properties(&mut config)?;
        let bootstrap = match &self.bootstrap {
            Some(b) => Some(b.clone()),
            // bootstrap.servers of --config / -X comes before $KSEEK_BOOTSTRAP.
            None if !config.bootstrap.is_empty() => None,
            None => Some(match std::env::var("KSEEK_BOOTSTRAP") {
                Ok(b) if !b.trim().is_empty() => bootstrap(&b)
                    .map_err(|why| Fail::usage(format!("KSEEK_BOOTSTRAP={b:?} {why}")))?,
                _ => "localhost:9092".to_owned(),
            }),
        };
        if let Some(bootstrap) = bootstrap {
            config.bootstrap = vec![bootstrap];
        }
        let security = &config.connection.security;
        if security.protocol.uses_tls() && !security.tls.verify_hostname {
            eprintln!(
                "kseek: warning: hostname verification is off \
                 (ssl.endpoint.identification.algorithm): any certificate from a trusted CA is \
                 accepted for any broker"
            );
        }
        if let Some(t) = self.connect_timeout {
            config.connection.connect_timeout = t;
        }
        if let Some(t) = self.request_timeout {
            config.connection.request_timeout = t;
        }
        config.retry_deadline = self.retry_deadline.unwrap_or(RETRY_DEADLINE);
        config.missing_topic_wait = MISSING_TOPIC_WAIT.min(config.retry_deadline);
        Ok(config)
    }
}

impl Cli {
    /// The properties of the `--config` files, then of `-X`.
    pub(crate) fn properties(&self) -> Result<kseek::properties::Properties, Fail> {
        let mut properties = kseek::properties::Properties::new();
        for path in &self.config_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Fail::usage(format!("cannot read --config {}: {e}", path.display()))
            })?;
            properties
                .add_text(&text, &path.display().to_string())
                .map_err(|e| Fail::usage(e.to_string()))?;
        }
        for setting in &self.property {
            properties
                .add_assignment(setting)
                .map_err(|e| Fail::usage(e.to_string()))?;
        }
        Ok(properties)
    }

    /// `--config` files, then `-X` settings, applied to `config` (the flags come after).
    fn apply_properties(&self, config: &mut ClientConfig) -> Result<(), Fail> {
        if self.config_file.is_empty() && self.property.is_empty() {
            return Ok(());
        }
        let properties = self.properties()?;
        properties
            .apply(config)
            .map_err(|e| Fail::usage(e.to_string()))?;
        let ignored = properties.ignored();
        for i in &ignored {
            if let Some(why) = i.notice {
                crate::output::note(&format!("kseek: {}: {}: {why}", i.origin, i.key));
            }
        }
        if self.verbose && !ignored.is_empty() {
            let list: Vec<String> = ignored
                .iter()
                .map(|i| format!("{} ({})", i.key, i.origin))
                .collect();
            crate::output::note(&format!(
                "kseek: properties accepted but not used by a reader: {}",
                list.join(", ")
            ));
        }
        Ok(())
    }
}

/// `--bootstrap`'s value: at least one `HOST:PORT` in the comma list.
fn bootstrap(text: &str) -> Result<String, String> {
    if text.split(',').all(|b| b.trim().is_empty()) {
        return Err("names no server. Give HOST:PORT[,HOST:PORT...]".to_owned());
    }
    Ok(text.to_owned())
}

/// A `--partition` value: a partition id, 0 or more.
fn partition_id(text: &str) -> Result<i32, String> {
    match text.trim().parse::<i64>() {
        Ok(p) if p < 0 => Err(
            "a partition must be >= 0 (partitions count from 0). Give 0, 1, 2... or a list such as 0,2"
                .to_owned(),
        ),
        Ok(p) => i32::try_from(p)
            .map_err(|_| format!("{p} is too large for a partition. Give 0, 1, 2... or a list such as 0,2")),
        Err(_) => Err(
            "a partition is a number. Give 0, 1, 2... or a list such as 0,2".to_owned(),
        ),
    }
}

/// A `--count` value: a number of records, 1 or more.
fn record_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<i128>() {
        Ok(n) if n < 1 => Err(
            "the count must be 1 or more. Give the number of records to print, e.g. 10".to_owned(),
        ),
        Ok(n) => u64::try_from(n).map_err(|_| {
            "the count is too large. Leave --count out to read the whole range".to_owned()
        }),
        Err(_) => {
            Err("the count is a number. Give the number of records to print, e.g. 10".to_owned())
        }
    }
}

/// A `--max-bytes` value: a number of bytes, 1 or more, with an optional unit: `B`, `kB`, `MB`,
/// `GB` (powers of 1000) or `KiB`, `MiB`, `GiB` (powers of 1024).
fn byte_size(text: &str) -> Result<u64, String> {
    const HINT: &str = "Give a size such as 64MiB, 500MB or 1048576";
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    if number.is_empty() {
        return Err(format!("the size is a number with a unit. {HINT}"));
    }
    let unit_size: u64 = match unit.trim() {
        "" | "B" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("{other:?} is not a unit of bytes. {HINT}")),
    };
    match number.parse::<u64>() {
        Ok(0) => Err(format!("the size must be 1 byte or more. {HINT}")),
        Ok(n) => n
            .checked_mul(unit_size)
            .ok_or_else(|| format!("the size is too large. {HINT}")),
        Err(_) => Err(format!("the size is a number with a unit. {HINT}")),
    }
}

/// A timeout flag's value: a duration such as `500ms`, `5s`, `2m` or `1m30s`, more than zero.
fn timeout(text: &str) -> Result<Duration, String> {
    const HINT: &str = "Write a duration such as 500ms, 5s, 2m or 1m30s";
    let text = text.trim();
    if text.starts_with('-') {
        return Err(format!("a timeout can't be negative. {HINT}"));
    }
    let ms = kseek::position::parse_duration(text).map_err(|why| format!("{why}. {HINT}"))?;
    if ms == 0 {
        return Err(format!("a timeout must be more than 0. {HINT}"));
    }
    Ok(Duration::from_millis(ms.unsigned_abs()))
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print the records between two positions (JSON lines by default)
    #[command(after_help = READ_EXAMPLES)]
    Read(ReadArgs),
    /// Show the resolved plan (per partition start, end, records) without reading
    #[command(after_help = OFFSETS_EXAMPLES)]
    Offsets(OffsetsArgs),
    /// Cut the plan into splits, one JSON line each, for `read-split` elsewhere
    #[command(after_help = SPLITS_EXAMPLES)]
    Splits(SplitsArgs),
    /// Read one split that `splits` printed, in this process, like `read`
    #[command(name = "read-split", after_help = SPLITS_EXAMPLES)]
    ReadSplit(ReadSplitArgs),
    /// Show brokers, topics, partitions and their leaders
    #[command(after_help = METADATA_EXAMPLES)]
    Metadata(MetadataArgs),
    /// Set a consumer group's offsets to a position, without reading
    #[command(after_help = COMMIT_EXAMPLES)]
    Commit(CommitArgs),
    /// Show a consumer group's committed offsets, the end offsets and the lag
    #[command(after_help = COMMITTED_EXAMPLES)]
    Committed(CommittedArgs),
    /// Run SQL over topics (DataFusion): every topic is a table, and WHERE clauses on
    /// timestamp, partition and offset choose the offsets read
    #[command(after_help = SQL_EXAMPLES)]
    Sql(SqlArgs),
}

pub(crate) const SQL_EXAMPLES: &str = "\
Every topic is a table with the columns key, value, topic, partition, offset, timestamp,
timestampType and headers (quote names with dashes or capitals: \"orders-v2\"). Predicates on
timestamp, partition and offset become the offsets read (EXPLAIN shows them, reading nothing);
every filter is applied again on the rows, so the answer is exact.

Examples:
  kseek sql \"SELECT count(*) FROM events WHERE timestamp >= '2026-11-30T10:00:00Z'
      AND timestamp < '2026-11-30T10:05:00Z'\"
  kseek sql \"SELECT key, count(*) AS n FROM events WHERE partition IN (0, 2) GROUP BY key
      ORDER BY n DESC LIMIT 10\"
  kseek sql \"EXPLAIN SELECT * FROM events WHERE timestamp > now() - INTERVAL '5 minutes'\"
  kseek sql -r http://localhost:8081 \"CREATE EXTERNAL TABLE orders STORED AS KAFKA
      LOCATION 'orders' OPTIONS ('format' 'avro', 'max_lateness' '1m');
      SELECT country, sum(amount) FROM orders GROUP BY country\" -o totals.parquet

Table options (OPTIONS, or the flags for every topic): isolation (read_committed,
read_uncommitted), max_lateness (5m: how far an upper time bound on a CreateTime topic is
pushed), format (bytes, avro), on_decode_error (fail, skip, null).";

/// `kseek sql`.
#[derive(Debug, Args)]
pub(crate) struct SqlArgs {
    /// The SQL: one or more statements separated by ';' (the last one's rows are printed)
    /// [default: read from stdin; on a terminal, a prompt with line editing and history]
    #[arg(value_name = "SQL")]
    pub(crate) query: Option<String>,
    /// table (aligned columns), json (lines), csv, parquet, or arrow (an Arrow IPC stream)
    /// [default: from --output's extension, else table on a terminal and json when piped]
    #[arg(long, value_enum, value_name = "KIND", help_heading = OUTPUT)]
    pub(crate) output_format: Option<SqlFormat>,
    /// Write to FILE instead of stdout ('-': stdout); a Parquet or Arrow file is written
    /// under a temporary name and renamed once complete
    #[arg(long, short = 'o', value_name = "FILE", help_heading = OUTPUT)]
    pub(crate) output: Option<std::path::PathBuf>,
    /// Parquet page compression
    #[arg(long, value_enum, default_value_t = ParquetCompression::Snappy, help_heading = OUTPUT)]
    pub(crate) compression: ParquetCompression,
    /// No progress and no notices on stderr
    #[arg(long, short = 'q', help_heading = OUTPUT)]
    pub(crate) quiet: bool,
    /// Which records to see of transactions, for every topic
    #[arg(long, value_enum, ignore_case = true, default_value_t = Isolation::ReadUncommitted)]
    pub(crate) isolation: Isolation,
    /// How late a CreateTime timestamp may be: an upper time bound is pushed to the offset
    /// of bound + DURATION (e.g. 5m) [default: not pushed on CreateTime topics]
    #[arg(long, value_name = "DURATION", value_parser = lateness)]
    pub(crate) max_lateness: Option<Duration>,
    /// Refuse a query whose scans would read more than N records (by their offset ranges)
    #[arg(long, value_name = "N", value_parser = record_count)]
    pub(crate) max_records: Option<u64>,
    /// The query engine's memory limit (sorts, joins and aggregates beyond it fail with a
    /// one-line error), e.g. 2GiB [default: none]
    #[arg(long, value_name = "SIZE", value_parser = byte_size)]
    pub(crate) memory_limit: Option<u64>,
    /// How values are read, for every topic: bytes (the value column), or avro (also
    /// decoded through the Schema Registry into one column per field)
    #[arg(long, value_enum, default_value_t = ValueFormat::Bytes, help_heading = DECODING)]
    pub(crate) value_format: ValueFormat,
    /// The Schema Registry's URL(s), comma-separated [default: schema.registry.url of the
    /// properties files and -X]
    #[arg(long = "schema-registry", short = 'r', value_name = "URL", help_heading = DECODING)]
    pub(crate) schema_registry: Option<String>,
    /// What a value that does not decode does: fail, skip the row, or null its fields
    #[arg(long, value_enum, default_value_t = SqlDecodeError::Fail, help_heading = DECODING)]
    pub(crate) on_decode_error: SqlDecodeError,
}

/// `kseek sql --output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SqlFormat {
    /// Aligned columns with a header
    Table,
    /// One JSON object per row
    Json,
    /// Comma-separated values with a header
    Csv,
    /// A Parquet file
    Parquet,
    /// An Arrow IPC stream
    Arrow,
}

/// `kseek sql --value-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ValueFormat {
    /// The binary value column only
    Bytes,
    /// Confluent-framed Avro, decoded with the Schema Registry's schemas
    Avro,
}

/// `kseek sql --on-decode-error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SqlDecodeError {
    /// Fail the query
    Fail,
    /// Leave the row out
    Skip,
    /// Keep the row with its value fields null
    Null,
}

fn lateness(text: &str) -> Result<Duration, String> {
    kseek_sql::parse_duration(text)
}

pub(crate) const SPLITS_EXAMPLES: &str = "\
A split is one partition's offset range of the plan, with the read's isolation, its
--exact-time bounds and the connection settings that are not secrets (bootstrap, client id,
timeouts). Reading every split, in any order and in any process, gives exactly the records
of `kseek read` with the same flags. TLS and SASL settings come from each reader's own
--config and -X.

Examples:
  kseek splits --topic events --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z \\
      --max-offsets 100000 > splits.jsonl
  cat -n splits.jsonl | while read -r n split; do
      kseek read-split \"$split\" -o part-$n.parquet; done";

pub(crate) const READ_EXAMPLES: &str = "\
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

pub(crate) const OFFSETS_EXAMPLES: &str = "\
Examples:
  kseek offsets --topic events --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z
  kseek offsets --topic events --from -1h --format json
  kseek offsets --topic events --group g --from group";

pub(crate) const METADATA_EXAMPLES: &str = "\
Examples:
  kseek metadata
  kseek metadata --topic events --format json";

pub(crate) const COMMIT_EXAMPLES: &str = "\
Examples:
  kseek commit --group g --topic events --to 2026-11-30      # restart from today 00:00 UTC
  kseek commit --group g --topic events --to -1h --dry-run
  kseek commit --group g --topic events --partition 0 --to offset:42";

pub(crate) const COMMITTED_EXAMPLES: &str = "\
Examples:
  kseek committed --group g
  kseek committed --group g --topic events --format json";

/// The partitions and range of a read (shared by `read` and `offsets`).
#[derive(Debug, Args)]
pub(crate) struct Selector {
    /// Topic to read (repeat for several)
    #[arg(long, short = 't', required = true, value_name = "TOPIC")]
    pub(crate) topic: Vec<String>,
    /// Only these partitions (repeat, or a comma list) [default: all]
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P",
          allow_negative_numbers = true, value_parser = partition_id)]
    pub(crate) partition: Vec<i32>,
    /// Where to start
    #[arg(
        long,
        default_value = "earliest",
        value_name = "POS",
        allow_hyphen_values = true
    )]
    pub(crate) from: String,
    /// Where to stop (exclusive)
    #[arg(
        long,
        default_value = "latest",
        value_name = "POS",
        allow_hyphen_values = true
    )]
    pub(crate) to: String,
    /// Never stop: follow the log after the last record
    #[arg(long, conflicts_with = "to")]
    pub(crate) follow: bool,
    /// The consumer group for `group` positions and --commit
    #[arg(long, short = 'g', value_name = "GROUP")]
    pub(crate) group: Option<String>,
    /// Which records to see of transactions (any case: READ_COMMITTED, as Java spells it, too)
    #[arg(long, value_enum, ignore_case = true, default_value_t = Isolation::ReadUncommitted)]
    pub(crate) isolation: Isolation,
}

#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    #[command(flatten)]
    pub(crate) select: Selector,
    /// Commit the positions reached to --group, after the output is flushed (with --count,
    /// after Ctrl-C or after a read error, up to the last record printed; nothing when stdout
    /// was closed)
    #[arg(long, requires = "group")]
    pub(crate) commit: bool,
    /// Also drop records whose own timestamp is outside the --from/--to times
    #[arg(long)]
    pub(crate) exact_time: bool,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

/// How `read` and `read-split` write what they read.
#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// Stop after this many records
    #[arg(long, short = 'c', value_name = "N", allow_negative_numbers = true, value_parser = record_count)]
    pub(crate) count: Option<u64>,
    /// json, raw, or a template such as '%p %o %T %k %s\n'
    #[arg(long, short = 'f', default_value = "json", value_name = "FORMAT", help_heading = OUTPUT)]
    pub(crate) format: String,
    /// Write to FILE instead of stdout ('-': stdout); a Parquet or Arrow file is written
    /// under a temporary name and renamed once complete
    #[arg(long, short = 'o', value_name = "FILE", help_heading = OUTPUT)]
    pub(crate) output: Option<std::path::PathBuf>,
    /// text (--format), parquet, or arrow (an Arrow IPC stream) [default: parquet for a
    /// .parquet --output, arrow for .arrow/.arrows, else text]
    #[arg(long, value_enum, value_name = "KIND", help_heading = OUTPUT)]
    pub(crate) output_format: Option<OutputFormat>,
    /// Parquet page compression
    #[arg(long, value_enum, default_value_t = ParquetCompression::Snappy, help_heading = OUTPUT)]
    pub(crate) compression: ParquetCompression,
    /// No summary on stderr
    #[arg(long, short = 'q', help_heading = OUTPUT)]
    pub(crate) quiet: bool,
    /// Threads that may decompress the batches of one partition's answer at once, the
    /// reader's own among them (1: each batch on the reader's thread) [default: the cores
    /// available]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) decode_threads: Option<u16>,
    /// How keys and values are decoded: key=FORMAT, value=FORMAT, or FORMAT for both, with
    /// FORMAT bytes (the default), string, json, or, in Confluent's framing with the schema
    /// from the Schema Registry, avro, protobuf, jsonschema, or registry (whichever the
    /// schema is; unframed values as bytes); repeatable
    #[arg(long = "serdes", short = 's', value_name = "[key=|value=]FORMAT", help_heading = DECODING)]
    pub(crate) serdes: Vec<String>,
    /// The Schema Registry's URL(s), comma-separated [default: schema.registry.url of the
    /// properties files and -X, with basic.auth.user.info, bearer.auth.token and
    /// schema.registry.ssl.*]
    #[arg(long = "schema-registry", short = 'r', value_name = "URL", help_heading = DECODING)]
    pub(crate) schema_registry: Option<String>,
    /// Parquet and Arrow output: the schema every Avro value is read in (the columns), by
    /// Avro's schema resolution: latest (of the subject <topic>-value), version:N, or id:N
    #[arg(long, value_name = "SCHEMA", default_value = "latest", value_parser = kseek_registry::columns::ReaderSchema::parse, help_heading = DECODING)]
    pub(crate) value_schema: crate::decode::ReaderSchema,
    /// A key or value that does not decode: fail (exit 5, nothing of its batch printed),
    /// skip the record, or print it raw (skip and raw are counted in the summary)
    #[arg(long, value_enum, default_value_t = crate::decode::OnDecodeError::Fail, value_name = "WHAT", help_heading = DECODING)]
    pub(crate) on_decode_error: crate::decode::OnDecodeError,
}

#[derive(Debug, Args)]
pub(crate) struct SplitsArgs {
    #[command(flatten)]
    pub(crate) select: Selector,
    /// At most this many offsets per split (a split's records may be fewer: transaction
    /// markers and compaction take offsets)
    #[arg(long, value_name = "N", value_parser = record_count, required_unless_present = "max_bytes")]
    pub(crate) max_offsets: Option<u64>,
    /// About this many bytes per split, such as 64MiB or 500MB, estimated from each
    /// partition's log size on its leader (DescribeLogDirs, which needs DESCRIBE on the
    /// cluster); with --max-offsets, both limits hold
    #[arg(long, value_name = "SIZE", value_parser = byte_size)]
    pub(crate) max_bytes: Option<u64>,
    /// The splits also drop records whose own timestamp is outside the --from/--to times
    #[arg(long)]
    pub(crate) exact_time: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReadSplitArgs {
    /// A split as `kseek splits` prints it (one line of JSON)
    #[arg(value_name = "SPLIT")]
    pub(crate) split: String,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

impl OutputArgs {
    /// The --output file, or `None` for stdout (no --output, or `-`).
    pub(crate) fn file(&self) -> Option<&std::path::Path> {
        self.output
            .as_deref()
            .filter(|p| *p != std::path::Path::new("-"))
    }

    /// The --format template, or why it is not one.
    pub(crate) fn record_format(&self) -> Result<crate::output::RecordFormat, Fail> {
        crate::output::RecordFormat::parse(&self.format)
            .map_err(|why| Fail::usage(format!("invalid --format {:?}: {why}", self.format)))
    }
}

/// What `read` writes (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// One line per record, as --format says (JSON by default)
    Text,
    /// A Parquet file (the columns of Spark's Kafka source)
    Parquet,
    /// An Arrow IPC stream (the same columns)
    Arrow,
}

#[derive(Debug, Args)]
pub(crate) struct OffsetsArgs {
    #[command(flatten)]
    pub(crate) select: Selector,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    pub(crate) format: TableFormat,
}

#[derive(Debug, Args)]
pub(crate) struct MetadataArgs {
    /// Only these topics (repeat for several) [default: all]
    #[arg(long, short = 't', value_name = "TOPIC")]
    pub(crate) topic: Vec<String>,
    /// table or json (one document)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    pub(crate) format: TableFormat,
}

#[derive(Debug, Args)]
pub(crate) struct CommitArgs {
    /// The consumer group
    #[arg(long, short = 'g', value_name = "GROUP")]
    pub(crate) group: String,
    /// Topic (repeat for several)
    #[arg(long, short = 't', required = true, value_name = "TOPIC")]
    pub(crate) topic: Vec<String>,
    /// Only these partitions (repeat, or a comma list) [default: all]
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P",
          allow_negative_numbers = true, value_parser = partition_id)]
    pub(crate) partition: Vec<i32>,
    /// The position to commit: the group restarts there
    #[arg(long, value_name = "POS", allow_hyphen_values = true)]
    pub(crate) to: String,
    /// Print what would be committed, without committing
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    pub(crate) format: TableFormat,
}

#[derive(Debug, Args)]
pub(crate) struct CommittedArgs {
    /// The consumer group
    #[arg(long, short = 'g', value_name = "GROUP")]
    pub(crate) group: String,
    /// Only these topics [default: every topic the group has committed offsets for]
    #[arg(long, short = 't', value_name = "TOPIC")]
    pub(crate) topic: Vec<String>,
    /// table or json (one object per partition)
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    pub(crate) format: TableFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Isolation {
    /// Every record, also of open and aborted transactions
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
    /// Only committed transactions' records, up to the last stable offset
    #[value(name = "read_committed")]
    ReadCommitted,
}

/// The output of the subcommands other than `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TableFormat {
    /// Aligned columns with a header
    Table,
    /// JSON
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_flags_set_the_client_config() {
        let config = |args: &[&str]| {
            let all = [&["kseek", "metadata", "--bootstrap", "b:1,c:2"][..], args].concat();
            Cli::try_parse_from(all).unwrap().client_config().unwrap()
        };
        let c = config(&[
            "--connect-timeout",
            "500ms",
            "--request-timeout",
            "5s",
            "--retry-deadline",
            "1m30s",
        ]);
        assert_eq!(c.bootstrap, ["b:1,c:2"]);
        assert_eq!(c.connection.connect_timeout, Duration::from_millis(500));
        assert_eq!(c.connection.request_timeout, Duration::from_secs(5));
        assert_eq!(c.retry_deadline, Duration::from_secs(90));
        let defaults = config(&[]);
        let library = kseek::ConnectionConfig::default();
        assert_eq!(defaults.connection.connect_timeout, library.connect_timeout);
        assert_eq!(defaults.connection.request_timeout, library.request_timeout);
        assert_eq!(defaults.retry_deadline, RETRY_DEADLINE);
        // Global: after the subcommand's own flags too.
        let cli = Cli::try_parse_from(["kseek", "read", "--topic", "t", "--request-timeout", "2s"]);
        assert_eq!(cli.unwrap().request_timeout, Some(Duration::from_secs(2)));
    }

    #[test]
    fn split_sizes_are_bytes_with_a_unit() {
        assert_eq!(byte_size("1048576"), Ok(1 << 20));
        assert_eq!(byte_size("64MiB"), Ok(64 << 20));
        assert_eq!(byte_size(" 500MB "), Ok(500_000_000));
        assert_eq!(byte_size("2 GiB"), Ok(2 << 30));
        assert_eq!(byte_size("3kB"), Ok(3_000));
        assert!(byte_size("0MiB").unwrap_err().contains("1 byte or more"));
        assert!(byte_size("5 mb")
            .unwrap_err()
            .contains("\"mb\" is not a unit"));
        assert!(byte_size("MiB")
            .unwrap_err()
            .contains("a number with a unit"));
        assert!(byte_size("-1")
            .unwrap_err()
            .contains("a number with a unit"));
        assert!(byte_size("99999999999GiB")
            .unwrap_err()
            .contains("too large"));
        let splits = |args: &[&str]| {
            Cli::try_parse_from([&["kseek", "splits", "--topic", "t"][..], args].concat())
        };
        let e = splits(&[]).unwrap_err().to_string();
        assert!(e.contains("--max-offsets"), "{e}");
        assert!(splits(&["--max-bytes", "1MiB"]).is_ok());
        assert!(splits(&["--max-offsets", "10"]).is_ok());
        assert!(splits(&["--max-offsets", "10", "--max-bytes", "1MiB"]).is_ok());
    }

    #[test]
    fn timeouts_are_positive_durations() {
        assert_eq!(timeout("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(timeout(" 2m "), Ok(Duration::from_secs(120)));
        assert!(timeout("0s").unwrap_err().contains("more than 0"));
        assert!(timeout("-1s").unwrap_err().contains("can't be negative"));
        assert!(timeout("5").unwrap_err().contains("needs a unit"));
        assert!(timeout("").unwrap_err().contains("500ms, 5s"));
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
    fn help_groups_the_command_s_options_then_output_then_connection() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        cli.build();
        for name in ["read", "offsets", "metadata", "commit", "committed"] {
            let help = cli
                .find_subcommand_mut(name)
                .unwrap()
                .render_long_help()
                .to_string();
            let at = |text: &str| {
                help.find(text)
                    .unwrap_or_else(|| panic!("{name}: no {text:?} in\n{help}"))
            };
            let connection = at("\nConnection and security:\n");
            // The command's own options come first, the global flags in their own section.
            assert!(at("\nOptions:\n") < connection, "{name}:\n{help}");
            for global in [
                "--bootstrap",
                "--connect-timeout",
                "--request-timeout",
                "-X <",
                "--config",
            ] {
                assert!(
                    at(global) > connection,
                    "{name}: {global} outside its section:\n{help}"
                );
            }
            if name == "read" {
                // --from and --to side by side, the output flags in theirs, and the template
                // tokens paragraph whole.
                let between = &help[at("--from <POS>")..at("--to <POS>")];
                assert!(
                    !between
                        .lines()
                        .skip(1)
                        .any(|l| l.trim_start().starts_with('-')),
                    "another flag between --from and --to:\n{between}"
                );
                let output = at("\nOutput:\n");
                assert!(
                    at("--format <FORMAT>") > output && at("--quiet") > output,
                    "{help}"
                );
                assert!(at("--from <POS>") < output, "{help}");
                assert!(
                    help.contains(READ_EXAMPLES.lines().nth(3).unwrap()),
                    "{help}"
                );
            }
        }
    }

    #[test]
    fn isolation_levels_are_taken_in_any_case() {
        let isolation = |value: &str| {
            let cli = Cli::try_parse_from(["kseek", "read", "--topic", "t", "--isolation", value]);
            match cli.map(|c| c.command) {
                Ok(Command::Read(r)) => Ok(r.select.isolation),
                Ok(_) => panic!("not read"),
                Err(e) => Err(e.exit_code()),
            }
        };
        for committed in ["read_committed", "READ_COMMITTED", "Read_Committed"] {
            assert_eq!(
                isolation(committed),
                Ok(Isolation::ReadCommitted),
                "{committed}"
            );
        }
        assert_eq!(
            isolation("READ_UNCOMMITTED"),
            Ok(Isolation::ReadUncommitted)
        );
        assert_eq!(isolation("committed"), Err(2));
    }
}

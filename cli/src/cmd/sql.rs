//! `kseek sql`: SQL over topics, on DataFusion with kseek's table provider (`kseek-sql`).

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use kseek::properties::Properties;
use kseek::{ClientConfig, IsolationLevel};
use kseek_sql::datafusion::arrow::array::RecordBatch;
use kseek_sql::datafusion::error::DataFusionError;
use kseek_sql::datafusion::execution::runtime_env::RuntimeEnvBuilder;
use kseek_sql::datafusion::physical_plan::SendableRecordBatchStream;
use kseek_sql::datafusion::prelude::{SessionConfig, SessionContext};
use kseek_sql::{Kafka, OnDecodeError, SqlConfig, TableOptions};

use crate::args::{Isolation, SqlArgs, SqlDecodeError, SqlFormat, ValueFormat};
use crate::fail::{self, Fail};
use crate::table::{BatchWriter, Kind};

/// Runs `kseek sql`.
pub(crate) async fn run(
    config: &ClientConfig,
    properties: &Properties,
    args: SqlArgs,
) -> Result<(), Fail> {
    let query = match &args.query {
        Some(q) => Some(q.clone()),
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Fail::usage(format!("reading the SQL from stdin: {e}")))?;
            Some(text)
        }
        // A terminal: the prompt.
        None => None,
    };
    let format = output_format(&args)?;
    let client = super::connect(config).await?;
    let mut defaults = TableOptions::default()
        .isolation(match args.isolation {
            Isolation::ReadCommitted => IsolationLevel::READ_COMMITTED,
            Isolation::ReadUncommitted => IsolationLevel::READ_UNCOMMITTED,
        })
        .max_lateness(args.max_lateness);
    defaults.on_decode_error = match args.on_decode_error {
        SqlDecodeError::Fail => OnDecodeError::Fail,
        SqlDecodeError::Skip => OnDecodeError::Skip,
        SqlDecodeError::Null => OnDecodeError::Null,
    };
    if args.value_format == ValueFormat::Avro {
        defaults.format = Some("avro".to_owned());
    }
    let mut sql_config = SqlConfig::default();
    sql_config.defaults = defaults;
    sql_config.max_records = args.max_records;
    sql_config.registry = registry(config, properties, &args)?;
    let kafka = Kafka::new(client, sql_config);
    let ctx = session(&args)?;
    kafka
        .register(&ctx)
        .await
        .map_err(|e| failed(&e, "listing the topics"))?;
    match query {
        Some(query) => run_one(&ctx, &kafka, &query, &args, format).await,
        None => prompt(&ctx, &kafka, &args, format).await,
    }
}

/// Runs `query` with the progress line and the notices on stderr.
async fn run_one(
    ctx: &SessionContext,
    kafka: &Kafka,
    query: &str,
    args: &SqlArgs,
    format: SqlFormat,
) -> Result<(), Fail> {
    let progress = (!args.quiet && std::io::stderr().is_terminal()).then(|| Progress::start(kafka));
    let result = execute(ctx, query, args, format).await;
    if let Some(p) = progress {
        p.stop().await;
    }
    if !args.quiet {
        for notice in kafka.take_notices() {
            crate::output::note(&format!("kseek: note: {notice}"));
        }
    }
    result
}

/// The prompt of `kseek sql` without a query on a terminal: statements end with `;`, a failed
/// one prints its line and the prompt goes on; Ctrl-C drops the statement being typed, Ctrl-D
/// (or `\q`) leaves. History in `~/.kseek_sql_history`.
async fn prompt(
    ctx: &SessionContext,
    kafka: &Kafka,
    args: &SqlArgs,
    format: SqlFormat,
) -> Result<(), Fail> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::DefaultEditor::new()
        .map_err(|e| Fail::usage(format!("the prompt can't start: {e}")))?;
    let history = std::env::var_os("HOME")
        .map(|home| std::path::PathBuf::from(home).join(".kseek_sql_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    eprintln!(
        "kseek sql: every topic is a table; end a statement with ';', leave with Ctrl-D or \\q"
    );
    let mut statement = String::new();
    loop {
        let shown = if statement.is_empty() {
            "kseek> "
        } else {
            "   ..> "
        };
        let line = tokio::task::block_in_place(|| editor.readline(shown));
        match line {
            Ok(line) if statement.is_empty() && matches!(line.trim(), "\\q" | "quit" | "exit") => {
                break
            }
            Ok(line) => {
                statement.push_str(&line);
                statement.push('\n');
                if !line.trim_end().ends_with(';') {
                    continue;
                }
                let _ = editor.add_history_entry(statement.trim());
                if let Err(f) = run_one(ctx, kafka, &statement, args, format).await {
                    crate::report(&f);
                }
                statement.clear();
            }
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Fail::usage(format!("the prompt failed: {e}"))),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}

/// The output format: `--output-format`, else `--output`'s extension, else a table on a
/// terminal and JSON lines when piped.
fn output_format(args: &SqlArgs) -> Result<SqlFormat, Fail> {
    let path = args
        .output
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let ext = path
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match (args.output_format, ext.as_deref()) {
        (Some(f), _) => f,
        (None, Some("parquet")) => SqlFormat::Parquet,
        (None, Some("arrow" | "arrows")) => SqlFormat::Arrow,
        (None, Some("csv")) => SqlFormat::Csv,
        (None, Some("json" | "jsonl" | "ndjson")) => SqlFormat::Json,
        (None, _) if path.is_none() && std::io::stdout().is_terminal() => SqlFormat::Table,
        (None, _) => SqlFormat::Json,
    };
    if matches!(format, SqlFormat::Parquet | SqlFormat::Arrow)
        && path.is_none()
        && std::io::stdout().is_terminal()
    {
        return Err(Fail::usage(
            "binary output to a terminal. Give --output FILE, or pipe stdout to a program (duckdb, pyarrow)",
        ));
    }
    Ok(format)
}

/// The Schema Registry of `-r` or of the properties' `schema.registry.url`, if either is set.
fn registry(
    config: &ClientConfig,
    properties: &Properties,
    args: &SqlArgs,
) -> Result<Option<kseek_registry::Registry>, Fail> {
    let configured = properties
        .value("schema.registry.url")
        .map_err(|e| Fail::usage(e.to_string()))?
        .is_some();
    if args.schema_registry.is_none() && !configured {
        return Ok(None);
    }
    let settings = kseek_registry::RegistryConfig::from_properties(
        properties,
        args.schema_registry.as_deref(),
        config,
    )
    .map_err(|e| Fail::usage(format!("Schema Registry settings: {e}")))?;
    kseek_registry::Registry::new(&settings)
        .map(Some)
        .map_err(|e| crate::decode::registry_failed(&e))
}

/// A DataFusion session with the memory limit of `--memory-limit`.
fn session(args: &SqlArgs) -> Result<SessionContext, Fail> {
    let config = SessionConfig::new().with_information_schema(true);
    let mut runtime = RuntimeEnvBuilder::new();
    if let Some(limit) = args.memory_limit {
        runtime = runtime.with_memory_limit(usize::try_from(limit).unwrap_or(usize::MAX), 1.0);
    }
    let runtime = runtime
        .build_arc()
        .map_err(|e| Fail::usage(format!("--memory-limit: {e}")))?;
    Ok(SessionContext::new_with_config_rt(config, runtime))
}

/// Runs the statements of `query` in turn, printing the last one's rows.
async fn execute(
    ctx: &SessionContext,
    query: &str,
    args: &SqlArgs,
    format: SqlFormat,
) -> Result<(), Fail> {
    let statements = kseek_sql::datafusion::sql::parser::DFParser::parse_sql(query)
        .map_err(|e| failed(&e, "parsing the SQL"))?;
    let count = statements.len();
    for (i, statement) in statements.into_iter().enumerate() {
        // Planned with the session as the statements before left it (a table they created).
        let plan = ctx
            .state()
            .statement_to_plan(statement)
            .await
            .map_err(|e| failed(&e, "planning the query"))?;
        let last = i + 1 == count;
        let frame = ctx.execute_logical_plan(plan).await.map_err(|e| {
            failed(
                &e,
                if last {
                    "planning the query"
                } else {
                    "running the query"
                },
            )
        })?;
        if !last {
            frame
                .collect()
                .await
                .map_err(|e| failed(&e, "running the query"))?;
        } else {
            let stream = frame
                .execute_stream()
                .await
                .map_err(|e| failed(&e, "planning the query"))?;
            return write_rows(stream, args, format).await;
        }
    }
    Err(Fail::usage("the SQL has no statement"))
}

/// Writes the rows of `stream` as `format` says.
async fn write_rows(
    mut stream: SendableRecordBatchStream,
    args: &SqlArgs,
    format: SqlFormat,
) -> Result<(), Fail> {
    let path = args
        .output
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let schema = stream.schema();
    let output = |e: &std::io::Error| match path {
        Some(p) => Fail::output_to(p, e),
        None => Fail::output(e),
    };
    match format {
        SqlFormat::Parquet | SqlFormat::Arrow => {
            let kind = if format == SqlFormat::Parquet {
                Kind::Parquet
            } else {
                Kind::Arrow
            };
            let mut writer = BatchWriter::create(kind, path, args.compression, &schema)
                .map_err(|e| output(&e))?;
            while let Some(batch) = next(&mut stream).await {
                let batch = batch.map_err(|e| failed(&e, "running the query"))?;
                writer.write(&batch).map_err(|e| output(&e))?;
            }
            writer.finish().map_err(|e| output(&e))
        }
        SqlFormat::Table => {
            let mut batches: Vec<RecordBatch> = Vec::new();
            while let Some(batch) = next(&mut stream).await {
                batches.push(batch.map_err(|e| failed(&e, "running the query"))?);
            }
            let text = kseek_sql::datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                .map_err(|e| failed(&DataFusionError::from(e), "printing the rows"))?;
            let mut out = text_target(path).map_err(|e| output(&e))?;
            writeln!(out, "{text}")
                .and_then(|()| out.flush())
                .map_err(|e| output(&e))
        }
        SqlFormat::Json | SqlFormat::Csv => {
            let out = text_target(path).map_err(|e| output(&e))?;
            let mut writer: Box<dyn RowWriter> = if format == SqlFormat::Csv {
                Box::new(arrow_csv::Writer::new(out))
            } else {
                Box::new(arrow_json::LineDelimitedWriter::new(out))
            };
            while let Some(batch) = next(&mut stream).await {
                let batch = batch.map_err(|e| failed(&e, "running the query"))?;
                writer.write_batch(&batch).map_err(|e| output(&e))?;
            }
            writer.finish_rows().map_err(|e| output(&e))
        }
    }
}

/// The next item of `stream`.
async fn next(
    stream: &mut SendableRecordBatchStream,
) -> Option<kseek_sql::datafusion::error::Result<RecordBatch>> {
    std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
}

/// Stdout, or the file `path`.
fn text_target(path: Option<&std::path::Path>) -> std::io::Result<Box<dyn Write + Send>> {
    Ok(match path {
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
    })
}

/// The CSV and JSON lines writers, as one.
trait RowWriter {
    fn write_batch(&mut self, batch: &RecordBatch) -> std::io::Result<()>;
    fn finish_rows(self: Box<Self>) -> std::io::Result<()>;
}

fn arrow_io(e: arrow_schema::ArrowError) -> std::io::Error {
    match e {
        arrow_schema::ArrowError::IoError(_, e) => e,
        other => std::io::Error::other(other.to_string()),
    }
}

impl<W: Write> RowWriter for arrow_csv::Writer<W> {
    fn write_batch(&mut self, batch: &RecordBatch) -> std::io::Result<()> {
        self.write(batch).map_err(arrow_io)
    }

    fn finish_rows(self: Box<Self>) -> std::io::Result<()> {
        self.into_inner().flush()
    }
}

impl<W: Write> RowWriter for arrow_json::LineDelimitedWriter<W> {
    fn write_batch(&mut self, batch: &RecordBatch) -> std::io::Result<()> {
        self.write(batch).map_err(arrow_io)
    }

    fn finish_rows(mut self: Box<Self>) -> std::io::Result<()> {
        self.finish().map_err(arrow_io)?;
        self.into_inner().flush()
    }
}

/// A DataFusion error as a failure: Kafka's as `read`'s are, a value that does not decode
/// (exit 5), the Schema Registry's (exit 6), a query that is wrong (exit 2), others (exit 1).
fn failed(e: &DataFusionError, doing: &str) -> Fail {
    if let Some(k) = kseek_sql::cause::<kseek::Error>(e) {
        return Fail::kafka(doing, k);
    }
    if let Some(v) = kseek_sql::cause::<kseek_sql::ValueError>(e) {
        return Fail {
            code: fail::DECODE,
            message: format!("a value does not decode: {v}"),
        };
    }
    if let Some(r) = kseek_sql::cause::<kseek_registry::RegistryError>(e) {
        return crate::decode::registry_failed(r);
    }
    let text = one_line(&e.strip_backtrace());
    let code = match e.find_root() {
        DataFusionError::SQL(..)
        | DataFusionError::Plan(_)
        | DataFusionError::SchemaError(..)
        | DataFusionError::NotImplemented(_)
        | DataFusionError::Configuration(_) => fail::USAGE,
        _ => fail::OTHER,
    };
    Fail {
        code,
        message: format!("{doing}: {text}"),
    }
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line on stderr while a query runs: the bytes fetched so far and the time.
struct Progress {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Progress {
    fn start(kafka: &Kafka) -> Progress {
        let kafka = kafka.clone();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut drawn = false;
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tick.tick() => {}
                }
                // Scans shorter than a second draw nothing.
                if started.elapsed() < Duration::from_secs(1) {
                    continue;
                }
                let mb = kafka.fetched_bytes() as f64 / 1e6;
                let _ = write!(
                    std::io::stderr(),
                    "\r\x1b[2Kkseek: {mb:.1} MB fetched, {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                drawn = true;
            }
            if drawn {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        });
        Progress { stop, task }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

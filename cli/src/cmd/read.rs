//! `kseek read`: resolve the range, print its records, commit where asked.

use std::future::Future;
use std::io::IsTerminal;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use futures_core::Stream;
use kseek::properties::Properties;
use kseek::read::{FetchedBatch, TimeFilter};
use kseek::{ClientConfig, CommitOffset, Plan, ReadOptions};

use crate::args::{OutputArgs, OutputFormat, ReadArgs, ReadSplitArgs};
use crate::decode::{Decoding, ValueColumns};
use crate::fail::Fail;
use crate::output::{BatchFailed, Printed, RecordFormat, RecordWriter};
use crate::progress::Progress;
use crate::table::{Kind, TableWriter};

/// Where `read` writes its records.
enum Out {
    /// Lines as --format says, to stdout or a file.
    Text(RecordWriter<Box<dyn std::io::Write>>),
    /// Parquet or an Arrow IPC stream (boxed: it is much larger than the text writer).
    Table(Box<TableWriter>),
}

impl Out {
    /// The output `args` ask for, in `format` when it is text; `plan` names the topic whose
    /// subject gives the value columns (`-s value=avro` to Parquet or Arrow).
    async fn open(
        args: &OutputArgs,
        format: RecordFormat,
        decoding: Option<Decoding>,
        plan: &Plan,
    ) -> Result<Out, Fail> {
        let path = args.file();
        let named = |ext: &[&str]| {
            path.and_then(|p| p.extension())
                .and_then(|e| e.to_str())
                .is_some_and(|e| ext.iter().any(|x| e.eq_ignore_ascii_case(x)))
        };
        let kind = match args.output_format {
            Some(OutputFormat::Text) => None,
            Some(OutputFormat::Parquet) => Some(Kind::Parquet),
            Some(OutputFormat::Arrow) => Some(Kind::Arrow),
            None if named(&["parquet"]) => Some(Kind::Parquet),
            None if named(&["arrow", "arrows"]) => Some(Kind::Arrow),
            None => None,
        };
        let Some(kind) = kind else {
            let out: Box<dyn std::io::Write> = match path {
                None => Box::new(std::io::stdout().lock()),
                Some(p) => Box::new(std::fs::File::create(p).map_err(|e| Fail::output_to(p, &e))?),
            };
            let mut writer = RecordWriter::new(format, out);
            writer.decoding = decoding;
            return Ok(Out::Text(writer));
        };
        let values = match decoding {
            None => Vec::new(),
            Some(d) => value_columns(d, args, plan).await?,
        };
        if args.format != "json" {
            return Err(Fail::usage(format!(
                "--format {:?} is for text output, not {}. Leave --format out, or use --output-format text.",
                args.format,
                if kind == Kind::Parquet { "Parquet" } else { "Arrow" }
            )));
        }
        if path.is_none() && std::io::stdout().is_terminal() {
            return Err(Fail::usage(
                "binary output to a terminal. Give --output FILE, or pipe stdout to a program (duckdb, pyarrow).".to_owned(),
            ));
        }
        TableWriter::create(kind, path, args.compression, values)
            .map(|w| Out::Table(Box::new(w)))
            .map_err(|e| Fail::output_to(path.unwrap_or("-".as_ref()), &e))
    }

    fn write_batch(
        &mut self,
        batch: &FetchedBatch,
        max: u64,
    ) -> Result<Printed, BatchFailed<kseek::Error>> {
        match self {
            Out::Text(out) => {
                out.write_batch(batch.topic(), batch.partition(), batch.records(), max)
            }
            Out::Table(out) => out.write_batch(batch, max),
        }
    }

    /// Fetches the schemas `batch` needs before it is written.
    async fn prepare(&mut self, batch: &FetchedBatch) -> Result<(), Fail> {
        match self {
            Out::Text(RecordWriter {
                decoding: Some(d), ..
            }) => d.prepare(batch).await,
            Out::Table(t) => {
                for v in &mut t.values {
                    v.prepare(batch).await?;
                }
                Ok(())
            }
            Out::Text(_) => Ok(()),
        }
    }

    /// What `--on-decode-error skip` and `raw` did: (skipped, printed raw).
    fn decode_counts(&self) -> (u64, u64) {
        match self {
            Out::Text(RecordWriter {
                decoding: Some(d), ..
            }) => (d.skipped, d.raw),
            Out::Table(t) => (t.skipped, 0),
            Out::Text(_) => (0, 0),
        }
    }

    fn is_dirty(&self) -> bool {
        match self {
            Out::Text(out) => out.is_dirty(),
            Out::Table(out) => out.is_dirty(),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Text(out) => out.flush(),
            Out::Table(out) => out.flush(),
        }
    }
}

/// What the read loop saw next.
// Boxing the batch would cost an allocation per batch; a Step lives for one loop turn.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// A batch, an error, or the end (`None`).
    Next(Option<kseek::Result<FetchedBatch>>),
    /// No batch is ready right now: a good moment to flush.
    Idle,
    /// Ctrl-C.
    Interrupted,
}

/// Why the read loop stopped early.
enum Stopped {
    /// Writing the output failed: what the reader got is unknown.
    Output(Fail),
    /// Reading failed (Kafka, the network, corrupt data): everything printed before is whole.
    Read(Fail),
}

/// Runs `kseek read`.
pub(crate) async fn run(
    config: &ClientConfig,
    properties: &Properties,
    args: ReadArgs,
    now: i64,
) -> Result<(), Fail> {
    let started = Instant::now();
    let format = args.out.record_format()?;
    let decoding = decoding(&args.out, properties, config)?;
    let (client, spec, plan) = super::resolve_selector(config, &args.select, now).await?;
    let filter = TimeFilter::from_spec(&spec).filter(|_| args.exact_time);
    let commit = args.select.group.as_deref().filter(|_| args.commit);
    read_plan(
        client,
        plan,
        filter,
        Reading {
            out: &args.out,
            format,
            decoding,
            commit,
            follow: args.select.follow,
            started,
        },
    )
    .await
}

/// Runs `kseek read-split`.
pub(crate) async fn run_split(
    config: &ClientConfig,
    properties: &Properties,
    args: ReadSplitArgs,
) -> Result<(), Fail> {
    let started = Instant::now();
    let format = args.out.record_format()?;
    let decoding = decoding(&args.out, properties, config)?;
    // `from_json` checks the split makes a plan: `plan` can't fail after it.
    let (split, plan) = kseek_arrow::Split::from_json(args.split.trim())
        .and_then(|split| split.plan().map(|plan| (split, plan)))
        .map_err(|e| Fail::usage(format!("{e}. Give a line that kseek splits printed")))?;
    let client = super::connect(&split.client_config(config.clone())).await?;
    let reading = Reading {
        out: &args.out,
        format,
        decoding,
        commit: None,
        follow: split.end.is_none(),
        started,
    };
    read_plan(client, plan, split.time_filter(), reading).await
}

/// How a plan is read and written.
struct Reading<'a> {
    out: &'a OutputArgs,
    format: RecordFormat,
    /// `-s`: how keys and values are decoded.
    decoding: Option<Decoding>,
    /// The group to commit to after the output is complete.
    commit: Option<&'a str>,
    /// An unbounded read: Ctrl-C is its normal end.
    follow: bool,
    started: Instant,
}

/// Reads `plan` (keeping only the records `filter` passes) and writes it as `reading` says.
async fn read_plan(
    client: kseek::Client,
    plan: Plan,
    filter: Option<TimeFilter>,
    reading: Reading<'_>,
) -> Result<(), Fail> {
    let Reading {
        out: args,
        format,
        decoding,
        commit,
        follow,
        started,
    } = reading;
    let mut options = ReadOptions::default();
    if let Some(threads) = args.decode_threads {
        options = options.decode_threads(threads.into());
    }
    if let Some(filter) = filter {
        options = options.time_filter(filter);
    }
    let starts: Vec<i64> = plan.partitions.iter().map(|p| p.start).collect();
    let partitions = plan.partitions.len();
    let mut progress = progress_for(&plan, args.quiet);
    // Records are formatted straight from each batch's record views: one await per batch,
    // then a plain loop over its records (output.rs, `RecordWriter`).
    let mut out = Out::open(args, format, decoding, &plan).await?;
    let mut batches = client.read(plan, options);

    let limit = args.count.unwrap_or(u64::MAX);
    let (mut count, mut bytes) = (0u64, 0u64);
    // Set when the read stopped inside the last batch handed out: the offset of its first
    // record not printed, or `None` for a batch none of whose records was printed.
    let mut within_last: Option<Option<i64>> = None;
    let mut interrupted = false;
    let mut ctrl_c = Some(Box::pin(tokio::signal::ctrl_c()));
    let result: Result<(), Stopped> = loop {
        if count >= limit {
            break Ok(());
        }
        let step = std::future::poll_fn(|cx| {
            if let Some(signal) = ctrl_c.as_mut() {
                match signal.as_mut().poll(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Step::Interrupted),
                    // No signal handling here: run without it.
                    Poll::Ready(Err(_)) => ctrl_c = None,
                    Poll::Pending => {}
                }
            }
            match Pin::new(&mut batches).poll_next(cx) {
                Poll::Ready(next) => Poll::Ready(Step::Next(next)),
                Poll::Pending if out.is_dirty() => Poll::Ready(Step::Idle),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        match step {
            Step::Idle => {
                if let Err(e) = out.flush() {
                    break Err(Stopped::Output(crate::output::output_failed(e)));
                }
            }
            Step::Interrupted => {
                interrupted = true;
                break Ok(());
            }
            Step::Next(None) => break Ok(()),
            Step::Next(Some(Err(e))) => break Err(Stopped::Read(Fail::kafka("reading", &e))),
            Step::Next(Some(Ok(batch))) => {
                if let Err(fail) = out.prepare(&batch).await {
                    // Nothing of this batch is printed: a commit stops before it.
                    within_last = Some(None);
                    break Err(Stopped::Read(fail));
                }
                let printed = match out.write_batch(&batch, limit - count) {
                    Ok(printed) => printed,
                    Err(BatchFailed::Output(e)) => {
                        break Err(Stopped::Output(crate::output::output_failed(e)))
                    }
                    Err(BatchFailed::Read(e)) => {
                        within_last = Some(None);
                        break Err(Stopped::Read(Fail::kafka("reading", &e)));
                    }
                    Err(BatchFailed::Decode { offset, message }) => {
                        within_last = Some(None);
                        break Err(Stopped::Read(Fail {
                            code: crate::fail::DECODE,
                            message: format!(
                                "partition {} of topic {:?}, offset {offset}: {message}. Check -s, or give --on-decode-error skip or raw",
                                batch.partition(),
                                batch.topic()
                            ),
                        }));
                    }
                };
                count += printed.records;
                bytes += printed.bytes;
                if let Some(next) = printed.stopped_before {
                    within_last = Some(Some(next));
                }
                if let Some(p) = progress.as_mut().filter(|p| p.due()) {
                    let done = batches
                        .positions()
                        .iter()
                        .zip(&starts)
                        .map(|(p, s)| p.next_offset.saturating_sub(*s).max(0) as u64)
                        .sum();
                    p.draw(done, count);
                }
            }
        }
    };
    if let Some(p) = progress.as_mut() {
        p.clear();
    }
    // What was printed goes out before anything else happens, also after a failed read.
    // A Parquet file or an Arrow stream is completed (a file renamed to its name) only
    // after a read that did not fail: then all of it is what the range holds up to the
    // last record written (Ctrl-C and --count included).
    let mut decode_counts = out.decode_counts();
    let flushed = match out {
        Out::Text(mut out) => out.flush().map_err(crate::output::output_failed),
        Out::Table(out) => {
            if result.is_ok() {
                out.finish()
                    .map(|(written, skipped)| {
                        bytes = written;
                        // Values decode as record batches are handed over (the last one
                        // now): the records counted as written include those skipped.
                        count = count.saturating_sub(skipped);
                        decode_counts.0 = skipped;
                    })
                    .map_err(crate::output::output_failed)
            } else {
                out.abandon();
                if let Err(Stopped::Read(fail)) = result {
                    // Nothing was written under the file's name: nothing to commit.
                    return Err(fail);
                }
                Ok(())
            }
        }
    };
    let failed = match result {
        // Nothing is committed: the records may not have reached the reader.
        Err(Stopped::Output(fail)) => return Err(fail),
        Err(Stopped::Read(fail)) => Some(fail),
        Ok(()) => None,
    };
    flushed?;
    // Not a summary: shown with --quiet too.
    for loss in batches.data_loss() {
        crate::output::note(&format!(
            "kseek: warning: partition {} of topic {:?}: offsets {} to {} were deleted before they could be read; the read went on at offset {}.",
            loss.partition,
            loss.topic,
            loss.from,
            loss.to - 1,
            loss.to
        ));
    }
    if let Some(group) = commit {
        // --commit requires --group (clap checks). After a failed read too: the positions stop
        // right after the last record printed (before a batch that failed to decode, which
        // prints nothing), and every record printed was flushed, so the group restarts
        // exactly where the output stopped, neither skipping nor repeating a record.
        let positions = match within_last {
            Some(next) => batches.positions_within_last(next),
            None => batches.positions().to_vec(),
        };
        let commits: Vec<CommitOffset> = positions.into_iter().map(Into::into).collect();
        let committed = client
            .commit(group, &commits)
            .await
            .map_err(|e| Fail::kafka(&format!("committing the offsets of group {group:?}"), &e));
        match committed {
            Err(fail) if failed.is_none() => return Err(fail),
            // The read's failure is the one to report (below); the commit's goes before it.
            Err(fail) => crate::output::note(&fail.to_string()),
            Ok(()) if !args.quiet => {
                let what = if failed.is_some() {
                    " (up to the last record printed before the error)"
                } else {
                    ""
                };
                crate::output::note(&format!(
                    "committed offsets of group {group:?} for {}{what}",
                    plural(commits.len() as u64, "partition")
                ));
            }
            Ok(()) => {}
        }
    }
    if let Some(fail) = failed {
        return Err(fail);
    }
    let (skipped, raw) = decode_counts;
    if skipped > 0 || raw > 0 {
        // Not a summary: shown with --quiet too.
        crate::output::note(&format!(
            "kseek: warning: {} that did not decode: {skipped} skipped, {raw} printed raw",
            plural(skipped + raw, "record")
        ));
    }
    if !args.quiet {
        let partitions = batches.positions().len().max(partitions);
        crate::output::note(&format!(
            "read {} ({bytes} bytes of keys+values) from {} in {:.2}s",
            plural(count, "record"),
            plural(partitions as u64, "partition"),
            started.elapsed().as_secs_f64()
        ));
    }
    if interrupted && !follow {
        let message = match args.file() {
            Some(path) => format!(
                "interrupted before the end of the range; {} holds the {} read",
                path.display(),
                plural(count, "record")
            ),
            None => "interrupted before the end of the range".to_owned(),
        };
        return Err(Fail {
            code: crate::fail::INTERRUPTED,
            message,
        });
    }
    Ok(())
}

/// `-s value=avro` and `-s key=avro` for Parquet and Arrow output: the columns of the plan's
/// one topic (the other side stays bytes).
async fn value_columns(
    decoding: Decoding,
    args: &OutputArgs,
    plan: &Plan,
) -> Result<Vec<ValueColumns>, Fail> {
    use crate::decode::{OnDecodeError, ReaderSchema, Serde, Side};
    let refuse = |why: &str| {
        Err(Fail::usage(format!(
            "{why}. Use --output-format text, or leave -s out"
        )))
    };
    let sides = [(Side::Key, decoding.key), (Side::Value, decoding.value)];
    if sides
        .iter()
        .any(|(_, serde)| !matches!(serde, Serde::Bytes | Serde::Avro))
    {
        return refuse("Parquet and Arrow output decode keys and values with -s key=avro and -s value=avro only");
    }
    if decoding.on_error == OnDecodeError::Raw {
        return refuse("--on-decode-error raw is for text output (a column has one type)");
    }
    let mut topics: Vec<&str> = plan.partitions.iter().map(|p| p.topic.as_str()).collect();
    topics.dedup();
    let [topic] = topics[..] else {
        return refuse("-s avro with Parquet or Arrow output reads one topic (its subjects' schemas give the columns)");
    };
    let on_error = decoding.on_error;
    let Some(registry) = decoding.registry() else {
        return refuse("no Schema Registry");
    };
    let mut columns = Vec::new();
    for (side, serde) in sides {
        if serde == Serde::Avro {
            let reader = match side {
                Side::Key => ReaderSchema::Latest,
                Side::Value => args.value_schema,
            };
            columns
                .push(ValueColumns::new(registry.clone(), topic, side, &reader, on_error).await?);
        }
    }
    Ok(columns)
}

/// The decoders `-s` asks for, with a registry client when one of them is Avro.
fn decoding(
    args: &OutputArgs,
    properties: &Properties,
    config: &ClientConfig,
) -> Result<Option<Decoding>, Fail> {
    use crate::decode::Serde;
    if args.serdes.is_empty() {
        if args.schema_registry.is_some() {
            return Err(Fail::usage(
                "-r names a Schema Registry, but no -s says what to decode with it. Add -s value=avro (or key=avro)".to_owned(),
            ));
        }
        return Ok(None);
    }
    let (key, value) = crate::decode::parse_serdes(&args.serdes)?;
    let registry = if [key, value]
        .iter()
        .any(|s| matches!(s, Serde::Avro | Serde::Protobuf | Serde::Registry))
    {
        let settings = kseek_registry::RegistryConfig::from_properties(
            properties,
            args.schema_registry.as_deref(),
            config,
        )
        .map_err(|e| Fail::usage(format!("Schema Registry settings: {e}")))?;
        Some(
            kseek_registry::Registry::new(&settings)
                .map_err(|e| crate::decode::registry_failed(&e))?,
        )
    } else {
        None
    };
    Ok(Some(Decoding::new(
        key,
        value,
        args.on_decode_error,
        registry,
    )))
}

/// A progress bar for a bounded read when stderr is a terminal (and not --quiet).
fn progress_for(plan: &Plan, quiet: bool) -> Option<Progress> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    plan.max_records().map(Progress::new)
}

/// `1 record`, `2 records`.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn plurals() {
        assert_eq!(plural(0, "record"), "0 records");
        assert_eq!(plural(1, "partition"), "1 partition");
        assert_eq!(plural(2, "record"), "2 records");
    }
}

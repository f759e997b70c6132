//! A Fetch request from what the machine asks for, and a partition's answer decoded into
//! batches within its range.

use super::*;

/// The Fetch version to use: the negotiated one, but names (v12) when a topic id is unknown.
pub(crate) fn fetch_version(negotiated: i16, requested: &[Requested]) -> i16 {
    if negotiated >= 13 && requested.iter().any(|r| r.sent.topic_id.is_zero()) {
        12
    } else {
        negotiated
    }
}

/// The Fetch for `requested` with the session fields of `session`, topics in order of first
/// appearance. An incremental fetch (epoch above 0, v7+) leaves out the partitions marked
/// unchanged and lists the forgotten ones; a full fetch has every partition. Below v7 the
/// session fields are not on the wire, and the fetch is always full.
pub(crate) fn build_fetch(
    requested: &[Requested],
    version: i16,
    params: &FetchParams,
    session: &SessionRequest,
) -> FetchRequest {
    let incremental = session.is_incremental(version);
    let same_topic = |t: &str, id: Uuid, r: &Requested| {
        if version >= 13 {
            id == r.sent.topic_id
        } else {
            *t == *r.topic
        }
    };
    let mut topics: Vec<FetchTopic> = Vec::new();
    for r in requested.iter().filter(|r| !incremental || !r.unchanged) {
        let partition = FetchPartition {
            partition: r.partition,
            current_leader_epoch: if version >= 9 {
                r.sent.leader_epoch
            } else {
                -1
            },
            fetch_offset: r.sent.position,
            partition_max_bytes: r.sent.max_bytes,
            ..FetchPartition::default()
        };
        match topics
            .iter_mut()
            .find(|t| same_topic(&t.topic, t.topic_id, r))
        {
            Some(t) => t.partitions.push(partition),
            None => topics.push(FetchTopic {
                topic: r.topic.to_string(),
                topic_id: r.sent.topic_id,
                partitions: vec![partition],
                ..FetchTopic::default()
            }),
        }
    }
    let mut forgotten_topics_data: Vec<ForgottenTopic> = Vec::new();
    if incremental {
        for f in &session.forgotten {
            match forgotten_topics_data
                .iter_mut()
                .find(|t| same_topic(&t.topic, t.topic_id, f))
            {
                Some(t) => t.partitions.push(f.partition),
                None => forgotten_topics_data.push(ForgottenTopic {
                    topic: f.topic.to_string(),
                    topic_id: f.sent.topic_id,
                    partitions: vec![f.partition],
                    ..ForgottenTopic::default()
                }),
            }
        }
    }
    let (session_id, session_epoch) = if version >= 7 {
        (session.id, session.epoch)
    } else {
        (0, -1)
    };
    FetchRequest {
        max_wait_ms: params.max_wait_ms,
        min_bytes: params.min_bytes,
        max_bytes: params.max_bytes,
        isolation_level: params.isolation,
        session_id,
        session_epoch,
        topics,
        forgotten_topics_data,
        ..FetchRequest::default()
    }
}

/// Record batches of a partition that failed to decode.
#[derive(Debug)]
pub(crate) struct DecodeFailure {
    /// The batches before the failing one, as a chunk ending where the failing one starts.
    pub(crate) before: Option<Output>,
    /// What failed, at which offset.
    pub(crate) error: Error,
}

/// Decodes one partition's records from a Fetch response, moving `p`'s position. Returns
/// the output for the stream, or `None` when nothing changed.
pub(crate) fn decode_partition(
    p: &mut PartState,
    idx: usize,
    data: PartitionData,
    broker: &Arc<str>,
    isolation: IsolationLevel,
    options: &ReadOptions,
) -> std::result::Result<Option<Output>, Box<DecodeFailure>> {
    let start = p.position;
    let records = data.records.unwrap_or_default();
    let mut reader =
        PartitionReader::new(records, start, options.decode).decode_threads(options.decode_threads);
    if let Some(end) = p.end {
        reader = reader.with_end_offset(end);
    }
    if isolation == IsolationLevel::READ_COMMITTED {
        let aborted = data.aborted_transactions.unwrap_or_default();
        reader = reader.read_committed(aborted.into_iter().map(|t| AbortedTransaction {
            producer_id: t.producer_id,
            first_offset: t.first_offset,
        }));
    }
    let mut batches = Vec::new();
    for batch in &mut reader {
        let batch = match batch {
            Ok(batch) => batch,
            Err(source) => {
                let position = reader_position_hint(start, &batches);
                let error: Error = ErrorKind::CorruptRecords {
                    broker: broker.to_string(),
                    topic: p.topic.to_string(),
                    partition: p.partition,
                    offset: position,
                    source: Box::new(source),
                }
                .into();
                let before = (!batches.is_empty()).then(|| {
                    p.position = position;
                    Output::Chunk(Chunk {
                        idx,
                        batches,
                        position,
                        done: false,
                    })
                });
                return Err(Box::new(DecodeFailure { before, error }));
            }
        };
        let last = batch.batch().next_offset();
        batches.push(FetchedBatch {
            idx,
            topic: p.topic.clone(),
            partition: p.partition,
            broker: broker.clone(),
            next_offset: p.end.map_or(last, |end| last.min(end)),
            inner: batch,
            high_watermark: data.high_watermark,
            time_filter: options.time_filter,
        });
    }
    let position = reader.next_offset();
    let done = reader.end_reached() || p.end.is_some_and(|end| position >= end);
    if position == start && !done {
        // No whole batch: a batch larger than the partition's max bytes was cut off. Ask
        // for all of it, first in the next request.
        if let Some(size) = reader.partial_batch().and_then(|b| b.declared_size) {
            let size = i32::try_from(size).unwrap_or(i32::MAX);
            if size > p.max_bytes {
                p.max_bytes = size;
                p.first = true;
            }
        }
    } else {
        p.max_bytes = options.partition_max_bytes;
        p.first = false;
    }
    p.position = position;
    p.done = done;
    if batches.is_empty() && position == start && !done {
        return Ok(None);
    }
    Ok(Some(Output::Chunk(Chunk {
        idx,
        batches,
        position,
        done,
    })))
}

/// The position of the batch that failed to decode: after the last good one.
pub(super) fn reader_position_hint(start: i64, batches: &[FetchedBatch]) -> i64 {
    batches
        .last()
        .map_or(start, |b| b.inner.batch().next_offset().max(start))
}

//! Fetch requests built from what the machine asks for, and partition answers decoded into
//! batches within their range.

use super::*;

#[test]
fn fetch_requests_group_partitions_by_topic_in_order() {
    let parts = [
        requested("b", 2, 1),
        requested("a", 1, 0),
        requested("b", 2, 0),
    ];
    let request = build_fetch(&parts, 13, &PARAMS, &SessionRequest::SESSIONLESS);
    assert_eq!((request.session_id, request.session_epoch), (0, -1));
    assert_eq!(request.isolation_level, IsolationLevel::READ_COMMITTED);
    assert_eq!(request.max_wait_ms, 500);
    assert_eq!(request.max_bytes, 50 << 20);
    let topics: Vec<(Uuid, Vec<i32>)> = request
        .topics
        .iter()
        .map(|t| {
            (
                t.topic_id,
                t.partitions.iter().map(|p| p.partition).collect(),
            )
        })
        .collect();
    assert_eq!(
        topics,
        [(Uuid([2; 16]), vec![1, 0]), (Uuid([1; 16]), vec![0])]
    );
    let p = &request.topics[0].partitions[0];
    assert_eq!(
        (
            p.fetch_offset,
            p.current_leader_epoch,
            p.partition_max_bytes
        ),
        (11, 4, 1000)
    );
    // Encodes at every version the client may pick.
    for version in [4, 8, 9, 12, 13, 17, 18] {
        let request = build_fetch(&parts, version, &PARAMS, &SessionRequest::SESSIONLESS);
        let mut buf = bytes::BytesMut::new();
        kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
        let expected_epoch = if version >= 9 { 4 } else { -1 };
        assert_eq!(
            request.topics[0].partitions[0].current_leader_epoch,
            expected_epoch
        );
    }
    // By name before v13: topics are told apart by name.
    let by_name = build_fetch(&parts, 12, &PARAMS, &SessionRequest::SESSIONLESS);
    assert_eq!(by_name.topics[0].topic, "b");
    assert_eq!(by_name.topics.len(), 2);
}

#[test]
fn unknown_topic_ids_fall_back_to_names() {
    let mut parts = vec![requested("a", 1, 0)];
    assert_eq!(fetch_version(18, &parts), 18);
    assert_eq!(fetch_version(11, &parts), 11);
    parts.push(requested("b", 0, 0));
    assert_eq!(fetch_version(18, &parts), 12);
    assert_eq!(fetch_version(12, &parts), 12);
}

#[test]
fn decoding_drops_records_outside_the_range_and_moves_by_batches() {
    let options = ReadOptions::default();
    let broker: Arc<str> = Arc::from("b:1");
    let mut p = part("t", 2, Some(7));
    let event = decode_partition(
        &mut p,
        0,
        data(wire(&[batch(0, 5), batch(5, 5)])),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), [2, 3, 4, 5, 6]);
    let Output::Chunk(Chunk {
        batches,
        position,
        done,
        ..
    }) = &event
    else {
        unreachable!()
    };
    // The position moved past the whole second batch; what is handed out stops at the end.
    assert_eq!((*position, *done), (10, true));
    assert_eq!(batches[0].next_offset(), 5);
    assert_eq!(batches[1].next_offset(), 7);
    assert_eq!(batches[1].leader_epoch(), 3);
    assert_eq!(batches[1].high_watermark(), 100);
    assert!(p.done);

    // The time filter applies per record.
    let options = ReadOptions::default().time_filter(TimeFilter::new(Some(1_003), None));
    let mut p = part("t", 0, Some(5));
    let event = decode_partition(
        &mut p,
        0,
        data(wire(&[batch(0, 5)])),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), [3, 4]);
}

#[test]
fn a_cut_off_batch_is_fetched_again_with_room_for_it() {
    let options = ReadOptions::default().partition_max_bytes(1024);
    let broker: Arc<str> = Arc::from("b:1");
    let full = fifty_records_of_100_bytes();
    let mut p = part("t", 0, Some(50));
    p.max_bytes = 1024;
    let event = decode_partition(
        &mut p,
        0,
        data(full.slice(..1024)),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap();
    assert!(event.is_none());
    assert_eq!(p.position, 0);
    assert!(!p.done);
    assert!(p.first);
    assert_eq!(p.max_bytes as usize, full.len());
    // Once it came whole, back to the default.
    let event = decode_partition(
        &mut p,
        0,
        data(full),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &options,
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event).len(), 50);
    assert!(p.done && !p.first);
    assert_eq!(p.max_bytes, 1024);
}

#[test]
fn read_committed_uses_the_aborted_transactions_of_the_response() {
    let broker: Arc<str> = Arc::from("b:1");
    let records = wire(&[
        batch(0, 2).producer(7, 0, 0).transactional(true),
        RecordBatchBuilder::control_marker(2, 0, 7, 0, ControlRecordType::ABORT, 0),
        batch(3, 2),
    ]);
    let mut d = data(records);
    d.aborted_transactions = Some(vec![fetch::AbortedTransaction {
        producer_id: 7,
        first_offset: 0,
        ..Default::default()
    }]);
    for (level, expected) in [
        (IsolationLevel::READ_COMMITTED, vec![3, 4]),
        (IsolationLevel::READ_UNCOMMITTED, vec![0, 1, 3, 4]),
    ] {
        let mut p = part("t", 0, Some(5));
        let event = decode_partition(
            &mut p,
            0,
            d.clone(),
            &broker,
            level,
            &ReadOptions::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(offsets_of(&event), expected);
        assert!(p.done);
    }
    // A range of nothing but the aborted transaction and its marker still ends.
    let mut p = part("t", 0, Some(3));
    let event = decode_partition(
        &mut p,
        0,
        d,
        &broker,
        IsolationLevel::READ_COMMITTED,
        &ReadOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(offsets_of(&event), Vec::<i64>::new());
    assert!(p.done);
    assert_eq!(p.position, 3);
}

#[test]
fn corrupt_records_name_the_partition_and_offset() {
    let broker: Arc<str> = Arc::from("b:1");
    let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let mut p = part("t", 0, None);
    let err = decode_partition(
        &mut p,
        0,
        data(Bytes::from(bytes)),
        &broker,
        IsolationLevel::READ_UNCOMMITTED,
        &ReadOptions::default(),
    )
    .unwrap_err();
    let DecodeFailure { before, error } = *err;
    assert!(
        matches!(error.kind(), ErrorKind::CorruptRecords { topic, offset: 2, .. } if topic == "t"),
        "{error:?}"
    );
    // The good batch before the broken one is still handed out, ending at offset 2.
    let Some(Output::Chunk(Chunk {
        batches,
        position: 2,
        done: false,
        ..
    })) = before
    else {
        panic!("{before:?}");
    };
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].next_offset(), 2);
}

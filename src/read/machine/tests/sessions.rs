//! Fetch sessions (KIP-227): incremental fetches, session errors and their fallbacks, the
//! session fields on the wire.

use super::*;

/// `answer` in fetch session `session` (0: none).
fn in_session(
    session: i32,
    partitions: Vec<PartitionData>,
) -> Result<(Arc<str>, i16, FetchResponse)> {
    let mut a = answer(partitions);
    if let Ok((_, _, response)) = &mut a {
        response.session_id = session;
    }
    a
}

const SESSION_NOT_FOUND: ErrorCode = ErrorCode::FETCH_SESSION_ID_NOT_FOUND;

/// A Fetch answer with the top-level error `code` (v12).
fn top_level_error(code: ErrorCode) -> Result<(Arc<str>, i16, FetchResponse)> {
    Ok((
        Arc::from("b:1"),
        12,
        FetchResponse {
            error_code: code.0,
            ..Default::default()
        },
    ))
}

/// What the next Fetch puts on the wire at v12, after its Metadata: its id, the
/// (partition, position) pairs sent, the partitions forgotten, (session id, epoch), and
/// every partition the machine waits for an answer about.
struct Wire {
    id: u64,
    sent: Vec<(i32, i64)>,
    forgotten: Vec<i32>,
    session: (i32, i32),
    asked: Vec<i32>,
}

fn next_fetch(m: &mut ReadMachine, now: Instant, leaders: &[(i32, i32)]) -> Wire {
    let t = after_metadata(m, now, leaders);
    let [Transmit::Fetch(planned)] = &t[..] else {
        panic!("expected one Fetch, got {t:?}");
    };
    let request = planned.request(12);
    let mut buf = bytes::BytesMut::new();
    kseek_protocol::Message::encode(&request, &mut buf, 12).unwrap();
    Wire {
        id: planned.id,
        sent: request
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (p.partition, p.fetch_offset)))
            .collect(),
        forgotten: request
            .forgotten_topics_data
            .iter()
            .flat_map(|t| t.partitions.iter().copied())
            .collect(),
        session: (request.session_id, request.session_epoch),
        asked: planned.partitions.iter().map(|p| p.partition).collect(),
    }
}

/// Collects the offsets handed out per partition index.
fn collect(m: &mut ReadMachine, got: &mut HashMap<usize, Vec<i64>>) {
    for out in outputs(m) {
        if let Output::Chunk(Chunk { idx, .. }) = out {
            got.entry(idx).or_default().extend(offsets_of(&out));
        }
    }
}

#[test]
fn incremental_fetches_send_changed_partitions_only_and_forget_finished_ones() {
    let t0 = virtual_epoch();
    let p = plan(&[(0, 0, Some(4)), (1, 0, Some(10)), (2, 0, Some(3))]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let leaders = [(0, 1), (1, 1), (2, 1)];
    let mut got = HashMap::new();

    // The first Fetch is full, asking for a session.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(
        (f.session, &f.sent[..]),
        ((0, 0), &[(0, 0), (1, 0), (2, 0)][..])
    );
    m.handle_fetch(
        t0,
        f.id,
        in_session(
            42,
            vec![
                records_of(0, wire(&[batch(0, 2)])),
                records_of(2, Bytes::new()),
            ],
        ),
    );
    collect(&mut m, &mut got);

    // Only partition 0 moved: the next Fetch sends it alone; the broker keeps 1 and 2.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (42, 1));
    assert_eq!(f.sent, [(0, 2)]);
    assert_eq!(f.asked, [0, 1, 2]);
    assert!(f.forgotten.is_empty());
    // Partition 1 is absent from the incremental answer: nothing new, same position.
    m.handle_fetch(t0, f.id, in_session(42, records(&[(0, 2, 2), (2, 0, 3)])));
    collect(&mut m, &mut got);

    // Partitions 0 and 2 reached their ends: forgotten. Partition 1 is still unchanged.
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (42, 2));
    assert_eq!((&f.sent[..], &f.forgotten[..]), (&[][..], &[0, 2][..]));
    assert_eq!(f.asked, [1]);
    m.handle_fetch(t0, f.id, in_session(42, vec![]));
    assert!(outputs(&mut m).is_empty());

    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(
        (f.session, &f.sent[..], &f.forgotten[..]),
        ((42, 3), &[][..], &[][..])
    );
    m.handle_fetch(t0, f.id, in_session(42, records(&[(1, 0, 10)])));
    collect(&mut m, &mut got);
    assert!(m.is_finished());
    assert_eq!(got[&0], [0, 1, 2, 3]);
    assert_eq!(got[&1], (0..10).collect::<Vec<_>>());
    assert_eq!(got[&2], [0, 1, 2]);
}

#[test]
fn a_raised_max_bytes_or_a_new_leader_epoch_is_a_change_too() {
    let t0 = virtual_epoch();
    let (mut m, full) = with_max_bytes_1024(&[(0, 0, Some(50)), (1, 0, Some(5))], t0);
    let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
    m.handle_fetch(
        t0,
        f.id,
        in_session(7, vec![records_of(0, full.slice(..1024))]),
    );
    let f = next_fetch(&mut m, t0, &[(0, 1), (1, 1)]);
    assert_eq!((f.session, &f.sent[..]), ((7, 1), &[(0, 0)][..]));
    m.handle_fetch(t0, f.id, in_session(7, vec![]));
    // The metadata now has a newer leader epoch for partition 1.
    let id = metadata_id(&transmits(&mut m, t0));
    let mut md = metadata(&[(0, 1), (1, 1)]);
    md[0].partitions[1].leader_epoch = 6;
    m.handle_metadata(t0, id, Ok(md));
    let Some(Transmit::Fetch(planned)) = m.poll_transmit(t0) else {
        panic!("expected a Fetch");
    };
    let request = planned.request(12);
    let sent: Vec<_> = request.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition, p.current_leader_epoch))
        .collect();
    assert_eq!(
        (planned.session.id, planned.session.epoch, &sent[..]),
        (7, 2, &[(1, 6)][..])
    );
}

#[test]
fn session_errors_fall_back_to_a_full_fetch_at_once_losing_and_repeating_nothing() {
    for (code, next_session) in [
        (ErrorCode::FETCH_SESSION_ID_NOT_FOUND, (0, 0)),
        (ErrorCode::INVALID_FETCH_SESSION_EPOCH, (42, 0)),
        (ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR, (42, 0)),
    ] {
        let t0 = virtual_epoch();
        let mut m = read_of(&[(0, 0, Some(6)), (1, 0, Some(6))], t0);
        let leaders = [(0, 1), (1, 1)];
        let mut got = HashMap::new();
        let f = next_fetch(&mut m, t0, &leaders);
        m.handle_fetch(t0, f.id, in_session(42, records(&[(0, 0, 2), (1, 0, 2)])));
        collect(&mut m, &mut got);
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!((f.session, &f.sent[..]), ((42, 1), &[(0, 2), (1, 2)][..]));
        m.handle_fetch(t0, f.id, top_level_error(code));
        assert!(outputs(&mut m).is_empty(), "{code:?}");
        // No backoff, no metadata invalidated: a full fetch at once, from the positions.
        assert_eq!(m.poll_timeout(), None, "{code:?}");
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, next_session, "{code:?}");
        assert_eq!(f.sent, [(0, 2), (1, 2)], "{code:?}");
        m.handle_fetch(t0, f.id, in_session(43, records(&[(0, 2, 4), (1, 2, 4)])));
        collect(&mut m, &mut got);
        assert!(m.is_finished(), "{code:?}");
        assert_eq!(got[&0], (0..6).collect::<Vec<_>>(), "{code:?}");
        assert_eq!(got[&1], (0..6).collect::<Vec<_>>(), "{code:?}");
    }
}

#[test]
fn a_session_lost_again_before_an_incremental_answer_backs_off() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(6))], t0);
    let leaders = [(0, 1)];
    let f = next_fetch(&mut m, t0, &leaders);
    m.handle_fetch(t0, f.id, in_session(42, vec![]));
    let f = next_fetch(&mut m, t0, &leaders);
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(
        m.poll_timeout(),
        None,
        "the first loss: a full fetch at once"
    );
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (0, 0));
    m.handle_fetch(t0, f.id, in_session(43, vec![]));
    let f = next_fetch(&mut m, t0, &leaders);
    assert_eq!(f.session, (43, 1));
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(
        m.poll_timeout(),
        Some(t0 + 100 * MS),
        "lost again: backs off"
    );
    assert!(matches!(
        &transmits(&mut m, t0)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t1 = t0 + 100 * MS;
    m.handle_timeout(t1);
    let f = next_fetch(&mut m, t1, &leaders);
    assert_eq!((f.session, &f.sent[..]), ((0, 0), &[(0, 0)][..]));
    m.handle_fetch(t1, f.id, in_session(44, vec![]));
    let f = next_fetch(&mut m, t1, &leaders);
    m.handle_fetch(t1, f.id, in_session(44, records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    // An incremental answer came in between: the next loss is cured at once again.
    let f = next_fetch(&mut m, t1, &leaders);
    assert_eq!(f.session, (44, 2));
    m.handle_fetch(
        t1,
        f.id,
        top_level_error(ErrorCode::INVALID_FETCH_SESSION_EPOCH),
    );
    assert_eq!(m.poll_timeout(), None);
}

#[test]
fn a_session_error_on_a_full_fetch_or_a_lost_answer_backs_off() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(6))], t0);
    let f = next_fetch(&mut m, t0, &[(0, 1)]);
    assert_eq!(f.session, (0, 0));
    // A session error to a full fetch can't be cured by another full fetch: retried.
    m.handle_fetch(t0, f.id, top_level_error(SESSION_NOT_FOUND));
    assert_eq!(m.poll_timeout(), Some(t0 + 100 * MS));
    assert!(matches!(
        &transmits(&mut m, t0)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t1 = t0 + 100 * MS;
    m.handle_timeout(t1);
    let f = next_fetch(&mut m, t1, &[(0, 1)]);
    m.handle_fetch(t1, f.id, in_session(9, records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    let f = next_fetch(&mut m, t1, &[(0, 1)]);
    assert_eq!(f.session, (9, 1));
    // The connection broke: the epoch the broker has is unknown. Close and start over.
    m.handle_fetch(t1, f.id, connection_closed("reset"));
    assert!(matches!(
        &transmits(&mut m, t1)[..],
        [Transmit::Invalidate { .. }]
    ));
    let t2 = m.poll_timeout().unwrap();
    m.handle_timeout(t2);
    let f = next_fetch(&mut m, t2, &[(0, 1)]);
    assert_eq!((f.session, &f.sent[..]), ((9, 0), &[(0, 2)][..]));
}

#[test]
fn without_a_session_every_fetch_is_full() {
    // The broker gives no session (id 0: sessions off, or its cache is full).
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(4)), (1, 0, Some(4))], t0);
    let leaders = [(0, 1), (1, 1)];
    let mut got = HashMap::new();
    for (round, from) in [(0, 0), (1, 2)] {
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(f.session, (0, 0), "round {round}");
        assert_eq!(f.sent, [(0, from), (1, 0)], "round {round}");
        m.handle_fetch(t0, f.id, in_session(0, records(&[(0, from, 2)])));
        collect(&mut m, &mut got);
    }
    assert_eq!(got[&0], [0, 1, 2, 3]);
    // Sessions off in the options: sessionless fetches (epoch -1), always full.
    let options = ReadOptions::default().fetch_sessions(false);
    let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
    for from in [0, 2] {
        let f = next_fetch(&mut m, t0, &leaders);
        assert_eq!(
            (f.session, &f.sent[..]),
            ((0, -1), &[(0, from), (1, 0)][..])
        );
        m.handle_fetch(t0, f.id, in_session(5, records(&[(0, from, 2)])));
        let _ = outputs(&mut m);
    }
}

#[test]
fn session_fields_on_the_wire_and_epochs_wrap_to_one() {
    assert_eq!(next_epoch(1), 2);
    assert_eq!(next_epoch(i32::MAX), 1);
    let mut parts = vec![
        requested("a", 1, 0),
        requested("b", 2, 1),
        requested("a", 1, 1),
    ];
    parts[0].unchanged = true;
    let session = SessionRequest {
        id: 3,
        epoch: 8,
        forgotten: vec![
            requested("b", 2, 4),
            requested("c", 3, 0),
            requested("b", 2, 5),
        ],
    };
    for version in [7, 12, 13, 17] {
        let request = build_fetch(&parts, version, &PARAMS, &session);
        assert_eq!((request.session_id, request.session_epoch), (3, 8));
        let sent: Vec<(String, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                (
                    t.topic.clone(),
                    t.partitions.iter().map(|p| p.partition).collect(),
                )
            })
            .collect();
        assert_eq!(sent, [("b".to_owned(), vec![1]), ("a".to_owned(), vec![1])]);
        let forgotten: Vec<(Uuid, Vec<i32>)> = request
            .forgotten_topics_data
            .iter()
            .map(|t| (t.topic_id, t.partitions.clone()))
            .collect();
        assert_eq!(
            forgotten,
            [(Uuid([2; 16]), vec![4, 5]), (Uuid([3; 16]), vec![0])]
        );
        let mut buf = bytes::BytesMut::new();
        kseek_protocol::Message::encode(&request, &mut buf, version).unwrap();
        let back: FetchRequest = kseek_protocol::decode_exact(buf.freeze(), version).unwrap();
        assert_eq!(back.forgotten_topics_data.len(), 2, "v{version}");
        assert_eq!((back.session_id, back.session_epoch), (3, 8), "v{version}");
    }
    // Below v7 there are no sessions: every partition, no session fields.
    let request = build_fetch(&parts, 6, &PARAMS, &session);
    assert_eq!((request.session_id, request.session_epoch), (0, -1));
    assert!(request.forgotten_topics_data.is_empty());
    assert_eq!(
        request
            .topics
            .iter()
            .map(|t| t.partitions.len())
            .sum::<usize>(),
        3
    );
}

//! The machine driven by hand with a virtual clock: fetch budgets, leaders, retries and
//! backoff, out-of-range resets, partition discovery, decode failures.

use super::*;

#[test]
fn partitions_of_an_overdue_fetch_whose_leader_moved_are_fetched_from_the_new_leader() {
    let t0 = virtual_epoch();
    let options = ReadOptions::default().max_wait(500 * MS);
    let mut m = machine(&plan(&[(0, 0, Some(10)), (1, 0, Some(10))]), &options, t0);
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
    let (old, positions) = one_fetch(&transmits(&mut m, t0));
    assert_eq!(positions, [(0, 0), (1, 0)]);
    // Broker 1 holds the Fetch past its max wait: overdue after 500 + 500 ms.
    let overdue = t0 + 1000 * MS;
    assert_eq!(m.poll_timeout(), Some(overdue));
    assert!(transmits(&mut m, overdue - MS).is_empty());
    m.handle_timeout(overdue);
    let check = match &transmits(&mut m, overdue)[..] {
        [Transmit::LeaderCheck { id, topics, avoid }] => {
            assert_eq!((&topics[..], &avoid[..]), (&[Arc::from("t")][..], &[1][..]));
            *id
        }
        other => panic!("expected a leader check, got {other:?}"),
    };
    // Nothing moved yet: checked again 250 ms later, the Fetch still stands.
    m.handle_metadata(overdue, check, Ok(metadata(&[(0, 1), (1, 1)])));
    assert!(transmits(&mut m, overdue).is_empty());
    let again = overdue + LEADER_CHECK_EVERY;
    assert_eq!(m.poll_timeout(), Some(again));
    m.handle_timeout(again);
    let check = match &transmits(&mut m, again)[..] {
        [Transmit::LeaderCheck { id, .. }] => *id,
        other => panic!("expected a leader check, got {other:?}"),
    };
    // Partition 0 moved to broker 2: fetched from it at once; partition 1 stays with
    // the overdue Fetch.
    m.handle_metadata(again, check, Ok(metadata(&[(0, 2), (1, 1)])));
    let new = fetches(&after_metadata(&mut m, again, &[(0, 2), (1, 1)]));
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!((new[0].1, &new[0].2[..]), (2, &[(0, 0)][..]));
    m.handle_fetch(again, new[0].0, answer(records(&[(0, 0, 4)])));
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Chunk(Chunk {
            idx: 0,
            position: 4,
            ..
        })]
    ));
    // Broker 1 answers late, opening session 7, with partition 0 from offset 0 too:
    // only partition 1's records are taken, partition 0's are not handed out twice.
    let late = answer(records(&[(0, 0, 4), (1, 0, 3)])).map(|(broker, version, response)| {
        let response = FetchResponse {
            session_id: 7,
            ..response
        };
        (broker, version, response)
    });
    m.handle_fetch(again, old, late);
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Chunk(Chunk {
            idx: 1,
            position: 3,
            ..
        })]
    ));
    // Session 7 does not hold partition 0 as we would think: the session with broker 1
    // starts over, its next Fetch is a full one (epoch 0) closing session 7.
    let id = metadata_id(&transmits(&mut m, again));
    m.handle_metadata(again, id, Ok(metadata(&[(0, 2), (1, 1)])));
    let next = transmits(&mut m, again);
    let to_1 = next.iter().find_map(|t| match t {
        Transmit::Fetch(PlannedFetch {
            leader: 1, session, ..
        }) => Some((session.id, session.epoch)),
        _ => None,
    });
    assert_eq!(to_1, Some((7, 0)), "{next:?}");
}

#[test]
fn fetching_ahead_pauses_while_the_budget_is_used_up_and_resumes_when_the_caller_takes() {
    let t0 = virtual_epoch();
    let first = wire(&[batch(0, 2)]);
    let second = wire(&[batch(2, 2)]);
    // Room for the first batch and a byte of the second.
    let budget = first.len() + 1;
    let options = ReadOptions::default().max_buffered_bytes(budget);
    let mut m = machine(&plan(&[(0, 0, Some(6))]), &options, t0);
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 0)]);
    m.handle_fetch(t0, id, answer(vec![records_of(0, first.clone())]));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert_eq!(out[0].buffered_bytes(), first.len() as u64);
    assert_eq!(m.buffered_bytes(), first.len() as u64);
    // The caller has taken nothing, and the next Fetch goes out all the same: ahead.
    assert!(!m.is_waiting_for_room());
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 2)]);
    m.handle_fetch(t0, id, answer(vec![records_of(0, second.clone())]));
    assert_eq!(offsets_of(&outputs(&mut m)[0]), [2, 3]);
    // Now the budget is used up: no request, no timeout, only the caller moves it on.
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0 + 10 * MS), []);
    assert_eq!(m.poll_timeout(), None);
    assert!(!m.is_finished());
    // Taking the first batch is not enough (still budget bytes waiting)...
    m.handle_taken(first.len() as u64 - 1);
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0), []);
    // ... taking all of it is: fetching resumes at once.
    m.handle_taken(first.len() as u64);
    assert_eq!(m.buffered_bytes(), second.len() as u64);
    assert!(!m.is_waiting_for_room());
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(at, [(0, 4)]);
    m.handle_fetch(t0, id, answer(records(&[(0, 4, 2)])));
    let out = outputs(&mut m);
    assert!(matches!(
        out[..],
        [Output::Chunk(Chunk {
            position: 6,
            done: true,
            ..
        })]
    ));
    // A bounded read ends when its positions reach their ends, taken or not.
    assert!(m.is_finished());
    assert!(!m.is_waiting_for_room());
}

#[test]
fn a_batch_larger_than_the_whole_budget_still_passes_alone() {
    let t0 = virtual_epoch();
    let big = wire(&[batch(0, 5)]);
    let options = ReadOptions::default().max_buffered_bytes(1);
    let mut m = machine(&plan(&[(0, 0, Some(8)), (1, 0, Some(2))]), &options, t0);
    let (id, _) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    // Partition 1 has nothing yet; partition 0 a batch many times the budget.
    m.handle_fetch(
        t0,
        id,
        answer(vec![
            records_of(0, big.clone()),
            records_of(1, Bytes::new()),
        ]),
    );
    let out = outputs(&mut m);
    assert_eq!(out.len(), 1);
    assert_eq!(offsets_of(&out[0]), [0, 1, 2, 3, 4]);
    assert!(m.is_waiting_for_room());
    assert_eq!(transmits(&mut m, t0), []);
    m.handle_taken(big.len() as u64);
    let (id, at) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    assert_eq!(at, [(0, 5), (1, 0)]);
    m.handle_fetch(t0, id, answer(records(&[(0, 5, 3), (1, 0, 2)])));
    // Both chunks of the one response pass; the read is over.
    let out = outputs(&mut m);
    assert_eq!(out.len(), 2);
    assert!(m.is_finished());
}

#[test]
fn metadata_answered_after_other_fetches_filled_the_budget_starts_no_fetch() {
    let t0 = virtual_epoch();
    let one = wire(&[batch(0, 2)]);
    let options = ReadOptions::default().max_buffered_bytes(one.len() + 1);
    let leaders = [(0, 1), (1, 2)];
    let mut m = machine(&plan(&[(0, 0, Some(4)), (1, 0, Some(4))]), &options, t0);
    let sent = fetches(&after_metadata(&mut m, t0, &leaders));
    assert_eq!(sent.len(), 2);
    // Leader 1 answers: room is left, so Metadata for partition 0's next Fetch goes out.
    m.handle_fetch(t0, sent[0].0, answer(vec![records_of(0, one.clone())]));
    outputs(&mut m);
    let next = metadata_id(&transmits(&mut m, t0));
    // Before it is answered, leader 2's answer uses the budget up.
    m.handle_fetch(t0, sent[1].0, answer(vec![records_of(1, one.clone())]));
    outputs(&mut m);
    m.handle_metadata(t0, next, Ok(metadata(&leaders)));
    assert_eq!(transmits(&mut m, t0), []);
    assert!(m.is_waiting_for_room());
    // Once the caller takes both chunks, both partitions are asked for again.
    m.handle_taken(2 * one.len() as u64);
    let sent = fetches(&after_metadata(&mut m, t0, &leaders));
    let at: Vec<_> = sent.iter().map(|s| s.2.clone()).collect();
    assert_eq!(at, [vec![(0, 2)], vec![(1, 2)]]);
}

#[test]
fn a_plan_of_empty_ranges_is_finished_before_any_request() {
    let now = virtual_epoch();
    let mut m = read_of(&[(0, 5, Some(5)), (1, 7, Some(3))], now);
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(now), None);
    assert_eq!(m.poll_timeout(), None);
    assert!(m.poll_output().is_none());
}

#[test]
fn one_fetch_per_leader_until_every_partition_reaches_its_end() {
    let t0 = virtual_epoch();
    let p = plan(&[(0, 0, Some(4)), (1, 0, Some(2)), (2, 0, Some(3))]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let id = metadata_id(&transmits(&mut m, t0));
    // Nothing more until the metadata is in.
    assert_eq!(transmits(&mut m, t0), []);
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 2), (2, 1)])));
    let sent = fetches(&transmits(&mut m, t0));
    assert_eq!(sent.len(), 2);
    assert_eq!((sent[0].1, &sent[0].2[..]), (1, &[(0, 0), (2, 0)][..]));
    assert_eq!((sent[1].1, &sent[1].2[..]), (2, &[(1, 0)][..]));
    // Leader 2 answers with all of partition 1; leader 1 still has its Fetch.
    m.handle_fetch(t0, sent[1].0, answer(records(&[(1, 0, 2)])));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert!(matches!(
        out[0],
        Output::Chunk(Chunk {
            idx: 1,
            position: 2,
            done: true,
            ..
        })
    ));
    assert!(!m.is_finished());
    assert_eq!(
        transmits(&mut m, t0),
        [],
        "partitions 0 and 2 are in flight"
    );
    // Leader 1 answers partition 0 in part, partition 2 whole.
    m.handle_fetch(t0, sent[0].0, answer(records(&[(0, 0, 3), (2, 0, 3)])));
    assert_eq!(outputs(&mut m).len(), 2);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1), (1, 2), (2, 1)]));
    assert_eq!(
        sent.iter().map(|f| f.2.clone()).collect::<Vec<_>>(),
        [vec![(0, 3)]]
    );
    m.handle_fetch(t0, sent[0].0, answer(records(&[(0, 3, 5)])));
    let out = outputs(&mut m);
    assert_eq!(offsets_of(&out[0]), [3], "records past the end are dropped");
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(t0), None);
}

/// (partition index, offsets) of each chunk in `out`.
fn chunks(out: &[Output]) -> Vec<(usize, Vec<i64>)> {
    out.iter()
        .map(|o| match o {
            Output::Chunk(Chunk { idx, .. }) => (*idx, offsets_of(o)),
            other => panic!("not a chunk: {other:?}"),
        })
        .collect()
}

#[test]
fn answers_out_of_request_order_go_to_their_own_partitions() {
    let t0 = virtual_epoch();
    // Partitions 0..4 of "t", all led by broker 1, each 3 records long.
    let p = plan(&[
        (0, 0, Some(3)),
        (1, 0, Some(3)),
        (2, 0, Some(3)),
        (3, 0, Some(3)),
    ]);
    let mut m = machine(&p, &ReadOptions::default(), t0);
    let (id, asked) = one_fetch(&after_metadata(
        &mut m,
        t0,
        &[(0, 1), (1, 1), (2, 1), (3, 1)],
    ));
    assert_eq!(asked, [(0, 0), (1, 0), (2, 0), (3, 0)]);
    // By name (v12): partition 2, then 0, a partition not asked for, 3 and 1, each with
    // a different number of records.
    m.handle_fetch(
        t0,
        id,
        answer(records(&[
            (2, 0, 3),
            (0, 0, 1),
            (7, 0, 3),
            (3, 0, 2),
            (1, 0, 3),
        ])),
    );
    assert_eq!(
        chunks(&outputs(&mut m)),
        [
            (2, vec![0, 1, 2]),
            (0, vec![0]),
            (3, vec![0, 1]),
            (1, vec![0, 1, 2]),
        ]
    );
    // By topic id (v13, the name left empty): 3 first, then 0 in two topic entries.
    let (id, asked) = one_fetch(&after_metadata(
        &mut m,
        t0,
        &[(0, 1), (1, 1), (2, 1), (3, 1)],
    ));
    assert_eq!(asked, [(0, 1), (3, 2)]);
    let by_id = |partitions| FetchableTopicResponse {
        topic_id: Uuid([1; 16]),
        partitions,
        ..Default::default()
    };
    let response = FetchResponse {
        responses: vec![by_id(records(&[(3, 2, 1)])), by_id(records(&[(0, 1, 2)]))],
        ..Default::default()
    };
    m.handle_fetch(t0, id, Ok((Arc::from("b:1"), 13, response)));
    assert_eq!(chunks(&outputs(&mut m)), [(3, vec![2]), (0, vec![1, 2])]);
    assert!(m.is_finished());
}

#[test]
fn retries_double_the_wait_invalidate_and_give_up_at_the_deadline() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let mut now = t0;
    let mut waits = Vec::new();
    let mut checks = 0;
    let mut id = metadata_id(&transmits(&mut m, now));
    let error = loop {
        m.handle_metadata(now, id, Ok(metadata(&[(0, 1)])));
        let sent = fetches(&transmits(&mut m, now));
        assert_eq!(sent.len(), 1);
        m.handle_fetch(
            now,
            sent[0].0,
            answer(vec![error_of(0, ErrorCode::NOT_LEADER_OR_FOLLOWER)]),
        );
        if let Some(Output::Failed(e)) = m.poll_output() {
            break e;
        }
        assert_eq!(
            transmits(&mut m, now),
            [Transmit::Invalidate {
                topic: Arc::from("t")
            }]
        );
        // Until the backoff ends nothing is fetched; leader checks go out every 250 ms
        // and find broker 1 still leading, so the backoff runs its course.
        let failed = now;
        id = loop {
            now = m.poll_timeout().expect("a backoff to wait for");
            m.handle_timeout(now);
            match &transmits(&mut m, now)[..] {
                [Transmit::LeaderCheck { id, avoid, .. }] => {
                    assert_eq!(avoid[..], [1]);
                    m.handle_metadata(now, *id, Ok(metadata(&[(0, 1)])));
                    checks += 1;
                }
                [Transmit::Metadata {
                    id, refresh: false, ..
                }] => break *id,
                other => panic!("unexpected {other:?}"),
            }
        };
        waits.push(now - failed);
    };
    assert_eq!(
        waits,
        [100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS],
        "the next wait, 1 s at 2.5 s, would end past the 3 s deadline"
    );
    assert!(checks >= 4, "{checks} leader checks");
    match error.kind() {
        ErrorKind::RetriesExhausted {
            attempts, elapsed, ..
        } => assert_eq!((*attempts, *elapsed), (6, 2500 * MS)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(m.is_finished());
    assert_eq!(m.poll_transmit(now), None);
}

#[test]
fn a_partition_backing_off_after_its_leader_failed_is_fetched_once_a_check_finds_another() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let mut now = t0;
    let mut transmitted = transmits(&mut m, now);
    // Broker 1 refuses every Fetch (retries at 0.1, 0.3, 0.7 and 1.5 s, then a 1 s
    // backoff); from 1.6 s on, Metadata names broker 2 the leader.
    let moved_at = t0 + 1600 * MS;
    loop {
        let leader = if now >= moved_at { 2 } else { 1 };
        match &transmitted[..] {
            [] => {}
            [Transmit::Metadata {
                id, refresh: false, ..
            }] => {
                m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                let sent = fetches(&transmits(&mut m, now));
                if sent[0].1 == 2 {
                    break;
                }
                m.handle_fetch(now, sent[0].0, connection_closed("refused"));
            }
            [Transmit::LeaderCheck { id, avoid, .. }] => {
                assert_eq!(avoid[..], [1]);
                let backoff_ends = m.parts[0].not_before.expect("backing off");
                m.handle_metadata(now, *id, Ok(metadata(&[(0, leader)])));
                if leader == 2 {
                    // Fetched from broker 2 at once, not when the backoff would end.
                    assert!(backoff_ends > now + 100 * MS, "{:?}", backoff_ends - now);
                    let sent = fetches(&after_metadata(&mut m, now, &[(0, 2)]));
                    assert_eq!((sent[0].1, &sent[0].2[..]), (2, &[(0, 0)][..]));
                    assert!(now - moved_at <= LEADER_CHECK_EVERY, "{:?}", now - moved_at);
                    return;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
        now = m.poll_timeout().expect("a backoff or a check to wait for");
        m.handle_timeout(now);
        transmitted = transmits(&mut m, now);
        transmitted.retain(|t| !matches!(t, Transmit::Invalidate { .. }));
    }
    panic!("the partition was fetched from broker 2 by a retry, not by a leader check");
}

#[test]
fn a_success_resets_the_retry_schedule_and_leader_minus_one_is_retried() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, -1)])));
    assert!(fetches(&transmits(&mut m, t0)).is_empty());
    let t1 = m.poll_timeout().unwrap();
    assert_eq!(t1 - t0, 100 * MS);
    m.handle_timeout(t1);
    let sent = fetches(&after_metadata(&mut m, t1, &[(0, 1)]));
    m.handle_fetch(t1, sent[0].0, answer(records(&[(0, 0, 2)])));
    assert_eq!(outputs(&mut m).len(), 1);
    // A transport error after the success waits the first backoff again.
    let sent = fetches(&after_metadata(&mut m, t1, &[(0, 1)]));
    m.handle_fetch(t1, sent[0].0, connection_closed("reset"));
    assert_eq!(m.poll_timeout().unwrap() - t1, 100 * MS);
    assert_eq!(
        transmits(&mut m, t1),
        [Transmit::Invalidate {
            topic: Arc::from("t")
        }]
    );
    // A fatal error ends the read at once.
    let t2 = t1 + 100 * MS;
    m.handle_timeout(t2);
    let id = metadata_id(&transmits(&mut m, t2));
    m.handle_metadata(
        t2,
        id,
        Err(ErrorKind::InvalidSpec {
            reason: "fatal".into(),
        }
        .into()),
    );
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Failed(e)] if matches!(e.kind(), ErrorKind::InvalidSpec { .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn out_of_range_resets_to_the_log_start_reporting_the_loss() {
    let t0 = virtual_epoch();
    // Partition 0 from offset 2 to `end`, its first Fetch answered OFFSET_OUT_OF_RANGE.
    let out_of_range = |end: Option<i64>, options: &ReadOptions| {
        let mut m = machine(&plan(&[(0, 2, end)]), options, t0);
        let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
        let error = error_of(0, ErrorCode::OFFSET_OUT_OF_RANGE);
        m.handle_fetch(t0, sent[0].0, answer(vec![error]));
        m
    };
    let mut m = out_of_range(Some(10), &ReadOptions::default());
    let list = match &transmits(&mut m, t0)[..] {
        [Transmit::ListEarliest {
            id,
            topic,
            partition: 0,
            ..
        }] if &**topic == "t" => *id,
        other => panic!("expected a ListEarliest, got {other:?}"),
    };
    assert!(m.poll_output().is_none());
    m.handle_list_offsets(t0, list, Ok(6));
    match &outputs(&mut m)[..] {
        [Output::DataLoss {
            idx: 0,
            loss,
            position: 6,
            done: false,
        }] => assert_eq!((loss.from, loss.to, loss.skipped()), (2, 6, 4)),
        other => panic!("unexpected {other:?}"),
    }
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(sent[0].2, [(0, 6)]);

    // A log start past the end: the loss stops at the end and the partition is done.
    let mut m = out_of_range(Some(4), &ReadOptions::default());
    let Some(Transmit::ListEarliest { id, .. }) = m.poll_transmit(t0) else {
        panic!("expected a ListEarliest");
    };
    m.handle_list_offsets(t0, id, Ok(9));
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::DataLoss {
            loss: DataLoss { from: 2, to: 4, .. },
            position: 9,
            done: true,
            ..
        }]
    ));
    assert!(m.is_finished());

    // OutOfRange::Fail ends the read instead.
    let options = ReadOptions::default().out_of_range(OutOfRange::Fail);
    let mut m = out_of_range(Some(10), &options);
    assert!(matches!(
        &outputs(&mut m)[..],
        [Output::Failed(e)] if matches!(e.kind(), ErrorKind::OffsetOutOfRange { offset: 2, .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn discovery_adds_new_partitions_of_an_unbounded_read_at_their_log_start() {
    let t0 = virtual_epoch();
    // A max wait of a minute: partition 0's Fetch stays out past the discovery, without
    // going overdue (that would add leader checks, tested on their own).
    let options = ReadOptions::default()
        .partition_discovery(Some(30_000 * MS))
        .max_wait(60_000 * MS);
    let mut m = machine(&plan(&[(0, 0, None)]), &options, t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(m.poll_timeout(), Some(t0 + 30_000 * MS));
    // Discovery is due while partition 0's Fetch is still out.
    let t1 = t0 + 30_000 * MS;
    m.handle_timeout(t1);
    let discovery = match &transmits(&mut m, t1)[..] {
        [Transmit::Metadata {
            id,
            topics,
            refresh: true,
            avoid,
        }] if topics == &[Arc::from("t")] && avoid.is_empty() => *id,
        other => panic!("expected discovery's Metadata, got {other:?}"),
    };
    m.handle_metadata(t1, discovery, Ok(metadata(&[(0, 1), (1, 2)])));
    let list = match &transmits(&mut m, t1)[..] {
        [Transmit::ListEarliest {
            id, partition: 1, ..
        }] => *id,
        other => panic!("expected a ListEarliest for partition 1, got {other:?}"),
    };
    m.handle_list_offsets(t1, list, Ok(3));
    match &outputs(&mut m)[..] {
        [Output::Added(p)] => {
            assert_eq!(
                (p.partition, p.next_offset, p.end, p.done),
                (1, 3, None, false)
            )
        }
        other => panic!("unexpected {other:?}"),
    }
    // The new partition is fetched from its leader, the old one is still in flight.
    let new = fetches(&after_metadata(&mut m, t1, &[(0, 1), (1, 2)]));
    assert_eq!((new[0].1, &new[0].2[..]), (2, &[(1, 3)][..]));
    assert_eq!(m.poll_timeout(), Some(t1 + 30_000 * MS));
    m.handle_fetch(t1, sent[0].0, answer(vec![]));
    assert!(!m.is_finished(), "an unbounded read never finishes");
}

#[test]
fn a_decode_failure_hands_out_the_good_batches_then_the_error() {
    let t0 = virtual_epoch();
    let mut m = read_of(&[(0, 0, Some(10))], t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
    let mut bytes = wire(&[batch(0, 2), batch(2, 2)]).to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    m.handle_fetch(
        t0,
        sent[0].0,
        answer(vec![records_of(0, Bytes::from(bytes))]),
    );
    let out = outputs(&mut m);
    assert_eq!(out.len(), 2);
    assert_eq!(offsets_of(&out[0]), [0, 1]);
    assert!(matches!(
        &out[1],
        Output::Failed(e) if matches!(e.kind(), ErrorKind::CorruptRecords { offset: 2, .. })
    ));
    assert!(m.is_finished());
}

#[test]
fn a_batch_cut_off_by_max_bytes_is_asked_first_with_room_for_it() {
    let t0 = virtual_epoch();
    let (mut m, full) = with_max_bytes_1024(&[(0, 0, Some(10)), (1, 0, Some(50))], t0);
    let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1), (1, 1)]));
    assert_eq!(sent[0].2, [(0, 0), (1, 0)]);
    m.handle_fetch(
        t0,
        sent[0].0,
        answer(vec![
            records_of(0, wire(&[batch(0, 2)])),
            records_of(1, full.slice(..1024)),
        ]),
    );
    assert_eq!(
        outputs(&mut m).len(),
        1,
        "nothing for the cut-off partition"
    );
    let id = metadata_id(&transmits(&mut m, t0));
    m.handle_metadata(t0, id, Ok(metadata(&[(0, 1), (1, 1)])));
    let Some(Transmit::Fetch(PlannedFetch { partitions, .. })) = m.poll_transmit(t0) else {
        panic!("expected a Fetch");
    };
    let asked: Vec<_> = partitions
        .iter()
        .map(|p| (p.partition, p.sent.position, p.sent.max_bytes))
        .collect();
    assert_eq!(asked, [(1, 0, full.len() as i32), (0, 2, 1024)]);
}

#[test]
fn unknown_and_inconsistent_topic_ids_are_retried_other_partition_errors_fail() {
    for (code, retried) in [
        (ErrorCode(100), true),
        (ErrorCode(103), true),
        (ErrorCode::FENCED_LEADER_EPOCH, true),
        (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, true),
        (ErrorCode::TOPIC_AUTHORIZATION_FAILED, false),
    ] {
        let t0 = virtual_epoch();
        let mut m = read_of(&[(0, 0, Some(10))], t0);
        let sent = fetches(&after_metadata(&mut m, t0, &[(0, 1)]));
        m.handle_fetch(t0, sent[0].0, answer(vec![error_of(0, code)]));
        let failed = matches!(
            &outputs(&mut m)[..],
            [Output::Failed(e)] if matches!(e.kind(), ErrorKind::Partition { code: c, .. } if *c == code)
        );
        assert_eq!(
            (failed, m.poll_timeout().is_some()),
            (!retried, retried),
            "{code:?}"
        );
    }
}

#[test]
fn an_unanswered_leader_check_gets_one_more_beside_it_and_metadata_avoids_the_overdue_leader() {
    let t0 = virtual_epoch();
    let options = ReadOptions::default().max_wait(500 * MS);
    let mut m = machine(&plan(&[(0, 0, Some(10))]), &options, t0);
    let (_, positions) = one_fetch(&after_metadata(&mut m, t0, &[(0, 1)]));
    assert_eq!(positions, [(0, 0)]);
    let check = |t: &[Transmit]| match t {
        [Transmit::LeaderCheck { id, avoid, .. }] if avoid[..] == [1] => *id,
        other => panic!("expected a leader check avoiding broker 1, got {other:?}"),
    };
    // Broker 1 freezes: its Fetch is overdue after 500 + 500 ms, and the check goes
    // unanswered too (it went to a broker that froze as well).
    let overdue = t0 + 1000 * MS;
    m.handle_timeout(overdue);
    let first = check(&transmits(&mut m, overdue));
    // Not every 250 ms while it is out: one more once it has gone unanswered for 1 s.
    let beside = overdue + LEADER_CHECK_TIMEOUT;
    assert_eq!(m.poll_timeout(), Some(beside));
    assert!(transmits(&mut m, beside - MS).is_empty());
    m.handle_timeout(beside);
    let second = check(&transmits(&mut m, beside));
    assert_ne!(first, second);
    // Two at once at most: none while both are out.
    assert_eq!(m.poll_timeout(), None);
    let late = beside + 10_000 * MS;
    m.handle_timeout(late);
    assert!(transmits(&mut m, late).is_empty());
    // The first answers late, naming broker 2 the leader: taken all the same. The Metadata
    // for the new Fetch avoids broker 1, which still holds the overdue one.
    m.handle_metadata(late, first, Ok(metadata(&[(0, 2)])));
    let planning = match &transmits(&mut m, late)[..] {
        [Transmit::Metadata {
            id,
            refresh: false,
            avoid,
            ..
        }] if avoid[..] == [1] => *id,
        other => panic!("expected Metadata avoiding broker 1, got {other:?}"),
    };
    m.handle_metadata(late, planning, Ok(metadata(&[(0, 2)])));
    let sent = fetches(&transmits(&mut m, late));
    assert_eq!(
        (sent.len(), sent[0].1, &sent[0].2[..]),
        (1, 2, &[(0, 0)][..])
    );
    // The second's answer changes nothing, and the emptied overdue Fetch asks for no
    // more checks: the next is due when the Fetch to broker 2 is overdue in its turn.
    m.handle_metadata(late, second, Ok(metadata(&[(0, 2)])));
    assert!(transmits(&mut m, late).is_empty());
    assert_eq!(m.poll_timeout(), Some(late + 1000 * MS));
}

//! The thin async driver of a read: runs the [`ReadMachine`] against the client's real
//! connections in one tokio task.
//!
//! It makes the requests the machine asks for (polled in place while it waits, so dropping
//! the driver cancels them), feeds the answers back with the current time, sleeps
//! until the machine's next timeout, and sends the machine's outputs to the stream. The
//! read's backpressure is the machine's budget of waiting bytes
//! ([`ReadOptions::max_buffered_bytes`]): the stream counts the bytes of every batch it hands
//! out in a [`Budget`] shared with the driver and wakes it; the driver passes that count on to
//! the machine, which starts no Fetch while the budget is used up. The channel to the stream
//! is bounded too ([`ReadOptions::buffer`] outputs): while it is full, the driver waits for
//! room in it.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use kseek_protocol::messages::fetch::{FetchRequest, FetchResponse};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::client::Client;
use crate::cluster::TopicMetadata;
use crate::error::{ErrorKind, Result};
use crate::plan::{IsolationLevel, Plan};
use crate::read::machine::{Output, PlannedFetch, ReadMachine, Transmit};
use crate::read::options::ReadOptions;
use crate::read::stream::Budget;
use crate::task::{poll_each, BoxFuture};

/// A request that came back, with the id the machine gave it.
enum Answer {
    Metadata(u64, Result<Vec<TopicMetadata>>),
    Fetch(u64, Result<(Arc<str>, i16, FetchResponse)>),
    ListEarliest(u64, Result<i64>),
}

/// The read's background task.
pub(crate) struct Driver {
    client: Client,
    machine: ReadMachine,
    tx: mpsc::Sender<Output>,
    /// The bytes the stream has handed out, and its wake-up call.
    budget: Arc<Budget>,
    /// The requests in flight, polled by the driver's wait (not spawned: each spawned future
    /// type compiles tokio's task machinery once more).
    requests: Vec<BoxFuture<'static, Answer>>,
    /// Answers that came back in the same wake-up as another, not yet fed to the machine.
    answered: VecDeque<Answer>,
}

/// What ended the driver's wait.
enum Woken {
    /// A request came back.
    Answered(Answer),
    /// The machine's timeout passed.
    Timeout,
    /// The caller took batches.
    Taken,
}

impl Driver {
    /// The driver of a read of `plan` with `options`, sending to `tx` a stream that counts
    /// what it hands out in `budget`.
    pub(crate) fn new(
        client: Client,
        plan: &Plan,
        mut options: ReadOptions,
        tx: mpsc::Sender<Output>,
        budget: Arc<Budget>,
    ) -> Driver {
        // The broker may hold a Fetch for max wait: stay well inside the request timeout.
        let request_timeout = client.config().connection.request_timeout;
        options.max_wait = options.max_wait.min(request_timeout / 2);
        let backoff = client.config().backoff();
        let machine = ReadMachine::new(plan, &options, backoff, Instant::now());
        Driver {
            client,
            machine,
            tx,
            budget,
            requests: Vec::new(),
            answered: VecDeque::new(),
        }
    }

    /// Runs the read until it is finished or the stream is dropped.
    pub(crate) async fn run(mut self) {
        loop {
            while let Some(output) = self.machine.poll_output() {
                if self.tx.send(output).await.is_err() {
                    return; // The caller dropped the stream.
                }
            }
            if self.machine.is_finished() {
                return;
            }
            self.machine.handle_taken(self.budget.taken());
            let now = Instant::now();
            while let Some(transmit) = self.machine.poll_transmit(now) {
                self.start(transmit);
            }
            let waiting = self.machine.is_waiting_for_room();
            let wake = self.machine.poll_timeout();
            let idle = self.requests.is_empty() && self.answered.is_empty();
            if !waiting && wake.is_none() && idle {
                // Nothing in flight and nothing to wait for, yet not finished: a bug in the
                // machine. Fail loudly rather than end a bounded read early.
                let _ = self
                    .tx
                    .send(Output::Failed(ErrorKind::ReadStalled.into()))
                    .await;
                return;
            }
            // A batch taken after `taken()` above leaves a permit in the Notify: the wait
            // below ends at once then, so no wake-up is lost.
            let budget = self.budget.clone();
            let mut taken = pin!(budget.notified());
            let mut sleep = pin!(wake.map(tokio::time::sleep_until));
            let (requests, answered) = (&mut self.requests, &mut self.answered);
            let woken = poll_fn(|cx| {
                if waiting && taken.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Woken::Taken);
                }
                poll_each(requests, cx, |answer| answered.push_back(answer));
                if let Some(answer) = answered.pop_front() {
                    return Poll::Ready(Woken::Answered(answer));
                }
                match sleep.as_mut().as_pin_mut().map(|s| s.poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(Woken::Timeout),
                    _ => Poll::Pending,
                }
            })
            .await;
            let now = Instant::now();
            match woken {
                Woken::Taken => {}
                Woken::Timeout => self.machine.handle_timeout(now),
                Woken::Answered(Answer::Metadata(id, r)) => {
                    self.machine.handle_metadata(now, id, r)
                }
                Woken::Answered(Answer::Fetch(id, r)) => self.machine.handle_fetch(now, id, r),
                Woken::Answered(Answer::ListEarliest(id, r)) => {
                    self.machine.handle_list_offsets(now, id, r)
                }
            }
        }
    }

    /// Makes the request `transmit` asks for (a future the driver's wait polls) or applies
    /// it.
    fn start(&mut self, transmit: Transmit) {
        let client = self.client.clone();
        let request: BoxFuture<'static, Answer> = match transmit {
            Transmit::Metadata {
                id,
                topics,
                refresh,
                avoid,
            } => metadata(client, id, topics, refresh, avoid),
            Transmit::LeaderCheck { id, topics, avoid } => {
                metadata(client, id, topics, true, avoid)
            }
            Transmit::Fetch(planned) => Box::pin(async move {
                let answer = fetch(&client, &planned).await;
                Answer::Fetch(planned.id, answer)
            }),
            Transmit::ListEarliest {
                id,
                topic,
                partition,
                isolation,
            } => Box::pin(list_earliest(client, id, topic, partition, isolation)),
            Transmit::Invalidate { topic } => return self.client.invalidate(&topic),
        };
        self.requests.push(request);
    }
}

/// Metadata for `topics`: from the client's cache when fresh (unless `refresh`), else asked
/// of a broker not in `avoid` if there is one.
fn metadata(
    client: Client,
    id: u64,
    topics: Vec<Arc<str>>,
    refresh: bool,
    avoid: Vec<i32>,
) -> BoxFuture<'static, Answer> {
    Box::pin(async move {
        let topics: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
        let cached = if refresh {
            None
        } else {
            client.cached(&topics)
        };
        let result = match cached {
            Some(cached) => Ok(cached),
            None => client.refresh(&topics, &avoid).await,
        };
        Answer::Metadata(id, result)
    })
}

/// The log start of `topic`/`partition`, by resolution's ListOffsets.
async fn list_earliest(
    client: Client,
    id: u64,
    topic: Arc<str>,
    partition: i32,
    isolation: IsolationLevel,
) -> Answer {
    Answer::ListEarliest(id, client.list_earliest(&topic, partition, isolation).await)
}

/// Sends one Fetch to `leader` (on the client's connection to it).
async fn fetch(client: &Client, planned: &PlannedFetch) -> Result<(Arc<str>, i16, FetchResponse)> {
    let conn = client.connection(planned.leader).await?;
    let broker: Arc<str> = Arc::from(conn.broker());
    let negotiated = conn
        .versions()
        .version_for::<FetchRequest>()
        .map_err(|source| ErrorKind::Protocol {
            broker: broker.to_string(),
            source,
        })?;
    let version = planned.version(negotiated);
    let request = planned.request(version);
    let response = conn.send_version(&request, version).await?;
    Ok((broker, version, response))
}

//! The futures and tasks every path shares: one boxed future type, polling several in one
//! task, and spawning kseek's background tasks. A leaf module: it knows nothing of kseek.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A boxed future. The futures every path shares (connecting, Metadata, the connection to a
/// broker) are returned boxed from non-generic `#[inline(never)]` functions, so each is
/// compiled once: an `async fn` is instantiated, and inlined, anew in every calling crate and
/// every caller's state machine, and these sit under the connect, resolve, read and commit
/// paths alike.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Polls every future of `pending` once, in the calling task, and hands the output of each
/// that is done to `done`, taking it out of `pending`. Requests to several brokers wait on
/// one another this way without being spawned: each spawned future type compiles tokio's
/// task machinery once more. Dropping `pending` cancels what is left of it.
pub(crate) fn poll_each<T>(
    pending: &mut Vec<BoxFuture<'_, T>>,
    cx: &mut Context<'_>,
    mut done: impl FnMut(T),
) {
    let mut at = 0;
    while at < pending.len() {
        match pending[at].as_mut().poll(cx) {
            Poll::Ready(output) => {
                drop(pending.swap_remove(at));
                done(output);
            }
            Poll::Pending => at += 1,
        }
    }
}

/// Spawns one of kseek's background tasks (a connection's socket owner, a read's driver) on
/// the current runtime. Every such task is the same boxed future type, so tokio's per-task
/// code (poll, harness, join handle) is compiled once for all of them.
pub(crate) fn spawn(task: BoxFuture<'static, ()>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(task)
}

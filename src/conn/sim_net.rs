//! A test-only in-memory network: connections to simulated brokers instead of TCP.
//!
//! A broker address `sim-<n>:<port>` is not looked up nor dialled: [`connect`] hands it to the
//! listener that a test registered for it on this thread with [`listen`], and returns the
//! client's end of an in-memory byte stream (a [`DuplexStream`]) whose other end the listener
//! serves. Everything above the byte stream (framing, ApiVersions, SASL, request timeouts,
//! the whole [`Client`](crate::Client)) runs unchanged. The registry is per thread, so tests
//! running side by side (each on its own current-thread runtime) don't see each other's
//! brokers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use tokio::io::DuplexStream;

/// The in-memory buffer of each direction of a simulated connection.
const BUFFER: usize = 256 << 10;

/// What a registered address does with a new connection: takes the broker's end of the
/// stream (and serves it, typically on a spawned task), or refuses it.
pub(crate) type Listener = Rc<dyn Fn(DuplexStream) -> io::Result<()>>;

thread_local! {
    static LISTENERS: RefCell<HashMap<String, Listener>> = RefCell::new(HashMap::new());
}

/// Whether `broker` (`host:port`) is a simulated broker's address.
pub(crate) fn is_sim(broker: &str) -> bool {
    broker.starts_with("sim-")
}

/// Registers `listener` for connections to `broker` on this thread (replacing any before).
pub(crate) fn listen(broker: &str, listener: Listener) {
    LISTENERS.with(|l| l.borrow_mut().insert(broker.to_owned(), listener));
}

/// Forgets every listener of this thread.
pub(crate) fn clear() {
    LISTENERS.with(|l| l.borrow_mut().clear());
}

/// Connects to a simulated broker: `None` when `broker` is not a simulated address, else the
/// client's end of a new in-memory connection, or the error the listener refused it with
/// (connection refused when nothing listens there).
pub(crate) fn connect(broker: &str) -> Option<io::Result<DuplexStream>> {
    if !is_sim(broker) {
        return None;
    }
    let listener = LISTENERS.with(|l| l.borrow().get(broker).cloned());
    let Some(listener) = listener else {
        return Some(Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("no simulated broker listens at {broker}"),
        )));
    };
    let (client, server) = tokio::io::duplex(BUFFER);
    Some(listener(server).map(|()| client))
}

//! The client's errors: what the user was doing, where, and whether trying again can help.

use std::time::Duration;

use kseek_protocol::{ApiKey, ErrorCode};

/// A `Result` whose error is the client's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Something went wrong talking to Kafka.
///
/// Every variant names the broker it happened with; [`Error::is_retriable`] says whether the
/// same call may succeed later (after a metadata refresh or a reconnect).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Connecting to, reading from or writing to a broker failed.
    #[error("I/O error with broker {broker}: {source}")]
    Io {
        /// The broker's address.
        broker: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The broker sent bytes that don't decode, or we could not encode a request.
    #[error("protocol error with broker {broker}: {source}")]
    Protocol {
        /// The broker's address.
        broker: String,
        /// What the wire crate reported.
        #[source]
        source: kseek_protocol::Error,
    },
    /// A request got no answer in time.
    #[error("{api} request to broker {broker} timed out after {after:?}")]
    Timeout {
        /// The broker's address.
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// How long we waited.
        after: Duration,
    },
    /// The connection closed while a request was in flight, or was already closed.
    #[error("connection to broker {broker} closed: {reason}")]
    ConnectionClosed {
        /// The broker's address.
        broker: String,
        /// Why it closed.
        reason: String,
    },
    /// The broker answered with an error code.
    #[error("broker {broker} answered {api} with {code}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The broker's address.
        broker: String,
        /// The API of the request.
        api: ApiKey,
        /// The error code.
        code: ErrorCode,
        /// The broker's own message, where the API carries one.
        message: Option<String>,
    },
}

impl Error {
    /// Whether the same operation may succeed if tried again (after refreshing metadata or
    /// reconnecting): I/O errors, timeouts, closed connections and Kafka's retriable codes.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Io { .. } | Error::Timeout { .. } | Error::ConnectionClosed { .. } => true,
            Error::Protocol { .. } => false,
            Error::Broker { code, .. } => code.is_retriable(),
        }
    }
}

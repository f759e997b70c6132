//! kseek: a Kafka client for reading by time, written from the wire protocol up.
//!
//! The wire format lives in [`kseek_protocol`], re-exported here as [`protocol`].

pub use kseek_protocol as protocol;

pub mod conn;
pub mod error;

pub use conn::{Connection, ConnectionConfig};
pub use error::{Error, Result};

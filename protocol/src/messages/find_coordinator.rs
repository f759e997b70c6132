//! FindCoordinator (API key 10), versions 0–6: which broker coordinates a consumer group (or a
//! transaction or share group).
//!
//! Versions 0–3 ask about one key (`key`) and answer with one coordinator in the top-level
//! fields; version 4 and later batch the question (`coordinator_keys`) and answer with one
//! [`Coordinator`] per key. Version 3 is the first flexible version.
//!
//! # References
//! <https://kafka.apache.org/protocol#The_Messages_FindCoordinator>, KIP-699 (batching),
//! `FindCoordinatorRequest.json` / `FindCoordinatorResponse.json` (Kafka 4.2.1).

use crate::messages::codec::{wire_message, wire_struct};

/// `KeyType` for a consumer group coordinator.
pub const KEY_TYPE_GROUP: i8 = 0;
/// `KeyType` for a transaction coordinator.
pub const KEY_TYPE_TRANSACTION: i8 = 1;
/// `KeyType` for a share group coordinator (version 6 and later).
pub const KEY_TYPE_SHARE: i8 = 2;

wire_struct! {
    /// FindCoordinator request body.
    ///
    /// Versions 0–3 carry one [`key`](Self::key); versions 4+ carry
    /// [`coordinator_keys`](Self::coordinator_keys). Neither is ignorable: encoding a non-empty
    /// `key` at v4+ or non-empty `coordinator_keys` at v0–3 is an
    /// [`Error::FieldNotInVersion`](crate::Error::FieldNotInVersion).
    ///
    /// # References
    /// `FindCoordinatorRequest.json`, KIP-699.
    pub struct FindCoordinatorRequest in "FindCoordinatorRequest" {
        /// The coordinator key: a group id or transactional id (versions 0–3).
        pub key: String => until(3),
        /// The coordinator key type: [`KEY_TYPE_GROUP`], [`KEY_TYPE_TRANSACTION`] or
        /// [`KEY_TYPE_SHARE`] (versions 1+, default 0).
        pub key_type: i8 => since(1),
        /// The coordinator keys (versions 4+).
        pub coordinator_keys: Vec<String> => since(4),
    }

    /// FindCoordinator response body.
    ///
    /// Versions 0–3 answer in the top-level `error_code`, `error_message`, `node_id`, `host` and
    /// `port`; versions 4+ answer in [`coordinators`](Self::coordinators), one per requested key.
    ///
    /// # References
    /// `FindCoordinatorResponse.json`, KIP-699.
    pub struct FindCoordinatorResponse in "FindCoordinatorResponse" {
        /// Throttle time in milliseconds because of a quota violation (versions 1+; ignorable).
        pub throttle_time_ms: i32 => since(1).ignorable(),
        /// The error code, or 0 (versions 0–3).
        pub error_code: i16 => until(3),
        /// The error message, or null (versions 1–3; ignorable).
        pub error_message: Option<String> => between(1, 3).ignorable(),
        /// The coordinator's node id (versions 0–3).
        pub node_id: i32 => until(3),
        /// The coordinator's host name (versions 0–3).
        pub host: String => until(3),
        /// The coordinator's port (versions 0–3).
        pub port: i32 => until(3),
        /// One result per requested key (versions 4+).
        pub coordinators: Vec<Coordinator> => since(4),
    }

    /// The coordinator of one key in a FindCoordinator response (versions 4+).
    pub struct Coordinator in "FindCoordinatorResponse.coordinators" {
        /// The coordinator key this result is for.
        pub key: String,
        /// The coordinator's node id.
        pub node_id: i32,
        /// The coordinator's host name.
        pub host: String,
        /// The coordinator's port.
        pub port: i32,
        /// The error code, or 0.
        pub error_code: i16,
        /// The error message, or null.
        pub error_message: Option<String>,
    }
}

wire_message!(
    FindCoordinatorRequest => FindCoordinatorResponse: FIND_COORDINATOR,
    versions 0..=6, first flexible 3
);

#[cfg(test)]
mod tests;

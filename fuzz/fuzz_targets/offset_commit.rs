#![no_main]
//! OffsetCommit requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::offset_commit::{OffsetCommitRequest, OffsetCommitResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<OffsetCommitRequest, OffsetCommitResponse>(data));

#![no_main]
//! ListOffsets requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::list_offsets::{ListOffsetsRequest, ListOffsetsResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<ListOffsetsRequest, ListOffsetsResponse>(data));

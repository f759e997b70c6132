#![no_main]
//! Fetch requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::fetch::{FetchRequest, FetchResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<FetchRequest, FetchResponse>(data));

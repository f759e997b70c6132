#![no_main]
//! FindCoordinator requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<FindCoordinatorRequest, FindCoordinatorResponse>(data));

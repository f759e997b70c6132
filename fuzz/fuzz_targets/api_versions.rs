#![no_main]
//! ApiVersions requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::api_versions::{ApiVersionsRequest, ApiVersionsResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<ApiVersionsRequest, ApiVersionsResponse>(data));

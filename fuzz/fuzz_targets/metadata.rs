#![no_main]
//! Metadata requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::metadata::{MetadataRequest, MetadataResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<MetadataRequest, MetadataResponse>(data));

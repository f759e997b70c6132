#![no_main]
//! DescribeLogDirs requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::describe_log_dirs::{DescribeLogDirsRequest, DescribeLogDirsResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<DescribeLogDirsRequest, DescribeLogDirsResponse>(data));

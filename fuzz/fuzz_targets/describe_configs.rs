#![no_main]
//! DescribeConfigs requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::describe_configs::{DescribeConfigsRequest, DescribeConfigsResponse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<DescribeConfigsRequest, DescribeConfigsResponse>(data));

#![no_main]
//! SaslAuthenticate requests and responses at every version kseek implements.

use kseek_fuzz::fuzz_api;
use kseek_protocol::messages::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_api::<SaslAuthenticateRequest, SaslAuthenticateResponse>(data));

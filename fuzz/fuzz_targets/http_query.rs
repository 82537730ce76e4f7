//! The fuzz target of `snowmint_fuzz::http_query` (what it checks is there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowmint_fuzz::http_query::run(data));

//! The fuzz target of `snowmint_fuzz::layout_spec` (what it checks is there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowmint_fuzz::layout_spec::run(data));

//! The fuzz target of `snowmint_fuzz::inspect_text` (what it checks is there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowmint_fuzz::inspect_text::run(data));

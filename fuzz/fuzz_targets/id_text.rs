//! The fuzz target of `snowmint_fuzz::id_text` (what it checks is there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowmint_fuzz::id_text::run(data));

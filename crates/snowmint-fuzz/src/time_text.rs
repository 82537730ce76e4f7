//! Time input (Unix ms or RFC 3339): a clean error, or an instant that
//! formats back to text reading as the same instant; never a panic.

use snowmint::{Layout, format_time, parse_time};

/// The check of one input; panics when a property does not hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_time(text) {
        Ok(ms) => {
            let written = format_time(ms).to_string();
            // Years outside 0000..=9999 are written in the extended form,
            // which RFC 3339 (and so the parser) does not read.
            if !written.starts_with(['+', '-']) {
                assert_eq!(parse_time(&written), Ok(ms), "{text:?} -> {written}");
            }
            let _ = Layout::TWITTER.id_range(ms, ms);
        }
        Err(error) => assert!(error.to_string().len() < 400),
    }
}

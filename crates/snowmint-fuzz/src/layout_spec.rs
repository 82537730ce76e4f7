//! Layout specifications: a clean error, or a layout that prints back to the
//! same layout and whose IDs round-trip; never a panic.

use arbitrary::{Arbitrary, Unstructured};
use snowmint::{Layout, SnowflakeId};

/// Reads `data` as libfuzzer-sys reads the target's typed input, and
/// [`check`]s it; bytes that make no such input are skipped, as libFuzzer
/// skips them.
pub fn run(data: &[u8]) {
    if let Ok(input) = <(&str, u64)>::arbitrary_take_rest(Unstructured::new(data)) {
        check(input);
    }
}

/// The check of one input; panics when a property does not hold.
pub fn check(input: (&str, u64)) {
    let (spec, raw) = input;
    let Ok(layout) = spec.parse::<Layout>() else {
        return;
    };
    assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout));
    let id = SnowflakeId::from_u64(raw >> 1).expect("63 bits");
    let parts = layout.decode(id);
    assert_eq!(layout.encode(parts), Ok(id));
    assert!(layout.last_instant_ms() >= layout.epoch_ms());
}

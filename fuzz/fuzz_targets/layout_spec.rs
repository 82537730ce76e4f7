//! Layout specifications: a clean error, or a layout that prints back to the
//! same layout and whose IDs round-trip; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint::{Layout, SnowflakeId};

fuzz_target!(|input: (&str, u64)| {
    let (spec, raw) = input;
    let Ok(layout) = spec.parse::<Layout>() else {
        return;
    };
    assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout));
    let id = SnowflakeId::from_u64(raw >> 1).expect("63 bits");
    let parts = layout.decode(id);
    assert_eq!(layout.encode(parts), Ok(id));
    assert!(layout.last_instant_ms() >= layout.epoch_ms());
});

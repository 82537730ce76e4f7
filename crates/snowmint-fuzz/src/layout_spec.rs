//! Layout texts (presets, `T/D/M/S@EPOCH`, named fields with roles, units):
//! a clean error with a short message, or a layout that prints back to the
//! same layout, whose IDs round-trip and whose generator, when it can mint,
//! starts; never a panic.

use arbitrary::{Arbitrary, Unstructured};
use snowmint::{Generator, Layout, ManualClock, Node, SnowflakeId};

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
    let layout = match spec.parse::<Layout>() {
        Ok(layout) => layout,
        Err(error) => {
            // Messages stay short whatever the input.
            assert!(error.to_string().len() < 700, "{error}");
            return;
        }
    };
    assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout));
    assert_eq!(layout.spec().parse::<Layout>(), Ok(layout));
    let id = SnowflakeId::from_u64(raw);
    match layout.decode(id) {
        Ok(parts) => {
            assert_eq!(parts.id(), id);
            assert_eq!(layout.timestamp_us(id), parts.time_us());
        }
        Err(_) => assert!(id > layout.max_id()),
    }
    assert!(layout.last_instant_ms() >= layout.epoch_ms());
    if layout.is_mintable() {
        let node = layout.node_of(id);
        let generator = Generator::builder(layout, node)
            .clock(ManualClock::new(layout.epoch_ms()))
            .build()
            .expect("a layout that can mint makes a generator");
        let first = generator.next_id().expect("an ID at the epoch");
        assert_eq!(layout.node_of(first), node);
        assert_eq!(layout.timestamp_ms(first), layout.epoch_ms());
    } else {
        assert!(Generator::new(layout, Node::default()).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Layout texts of every form, good and bad, through the check (the
    /// committed seeds hold byte strings; these say what they cover).
    #[test]
    fn texts_of_every_form() {
        for text in [
            "twitter",
            "Sonyflake",
            "sonyflake-v2,1ms",
            "baidu@2016-05-20T00:00:00+08:00",
            "41/5/5/12@1288834974657",
            "42/0/10/11",
            "time:39/sequence:8/machine:16@2014-09-01T00:00:00Z,10ms",
            "time:42/worker:5:node/process:5:node/increment:12:sequence@1420070400000",
            "shard:8:node/time:40/counter:10:sequence/noise:6:opaque@0,250us",
            "time:48/sequence_data:16:opaque@0",
            "time:64@0,1us",
            "time:1/sequence:62@0",
            "time:41/node:24",
            "time:41/Machine:10",
            "time:0",
            "twitter,0s",
            "twitter,1000001us",
            "time:41/a:1/b:1/c:1/d:1/e:1/f:1/g:1/h:1",
            ":,@/",
            "",
        ] {
            for raw in [0, 1, 1 << 53, 1 << 63, u64::MAX] {
                check((text, raw));
            }
        }
    }
}

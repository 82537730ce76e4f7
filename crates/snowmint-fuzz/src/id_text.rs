//! ID text in every encoding: a clean error or an ID that writes back to
//! text that reads as the same ID; never a panic.

use snowmint::{Encoding, Layout, SnowflakeId};

/// The check of one input; panics when a property does not hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for encoding in Encoding::ALL {
        match SnowflakeId::parse(encoding, text) {
            Ok(id) => {
                let written = id.encode(encoding);
                assert_eq!(SnowflakeId::parse(encoding, written.as_str()), Ok(id));
                for layout in [Layout::TWITTER, Layout::DISCORD, Layout::SONYFLAKE] {
                    match layout.decode(id) {
                        Ok(parts) => assert_eq!(parts.id(), id),
                        Err(_) => assert!(id > layout.max_id()),
                    }
                }
            }
            Err(error) => {
                // Messages stay short whatever the input.
                assert!(error.to_string().len() < 400);
            }
        }
    }
    // Decimal agrees with the standard library on what is a valid number.
    if let Ok(id) = text.parse::<SnowflakeId>() {
        assert_eq!(text.parse::<u64>().ok(), Some(id.as_u64()));
    }
    // The serde form reads the same text as a JSON string.
    if let Ok(json) = serde_json::to_string(text) {
        let via_serde = serde_json::from_str::<SnowflakeId>(&json).ok();
        assert_eq!(via_serde, text.parse::<SnowflakeId>().ok());
    }
}

//! Any text through the inspector (`snowmint inspect`): never a panic;
//! tokens in order, inside the text and ASCII; readings ranked; and every
//! string family's text written back reads as the same ID.

use snowmint::inspect::{Inspector, Shape, classify};

/// "Now" for the check: a fixed instant, so that a saved input replays
/// as it failed.
const NOW_MS: i64 = 1_750_000_000_000;

/// The check of one input; panics when a property does not hold.
pub fn run(data: &[u8]) {
    let inspector = Inspector::new(NOW_MS);
    let mut last_end = 0;
    for (found, token) in snowmint::inspect::scan(data).zip(inspector.inspect(data)) {
        let span = found.span.clone();
        assert!(span.start >= last_end && span.end <= data.len(), "{span:?}");
        assert_eq!(&data[span.clone()], found.text.as_bytes());
        assert!(found.text.is_ascii() && !found.shapes.is_empty());
        last_end = span.end;
        let ranks: Vec<_> = token
            .candidates()
            .iter()
            .map(|r| r.plausibility())
            .collect();
        assert!(ranks.is_sorted(), "{ranks:?}");
        for reading in token.candidates() {
            if let Some(time) = reading.time() {
                assert!(!time.to_string().is_empty());
            }
            assert!(!reading.why().is_empty() || reading.time().is_none());
        }
        serde_json::to_string(&token).expect("a token serializes");
        for shape in &found.shapes {
            round_trips(shape);
        }
    }
    // Each word read whole, in both modes, as the scanner reads words.
    for word in data.split(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')) {
        for standalone in [false, true] {
            for shape in classify(word, standalone) {
                round_trips(&shape);
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        // Every family's parser: a value or a short error naming it.
        macro_rules! parse {
            ($($family:ty),*) => {$(
                match text.parse::<$family>() {
                    Ok(id) => assert_eq!(id.to_string().parse::<$family>().ok(), Some(id)),
                    Err(error) => assert!(error.to_string().len() < 400),
                }
            )*};
        }
        use snowmint::inspect::{Ksuid, MisskeyAid, MisskeyAidx, ObjectId, Tid, Tsid, Ulid, Uuid};
        parse!(
            Ulid,
            Uuid,
            ObjectId,
            Ksuid,
            Tid,
            MisskeyAid,
            MisskeyAidx,
            Tsid
        );
    }
}

/// The text a string family writes reads back as the same ID.
fn round_trips(shape: &Shape) {
    macro_rules! again {
        ($id:expr) => {
            assert_eq!($id.to_string().parse().ok().as_ref(), Some($id))
        };
    }
    match shape {
        Shape::Ulid(id) => again!(id),
        Shape::Uuid(id) => again!(id),
        Shape::ObjectId(id) => again!(id),
        Shape::Ksuid(id) => again!(id),
        Shape::Tid(id) => again!(id),
        Shape::MisskeyAid(id) => again!(id),
        Shape::MisskeyAidx(id) => again!(id),
        Shape::Tsid(id) => again!(id),
        // Integers and times have no text of their own to write back.
        _ => {}
    }
}

//! memcached's text protocol, as much of it as an ID service speaks:
//! reading one request line, and writing the answers.
//!
//! What memcached's `doc/protocol.txt` specifies, and this follows:
//!
//! - A request is one line ended by `\r\n` (a bare `\n` is read too);
//!   tokens are separated by spaces; command names are case-sensitive.
//! - A key is at most 250 bytes, without control characters or spaces.
//! - `get <key>*` answers `VALUE <key> <flags> <bytes>\r\n<data>\r\n` per
//!   key found, then `END\r\n`; `gets` adds each value's CAS unique after
//!   `<bytes>`. Here every key is "found": its value is a new ID, flags 0,
//!   CAS unique 0 (nothing here can be compared and swapped).
//! - `version` answers `VERSION <version>\r\n`; `quit` closes the
//!   connection without an answer.
//! - An unknown command is `ERROR\r\n`; a malformed one is
//!   `CLIENT_ERROR <message>\r\n`; a server that cannot answer says
//!   `SERVER_ERROR <message>\r\n`.
//! - Storage commands (`set`, `add`, `replace`, `append`, `prepend`, `cas`)
//!   are followed by a data block of `<bytes>` bytes and `\r\n`; with
//!   `noreply` the client reads no answer.

use snowmint::push_decimal;

/// The longest request line read, ending included: room for a `gets` of
/// a few dozen full-length keys or a few thousand short ones. memcached
/// itself closes a connection whose line passes 2048 bytes unless it is a
/// `get`; a longer one here is answered `CLIENT_ERROR line too long` and
/// the connection is closed, as the rest of the line cannot be trusted.
pub const MAX_LINE: usize = 8 * 1024;

/// The longest key memcached accepts.
pub(crate) const MAX_KEY: usize = 250;

/// The most keys in one `get`/`gets`: one millisecond's worth of IDs, as
/// `/v1/ids` allows.
pub(crate) const MAX_KEYS: usize = snowmint_fleet::MAX_BATCH as usize;

/// One request, read from its line (without the line ending).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Request<'a> {
    /// `get` or `gets`: a new ID per key, in order.
    Get {
        /// The keys, as given; they are only echoed.
        keys: Vec<&'a [u8]>,
        /// `gets`: answer with a CAS unique.
        cas: bool,
    },
    /// `version`.
    Version,
    /// `quit`.
    Quit,
    /// A command memcached knows, which an ID service does not serve
    /// (storing, deleting, counting, statistics).
    Unserved {
        /// The command's name.
        command: &'a [u8],
        /// The length of the data block that follows a storage command,
        /// which must be read and dropped before the next request.
        data: Option<u64>,
        /// Whether the client waits for an answer (no `noreply`).
        reply: bool,
    },
    /// A known command in a form that cannot be read:
    /// `CLIENT_ERROR <message>`.
    Malformed(&'static str),
    /// Not a command: `ERROR`.
    Unknown,
}

/// Storage commands: `<command> <key> <flags> <exptime> <bytes> [noreply]`,
/// and `cas` with a CAS unique before `noreply`.
const STORAGE: [&[u8]; 6] = [b"set", b"add", b"replace", b"append", b"prepend", b"cas"];

/// The other commands memcached answers, refused by name rather than
/// called unknown, so that a client learns this server does not store.
const OTHERS: [&[u8]; 12] = [
    b"delete",
    b"incr",
    b"decr",
    b"touch",
    b"gat",
    b"gats",
    b"flush_all",
    b"stats",
    b"verbosity",
    b"cache_memlimit",
    b"shutdown",
    b"slabs",
];

/// The memcached message for a line that does not follow the grammar.
const BAD_FORMAT: &str = "bad command line format";

/// Reads a request line (the ending already removed).
pub(crate) fn parse(line: &[u8]) -> Request<'_> {
    let mut tokens = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    let Some(command) = tokens.next() else {
        return Request::Unknown;
    };
    match command {
        b"get" | b"gets" => {
            let keys: Vec<&[u8]> = tokens.collect();
            if keys.is_empty() {
                // memcached says ERROR for a get without a key.
                return Request::Unknown;
            }
            if keys.len() > MAX_KEYS {
                return Request::Malformed("too many keys (at most 4096 in one request)");
            }
            if !keys.iter().all(|key| is_key(key)) {
                return Request::Malformed(BAD_FORMAT);
            }
            Request::Get {
                keys,
                cas: command == b"gets",
            }
        }
        b"version" => Request::Version,
        b"quit" => Request::Quit,
        _ if STORAGE.contains(&command) => storage(command, tokens.collect()),
        _ if OTHERS.contains(&command) => {
            let rest: Vec<&[u8]> = tokens.collect();
            Request::Unserved {
                command,
                data: None,
                reply: rest.last() != Some(&&b"noreply"[..]),
            }
        }
        _ => Request::Unknown,
    }
}

/// A storage command's arguments: the data block's length must be read
/// so that its bytes are not taken for requests.
fn storage<'a>(command: &'a [u8], arguments: Vec<&'a [u8]>) -> Request<'a> {
    let fixed = if command == b"cas" { 5 } else { 4 };
    let reply = match arguments.len() {
        n if n == fixed => true,
        n if n == fixed + 1 && arguments[fixed] == b"noreply" => false,
        _ => return Request::Malformed(BAD_FORMAT),
    };
    let bytes = std::str::from_utf8(arguments[3])
        .ok()
        .and_then(|text| text.parse::<u64>().ok());
    match bytes {
        Some(bytes) if is_key(arguments[0]) => Request::Unserved {
            command,
            data: Some(bytes),
            reply,
        },
        _ => Request::Malformed(BAD_FORMAT),
    }
}

/// Whether `key` is a memcached key: 1 to 250 bytes, none of them a
/// control character or a space (a key is echoed in the answer, so one
/// holding a line ending would break the answer's framing).
fn is_key(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY && key.iter().all(|&b| b > b' ' && b != 0x7f)
}

/// Appends one value of a `get` (or, with `cas`, a `gets`) answer: the ID
/// in decimal as the data.
pub(crate) fn push_value(out: &mut Vec<u8>, key: &[u8], id: u64, cas: bool) {
    let mut digits = Vec::with_capacity(20);
    push_decimal(&mut digits, id);
    out.extend_from_slice(b"VALUE ");
    out.extend_from_slice(key);
    out.extend_from_slice(b" 0 ");
    push_decimal(out, digits.len() as u64);
    if cas {
        out.extend_from_slice(b" 0");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&digits);
    out.extend_from_slice(b"\r\n");
}

/// Appends the end of a `get` answer.
pub(crate) fn push_end(out: &mut Vec<u8>) {
    out.extend_from_slice(b"END\r\n");
}

/// Appends `VERSION <version>`.
pub(crate) fn push_version(out: &mut Vec<u8>) {
    out.extend_from_slice(b"VERSION ");
    out.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends `ERROR`, memcached's answer to what is not a command.
pub(crate) fn push_error(out: &mut Vec<u8>) {
    out.extend_from_slice(b"ERROR\r\n");
}

/// Appends `CLIENT_ERROR <message>`.
pub(crate) fn push_client_error(out: &mut Vec<u8>, message: &str) {
    push_line(out, b"CLIENT_ERROR ", message);
}

/// Appends `SERVER_ERROR <message>`, the message kept to one line.
pub(crate) fn push_server_error(out: &mut Vec<u8>, message: &str) {
    push_line(out, b"SERVER_ERROR ", message);
}

/// The answer to a command this server does not serve.
pub(crate) fn unserved_message(command: &[u8]) -> String {
    format!(
        "{} is not served: this is a snowmint ID service, which answers get, gets, version and quit (each key gets a new ID) and stores nothing",
        String::from_utf8_lossy(command)
    )
}

fn push_line(out: &mut Vec<u8>, prefix: &[u8], message: &str) {
    out.extend_from_slice(prefix);
    // A line ending inside the message would end the answer early.
    out.extend(
        message
            .bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(keys: &[&'static [u8]], cas: bool) -> Request<'static> {
        Request::Get {
            keys: keys.to_vec(),
            cas,
        }
    }

    /// The commands served, read as memcached reads them: spaces collapse,
    /// names are case-sensitive, a get needs a key.
    #[test]
    fn requests_are_read_as_memcached_reads_them() {
        assert_eq!(parse(b"get a"), get(&[b"a"], false));
        assert_eq!(parse(b"gets  a b   c "), get(&[b"a", b"b", b"c"], true));
        assert_eq!(parse(b"version"), Request::Version);
        assert_eq!(parse(b"quit"), Request::Quit);
        assert_eq!(parse(b"get"), Request::Unknown);
        assert_eq!(parse(b"GET a"), Request::Unknown);
        assert_eq!(parse(b""), Request::Unknown);
        assert_eq!(parse(b"   "), Request::Unknown);
        assert_eq!(parse(b"bogus a b"), Request::Unknown);
        assert_eq!(parse(b"\x80\xff"), Request::Unknown);
    }

    /// Keys of 250 bytes are read; longer ones, or ones holding control
    /// characters, are a client error, never echoed.
    #[test]
    fn keys_are_bounded_and_printable() {
        let longest = vec![b'k'; MAX_KEY];
        let line = [b"get ".as_slice(), &longest].concat();
        assert!(matches!(parse(&line), Request::Get { .. }));
        let too_long = [line.as_slice(), b"k"].concat();
        assert_eq!(parse(&too_long), Request::Malformed(BAD_FORMAT));
        assert_eq!(parse(b"get a\rb"), Request::Malformed(BAD_FORMAT));
        assert_eq!(parse(b"get a\tb"), Request::Malformed(BAD_FORMAT));
        assert_eq!(parse(b"get a\x7f"), Request::Malformed(BAD_FORMAT));
        let many = format!("get{}", " k".repeat(MAX_KEYS + 1));
        assert!(matches!(parse(many.as_bytes()), Request::Malformed(m) if m.contains("4096")));
    }

    /// Storage commands are refused by name, with the length of the data
    /// block to drop and whether the client waits for the answer.
    #[test]
    fn storage_commands_name_their_data_block() {
        assert_eq!(
            parse(b"set k 0 0 5"),
            Request::Unserved {
                command: b"set",
                data: Some(5),
                reply: true
            }
        );
        assert_eq!(
            parse(b"cas k 0 0 12 99 noreply"),
            Request::Unserved {
                command: b"cas",
                data: Some(12),
                reply: false
            }
        );
        assert_eq!(parse(b"set k 0 0"), Request::Malformed(BAD_FORMAT));
        assert_eq!(parse(b"set k 0 0 -1"), Request::Malformed(BAD_FORMAT));
        assert_eq!(parse(b"set k 0 0 5 later"), Request::Malformed(BAD_FORMAT));
        assert_eq!(
            parse(b"delete k noreply"),
            Request::Unserved {
                command: b"delete",
                data: None,
                reply: false
            }
        );
        assert_eq!(
            parse(b"stats"),
            Request::Unserved {
                command: b"stats",
                data: None,
                reply: true
            }
        );
    }

    /// The answers are framed as memcached frames them.
    #[test]
    fn answers_are_framed_as_memcached_frames_them() {
        let mut out = Vec::new();
        push_value(&mut out, b"id", 1724551110457221119, false);
        push_value(&mut out, b"x", 7, true);
        push_end(&mut out);
        push_server_error(&mut out, "no slot\r\nheld");
        push_client_error(&mut out, "line too long");
        push_error(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "VALUE id 0 19\r\n1724551110457221119\r\nVALUE x 0 1 0\r\n7\r\nEND\r\n\
             SERVER_ERROR no slot  held\r\nCLIENT_ERROR line too long\r\nERROR\r\n"
        );
    }
}

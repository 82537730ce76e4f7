//! memcached's text protocol as `--memcached-listen` serves it: any bytes
//! a client sends, through the real connection handler over an in-memory
//! stream. Whatever comes in, every line that goes out is a memcached
//! answer (`VALUE` and its data, `END`, `VERSION`, `ERROR`,
//! `CLIENT_ERROR`, `SERVER_ERROR`), each `VALUE` carries an ID of this
//! node, and nothing panics.

use std::sync::LazyLock;

use snowmint_server::AppState;
use snowmint_server::config::{Config, Layer, Setting};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One node for the whole run (building one per input would measure the
/// state file, not the protocol).
struct Service {
    runtime: tokio::runtime::Runtime,
    state: AppState,
}

static SERVICE: LazyLock<Service> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let state_dir =
        std::env::temp_dir().join(format!("snowmint-fuzz-memcached-{}", std::process::id()));
    let mut flags = Layer::flags();
    flags.set(Setting::StateDir, state_dir.to_string_lossy().into_owned());
    flags.set(Setting::Datacenter, "3");
    flags.set(Setting::Machine, "7");
    let config = Config::resolve(&[flags], |_| None).expect("a valid configuration");
    let state = runtime.block_on(crate::node_state(&config));
    Service { runtime, state }
});

/// The check of one input; panics when a property does not hold.
pub fn run(input: &[u8]) {
    let service = &*SERVICE;
    let answer = service.runtime.block_on(async {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(snowmint_server::memcached::serve_stream(
            server,
            service.state.clone(),
        ));
        // Writing and reading at once: a large input's answers could fill
        // the pipe before the input is all in.
        let (mut reader, mut writer) = tokio::io::split(&mut client);
        let write = async {
            let _ = writer.write_all(input).await;
            let _ = writer.shutdown().await;
        };
        let mut answer = Vec::new();
        let read = reader.read_to_end(&mut answer);
        let ((), read) = tokio::join!(write, read);
        read.expect("reading the answers");
        let _ = serving
            .await
            .expect("the connection handler does not panic");
        answer
    });
    let text = String::from_utf8_lossy(&answer);
    let mut lines = text.split("\r\n");
    // After the last "\r\n" comes nothing: every answer is whole lines.
    assert_eq!(text.split("\r\n").last(), Some(""), "{text:?}");
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if line.starts_with("VALUE ") {
            let data = lines.next().expect("a VALUE line without its data");
            let id: u64 = data.parse().expect("a VALUE that is not an ID");
            assert_eq!((id >> 17) & 31, 3, "{id}");
            assert_eq!((id >> 12) & 31, 7, "{id}");
            let length: usize = line.split(' ').nth(3).unwrap().parse().unwrap();
            assert_eq!(length, data.len(), "{line}");
            continue;
        }
        assert!(
            ["END", "ERROR"].contains(&line)
                || line.starts_with("VERSION ")
                || line.starts_with("CLIENT_ERROR ")
                || line.starts_with("SERVER_ERROR "),
            "not a memcached answer: {line:?}"
        );
    }
}

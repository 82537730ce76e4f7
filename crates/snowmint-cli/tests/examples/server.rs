//! The `snowmint serve` nodes the documents' examples talk to (or, for the
//! one that shows a second process refused, compete with): each started as
//! its document starts it, but on a free port and in a temporary state
//! directory; the examples' commands and outputs are rewritten between the
//! two. The README's quick start and the service guide start nodes of their
//! own, on their own ports and identities, as a reader trying both would.

use std::path::PathBuf;
use std::time::Duration;

use snowmint_test_support::binary::Service;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::wait_until;

use crate::markdown::Document;

/// A node a document starts, and how its examples reach it.
pub struct Shown {
    /// The document that starts it.
    pub document: &'static str,
    /// The line that starts it, as the document shows it.
    pub start: &'static str,
    /// Where its examples reach it (`localhost:8080`).
    pub address: &'static str,
    /// Its state directory, as its examples name it.
    pub state_dir: &'static str,
}

/// The nodes the documents start.
pub const SHOWN: [Shown; 2] = [
    Shown {
        document: "README.md",
        start: "snowmint serve --datacenter 3 --machine 7 &    # 127.0.0.1:8080; its state in ~/.local/state/snowmint",
        address: "localhost:8080",
        state_dir: "~/.local/state/snowmint",
    },
    Shown {
        document: "docs/service.md",
        start: "snowmint serve --datacenter 4 --machine 2 --listen localhost:8090 --state-dir /var/lib/snowmint",
        address: "localhost:8090",
        state_dir: "/var/lib/snowmint",
    },
];

/// The process id the examples show for a node.
const SHOWN_PID: &str = "4242";

/// How long a started node may take to be ready: a bound against hangs,
/// not a timing assertion.
const READY_LIMIT: Duration = Duration::from_secs(60);

impl Shown {
    /// Whether `command` talks to this node or uses its state directory.
    pub fn serves(&self, command: &str) -> bool {
        command.contains(self.address) || command.contains(self.state_dir)
    }
}

/// A running node, stopped on drop.
pub struct Server {
    shown: &'static Shown,
    service: Service,
    state_dir: PathBuf,
    _home: TempDir,
}

impl Server {
    /// Starts `shown`'s node as its document does and waits until it is
    /// ready.
    pub fn start(shown: &'static Shown) -> Server {
        let document = Document::read(shown.document);
        assert!(
            document.text.lines().any(|line| line == shown.start),
            "{} no longer starts a node with `{}`: start it here as the document does",
            shown.document,
            shown.start
        );
        let home = temp_dir("examples-serve");
        let state_dir = home.path().join("state");
        // The shown arguments, without the shell's `&` and comment, the
        // listen address (the test's is free) and the state directory.
        let command = shown.start.split(" &").next().unwrap();
        let mut arguments: Vec<String> = Vec::new();
        let mut words = command.split_whitespace().skip(2);
        while let Some(word) = words.next() {
            match word {
                "--listen" | "--state-dir" => {
                    words.next();
                }
                word => arguments.push(word.to_owned()),
            }
        }
        arguments.push("--state-dir".to_owned());
        arguments.push(state_dir.display().to_string());
        let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
        let service = Service::start(env!("CARGO_BIN_EXE_snowmint"), home.path(), &arguments, &[]);
        wait_until("the examples' node to be ready", READY_LIMIT, || {
            let answer = service.connect().get("/readyz").ok()?;
            (answer.status == 200).then_some(())
        });
        Server {
            shown,
            service,
            state_dir,
            _home: home,
        }
    }

    /// The command as it runs here: against this node and its state
    /// directory.
    pub fn rewrite_command(&self, command: &str) -> String {
        command
            .replace(self.shown.address, &self.service.address.to_string())
            .replace(self.shown.state_dir, &self.state_dir.display().to_string())
    }

    /// The output as the examples show it: with their address, state
    /// directory and process id.
    pub fn rewrite_output(&self, output: &str) -> String {
        output
            .replace(&self.state_dir.display().to_string(), self.shown.state_dir)
            .replace(&self.service.address.to_string(), self.shown.address)
            .replace(
                &format!("process {}", self.service.pid()),
                &format!("process {SHOWN_PID}"),
            )
    }
}

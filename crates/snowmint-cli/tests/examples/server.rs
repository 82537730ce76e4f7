//! The `snowmint serve` the documents' examples talk to (or, for the one
//! that shows a second process refused, compete with): started as the
//! service guide starts it, on a free port and in a temporary state
//! directory instead of 8080 and /var/lib/snowmint; the examples' commands
//! and outputs are rewritten between the two.

use std::path::PathBuf;
use std::time::Duration;

use snowmint_test_support::binary::Service;
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::wait_until;

use crate::markdown::Document;

/// Where the examples reach the service.
pub const SHOWN_ADDRESS: &str = "localhost:8080";

/// The examples' state directory.
pub const SHOWN_STATE_DIR: &str = "/var/lib/snowmint";

/// The process id the examples show for the service.
const SHOWN_PID: &str = "4242";

/// The guide that starts the service.
const GUIDE: &str = "docs/service.md";

/// How the service guide starts the service; the test starts it the same
/// way.
const SHOWN_START: &str = "snowmint serve --datacenter 3 --machine 7 --state-dir /var/lib/snowmint";

/// How long the started service may take to be ready: a bound against
/// hangs, not a timing assertion.
const READY_LIMIT: Duration = Duration::from_secs(60);

/// A running service, stopped on drop.
pub struct Server {
    service: Service,
    state_dir: PathBuf,
    _home: TempDir,
}

impl Server {
    /// Starts the service as the service guide does and waits until it
    /// is ready.
    pub fn start() -> Server {
        let guide = Document::read(GUIDE);
        assert!(
            guide.text.lines().any(|line| line == SHOWN_START),
            "{GUIDE} no longer starts the service with `{SHOWN_START}`: \
             start it here as the guide does"
        );
        let home = temp_dir("examples-serve");
        let state_dir = home.path().join("state");
        let shown = SHOWN_START.replace(SHOWN_STATE_DIR, &state_dir.display().to_string());
        let arguments: Vec<&str> = shown.split(' ').skip(2).collect();
        let service = Service::start(env!("CARGO_BIN_EXE_snowmint"), home.path(), &arguments, &[]);
        wait_until("the examples' service to be ready", READY_LIMIT, || {
            let answer = service.connect().get("/readyz").ok()?;
            (answer.status == 200).then_some(())
        });
        Server {
            service,
            state_dir,
            _home: home,
        }
    }

    /// The command as it runs here: against this service and its state
    /// directory.
    pub fn rewrite_command(&self, command: &str) -> String {
        command
            .replace(SHOWN_ADDRESS, &self.service.address.to_string())
            .replace(SHOWN_STATE_DIR, &self.state_dir.display().to_string())
    }

    /// The output as the examples show it: with its address, state
    /// directory and process id.
    pub fn rewrite_output(&self, output: &str) -> String {
        output
            .replace(&self.state_dir.display().to_string(), SHOWN_STATE_DIR)
            .replace(&self.service.address.to_string(), SHOWN_ADDRESS)
            .replace(
                &format!("process {}", self.service.pid()),
                &format!("process {SHOWN_PID}"),
            )
    }
}

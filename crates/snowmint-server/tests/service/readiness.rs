//! `/readyz` answers 503 whenever `/v1/id` would be refused: with the state
//! directory's disk full, with the clock outside the layout; and it comes
//! back by itself once the trouble is gone, without an ID request.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use snowmint::{ClockPolicy, Layout, ManualClock};
use snowmint_fleet::{MarkFile, SlotSource, StaticSource};
use snowmint_server::{AppState, Issuer, IssuerOptions, app};
use snowmint_test_support::in_process::{Answer, NODE, get};
use snowmint_test_support::temp::temp_dir;

const T: i64 = 1_700_000_000_000;

/// A node of the static identity [`NODE`] on `state_dir`, on a clock the
/// test drives.
async fn node_on(state_dir: &Path, clock: &ManualClock) -> axum::Router {
    let source = Arc::new(StaticSource::new(Layout::TWITTER, NODE).unwrap());
    let issuer = Issuer::start(
        source as Arc<dyn SlotSource>,
        IssuerOptions {
            layout: Layout::TWITTER,
            clock_policy: ClockPolicy::Refuse,
            clock: Arc::new(clock.clone()),
            state_dir: state_dir.to_owned(),
            mark_step: Duration::from_secs(1),
        },
    )
    .await
    .unwrap();
    app(AppState::new(issuer))
}

/// A small tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts 64 KiB of tmpfs at `at`; `Err` with the reason when this
    /// process may not mount (not root, or no CAP_SYS_ADMIN).
    fn mount(at: &Path) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(at).unwrap();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(at)
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if output.status.success() {
            Ok(Tmpfs(at.to_owned()))
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// What keeps the mark from being written, and how to take it away.
enum Blocker {
    /// The tmpfs is full: this file took the rest of it.
    Filler(PathBuf),
    /// No tmpfs: a directory sits where the mark file is renamed to.
    InTheWay(PathBuf),
}

impl Blocker {
    /// Fills `tmpfs` up to the last byte.
    fn fill(tmpfs: &Path) -> Blocker {
        let path = tmpfs.join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        let mut written = 0usize;
        let error = loop {
            match file.write(&chunk) {
                Ok(0) => panic!("the tmpfs took no more bytes and gave no error"),
                Ok(n) => written += n,
                Err(error) => break error,
            }
            assert!(written < 1 << 20, "a 64 KiB tmpfs took 1 MiB");
        };
        assert_eq!(
            error.raw_os_error(),
            Some(28),
            "filling the tmpfs ended with {error}, not ENOSPC"
        );
        Blocker::Filler(path)
    }

    /// Puts a directory, not empty, where the mark file is: the mark can be
    /// written to its temporary file but not renamed into place.
    fn in_the_way(mark: &MarkFile) -> Blocker {
        std::fs::remove_file(mark.path()).unwrap();
        std::fs::create_dir(mark.path()).unwrap();
        std::fs::write(mark.path().join("in-the-way"), "").unwrap();
        Blocker::InTheWay(mark.path().to_owned())
    }

    fn remove(self) {
        match self {
            Blocker::Filler(path) => std::fs::remove_file(path).unwrap(),
            Blocker::InTheWay(path) => std::fs::remove_dir_all(path).unwrap(),
        }
    }
}

/// The error code of a 503 answer.
fn refused(answer: &Answer) -> String {
    answer.error(StatusCode::SERVICE_UNAVAILABLE).0
}

/// The state directory's disk fills up: ID requests are refused with
/// `mark_unwritable`, and so is `/readyz`, which tries the write again at
/// each probe and turns ready once the disk has room, before any ID
/// request comes. A ready node's probe writes nothing.
///
/// On a tmpfs the test mounts when it may; otherwise (no CAP_SYS_ADMIN)
/// with a directory in the way of the mark file, which fails the same
/// writes.
#[tokio::test]
async fn a_full_disk_makes_the_node_not_ready_until_it_has_room() {
    let dir = temp_dir("readiness-full");
    let state = dir.path().join("state");
    let tmpfs = Tmpfs::mount(&state);
    if let Err(reason) = &tmpfs {
        eprintln!("no tmpfs ({reason}); blocking the mark's rename instead");
        std::fs::create_dir_all(&state).unwrap();
    }
    let clock = ManualClock::new(T);
    let app = node_on(&state, &clock).await;
    let mark = MarkFile::for_node(&state, Layout::TWITTER, NODE);
    assert_eq!(get(&app, "/v1/id").await.status, StatusCode::OK);
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
    let reserved = mark.read().unwrap().expect("the first ID wrote the mark");

    let blocker = match &tmpfs {
        Ok(tmpfs) => Blocker::fill(&tmpfs.0),
        Err(_) => Blocker::in_the_way(&mark),
    };
    // Past the reserved mark: the next ID needs a write.
    clock.set(reserved + 500);
    let answer = get(&app, "/v1/id").await;
    assert_eq!(refused(&answer), "mark_unwritable", "{}", answer.body);
    if tmpfs.is_ok() {
        assert!(
            answer.body.contains("no space left on device"),
            "{}",
            answer.body
        );
    }
    for _ in 0..2 {
        let ready = get(&app, "/readyz").await;
        assert_eq!(refused(&ready), "mark_unwritable", "{}", ready.body);
    }
    assert_eq!(
        refused(&get(&app, "/v1/ids?count=10").await),
        "mark_unwritable"
    );

    blocker.remove();
    // The probe itself finds the room: no ID request in between.
    let ready = get(&app, "/readyz").await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    let moved = mark.read().unwrap().unwrap();
    assert!(
        moved > reserved + 500,
        "the probe's write covers the clock: {moved}"
    );
    let answer = get(&app, "/v1/id").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);

    // Ready, with the mark behind the clock: probes write nothing (the
    // next ID request will).
    clock.set(moved + 5_000);
    for _ in 0..3 {
        assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
    }
    assert_eq!(mark.read().unwrap(), Some(moved));
    assert_eq!(get(&app, "/v1/id").await.status, StatusCode::OK);
    assert!(mark.read().unwrap().unwrap() > moved + 5_000);
}

/// A clock outside the layout (before its epoch, past its last instant)
/// refuses IDs with `clock_out_of_range`, and `/readyz` says the same, even
/// on a node that never issued an ID.
#[tokio::test]
async fn a_clock_outside_the_layout_is_not_ready() {
    let dir = temp_dir("readiness-range");
    let layout = Layout::TWITTER;
    let clock = ManualClock::new(layout.epoch_ms() - 1);
    let app = node_on(dir.path(), &clock).await;
    assert_eq!(refused(&get(&app, "/v1/id").await), "clock_out_of_range");
    let ready = get(&app, "/readyz").await;
    assert_eq!(refused(&ready), "clock_out_of_range", "{}", ready.body);

    clock.set(T);
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
    assert_eq!(get(&app, "/v1/id").await.status, StatusCode::OK);

    clock.set(layout.last_instant_ms() + 1);
    assert_eq!(refused(&get(&app, "/v1/id").await), "clock_out_of_range");
    assert_eq!(refused(&get(&app, "/readyz").await), "clock_out_of_range");
}

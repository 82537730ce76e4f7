//! Waiting with a deadline: every wait in a test ends, and a wait that
//! runs out fails the test with what it waited for and for how long.
//!
//! The limits are liveness bounds (something that should take a second
//! must not hang the suite), not timing assertions: each is many times
//! what the step needs on a busy machine.
//!
//! - [`wait_until`] polls a check from a thread, [`eventually`] from async
//!   code; both give the check's value once it has one.
//! - [`Deadline`] is the same bound for a loop with its own pace, or one
//!   whose failure must carry more than the default message.
//! - [`within`] awaits a future that must end (a state change, a
//!   release) under the same bound.
//! - [`child_exit`] waits for a child process to exit.

use std::future::Future;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often [`wait_until`] and [`eventually`] ask again.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// A point in time a wait must not pass, and what the wait is for.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_test_support::wait::Deadline;
///
/// let deadline = Deadline::after(Duration::from_secs(60), "the answer");
/// let mut tries = 0;
/// while tries < 3 {
///     deadline.check();
///     tries += 1;
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Deadline {
    /// What is waited for, as the failure names it.
    what: String,
    /// How long the wait may take, as the failure says.
    limit: Duration,
    /// When the wait began.
    started: Instant,
}

impl Deadline {
    /// A deadline `limit` from now for a wait for `what`.
    pub fn after(limit: Duration, what: impl Into<String>) -> Deadline {
        Deadline {
            what: what.into(),
            limit,
            started: Instant::now(),
        }
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        self.started.elapsed() >= self.limit
    }

    /// The time left before the deadline (zero once it has passed).
    pub fn remaining(&self) -> Duration {
        self.limit.saturating_sub(self.started.elapsed())
    }

    /// Panics, saying what was waited for and for how long, if the
    /// deadline has passed.
    pub fn check(&self) {
        self.check_with(String::new);
    }

    /// The same, with `details` (a log, the last value seen) added to the
    /// message; `details` is called only when the deadline has passed.
    pub fn check_with(&self, details: impl FnOnce() -> String) {
        if self.passed() {
            self.fail(&details());
        }
    }

    /// Panics, saying what was waited for, for how long, and `details`
    /// (unless empty).
    pub fn fail(&self, details: &str) -> ! {
        gave_up(&self.what, self.limit, details)
    }
}

/// The failure of every wait that runs out.
fn gave_up(what: &str, limit: Duration, details: &str) -> ! {
    if details.is_empty() {
        panic!("gave up after {limit:?} waiting for {what}");
    }
    panic!("gave up after {limit:?} waiting for {what}:\n{details}");
}

/// Calls `check` until it gives a value, and returns that value; panics,
/// naming `what` and `limit`, if `limit` passes first.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_test_support::wait::wait_until;
///
/// let mut calls = 0;
/// let third = wait_until("the third call", Duration::from_secs(60), || {
///     calls += 1;
///     (calls == 3).then_some(calls)
/// });
/// assert_eq!(third, 3);
/// ```
pub fn wait_until<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Deadline::after(limit, what);
    loop {
        if let Some(value) = check() {
            return value;
        }
        deadline.check();
        std::thread::sleep(POLL_EVERY);
    }
}

/// [`wait_until`] for async code: awaits `check` until it gives a value.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Deadline::after(limit, what);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        deadline.check();
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// Awaits `future` (`what` it brings, for the failure); panics if it has
/// not ended after `limit`.
pub async fn within<T>(what: &str, limit: Duration, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => gave_up(what, limit, ""),
    }
}

/// Waits for `child` (named `name` in the failure) to exit, and returns
/// how it exited; panics if it is still running after `limit`.
pub fn child_exit(child: &mut Child, name: &str, limit: Duration) -> ExitStatus {
    wait_until(&format!("{name} to exit"), limit, || {
        child
            .try_wait()
            .unwrap_or_else(|err| panic!("cannot wait for {name}: {err}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check that never succeeds ends the wait with the promised message.
    #[test]
    fn a_wait_that_runs_out_names_what_and_how_long() {
        let failure = std::panic::catch_unwind(|| {
            wait_until("nothing", Duration::from_millis(30), || None::<()>)
        })
        .expect_err("the wait cannot succeed");
        let message = failure.downcast_ref::<String>().expect("a formatted panic");
        assert_eq!(message, "gave up after 30ms waiting for nothing");
    }

    /// The details of a failed check follow the message.
    #[test]
    fn details_follow_the_message() {
        let deadline = Deadline::after(Duration::ZERO, "a log line");
        let failure = std::panic::catch_unwind(|| deadline.check_with(|| "the log".into()))
            .expect_err("the deadline has passed");
        let message = failure.downcast_ref::<String>().expect("a formatted panic");
        assert_eq!(
            message,
            "gave up after 0ns waiting for a log line:\nthe log"
        );
    }

    /// A deadline that has not passed lets the loop go on.
    #[test]
    fn a_deadline_ahead_does_not_fail() {
        let deadline = Deadline::after(Duration::from_secs(3600), "an hour");
        deadline.check();
        assert!(!deadline.passed());
        assert!(deadline.remaining() > Duration::ZERO);
    }

    /// A future that never ends fails like a wait that runs out.
    #[tokio::test]
    async fn a_future_that_does_not_end_fails() {
        let never = std::future::pending::<()>();
        let within = tokio::spawn(within("a pending future", Duration::from_millis(30), never));
        let failure = within
            .await
            .expect_err("the wait cannot succeed")
            .into_panic();
        let message = failure.downcast_ref::<String>().expect("a formatted panic");
        assert_eq!(message, "gave up after 30ms waiting for a pending future");
    }

    /// A child that exits is waited for, and its status returned.
    #[test]
    fn child_exit_returns_the_status() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("sh runs");
        let status = child_exit(&mut child, "sh", Duration::from_secs(60));
        assert_eq!(status.code(), Some(3));
    }
}

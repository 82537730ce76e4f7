//! What a generator does when the clock goes back.

use std::time::Duration;

use crate::error::{Error, Repr};

/// What the generator does when the clock reads earlier than the last
/// timestamp it used (an NTP step, a VM migration, a manual change).
///
/// - [`Refuse`](ClockPolicy::Refuse) (the default): return an error of
///   kind [`ClockBehind`](crate::ErrorKind::ClockBehind) with both
///   timestamps ([`Error::regression`]), until the clock catches up.
/// - [`Wait`](ClockPolicy::Wait): if the clock is at most `max` behind, wait
///   for it (sleeping, then spinning); past `max`, or if it does not catch up
///   within `max`, refuse.
/// - [`Borrow`](ClockPolicy::Borrow): keep issuing from the last timestamp,
///   as a logical clock, as long as that runs at most `max_ahead` in front of
///   the wall clock; past that, refuse.
///
/// Whatever the policy, IDs stay strictly increasing and are never reused.
/// Running out of sequence numbers within a tick is not a regression: it
/// always waits for the next tick.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::{ClockPolicy, Generator, Layout, ManualClock, Node};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let generator = Generator::builder(Layout::TWITTER, Layout::TWITTER.node(&[1, 2])?)
///     .clock(clock.clone())
///     .policy(ClockPolicy::Borrow { max_ahead: Duration::from_millis(50) })
///     .build()?;
/// let first = generator.next_id()?;
/// clock.advance(-10); // the clock steps back 10 ms
/// assert!(generator.next_id()? > first); // borrowed: still increasing
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ClockPolicy {
    /// Return an error while the clock is behind.
    #[default]
    Refuse,
    /// Wait up to `max` for the clock to catch up, then refuse.
    Wait {
        /// The longest regression waited out.
        max: Duration,
    },
    /// Issue from the last timestamp, at most `max_ahead` in front of the
    /// clock, then refuse.
    Borrow {
        /// How far the logical clock may run ahead of the wall clock.
        max_ahead: Duration,
    },
}

impl ClockPolicy {
    /// The names of the policies, as [`ClockPolicy::from_name`] reads them.
    pub const NAMES: [&'static str; 3] = ["refuse", "wait", "borrow"];

    /// The policy called `name` (`refuse`, `wait` or `borrow`, in any
    /// case), with `bound` as the limit of `wait` and `borrow`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::ClockPolicy;
    ///
    /// let bound = Duration::from_secs(2);
    /// assert_eq!(ClockPolicy::from_name("wait", bound)?, ClockPolicy::Wait { max: bound });
    /// assert_eq!(ClockPolicy::from_name("Refuse", bound)?, ClockPolicy::Refuse);
    /// assert_eq!(
    ///     ClockPolicy::from_name("sometimes", bound).unwrap_err().to_string(),
    ///     "unknown clock policy \"sometimes\" (expected refuse, wait or borrow)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn from_name(name: &str, bound: Duration) -> Result<ClockPolicy, Error> {
        if name.eq_ignore_ascii_case("refuse") {
            Ok(ClockPolicy::Refuse)
        } else if name.eq_ignore_ascii_case("wait") {
            Ok(ClockPolicy::Wait { max: bound })
        } else if name.eq_ignore_ascii_case("borrow") {
            Ok(ClockPolicy::Borrow { max_ahead: bound })
        } else {
            Err(Repr::UnknownClockPolicy {
                name: crate::value::echo(name),
            }
            .into())
        }
    }

    /// The policy's name: `refuse`, `wait` or `borrow`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::ClockPolicy::Refuse.name(), "refuse");
    /// ```
    pub const fn name(&self) -> &'static str {
        match self {
            ClockPolicy::Refuse => "refuse",
            ClockPolicy::Wait { .. } => "wait",
            ClockPolicy::Borrow { .. } => "borrow",
        }
    }

    /// How far behind the clock may be without a refusal: the bound of
    /// `wait` and `borrow`, `None` for `refuse`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::ClockPolicy;
    ///
    /// let policy = ClockPolicy::Borrow { max_ahead: Duration::from_millis(50) };
    /// assert_eq!(policy.bound(), Some(Duration::from_millis(50)));
    /// assert_eq!(ClockPolicy::Refuse.bound(), None);
    /// ```
    pub const fn bound(&self) -> Option<Duration> {
        match self {
            ClockPolicy::Refuse => None,
            ClockPolicy::Wait { max } => Some(*max),
            ClockPolicy::Borrow { max_ahead } => Some(*max_ahead),
        }
    }
}

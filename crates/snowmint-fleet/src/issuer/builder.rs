//! An issuer from settings: where the node comes from, where its state
//! lives, how it issues. `snowmint serve`, `snowmint generate` and
//! embedded programs all start their issuer here, so that the state
//! directory, the node's source, the start-up rule of the mark and the
//! claim's holder are set up one way.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::value::format_duration;
use snowmint::{Clock, ClockPolicy, Layout, SystemClock};

use super::{EmbeddedIssuer, Issuer, IssuerOptions, Refusal};
use crate::{
    CoordinatorConfig, CoordinatorUrl, FleetError, Holder, NodeSource, SettingError, SlotRange,
    create_state_dir, default_state_dir, system_hostname,
};

/// The claim TTL when none is given, as `snowmint serve`'s.
const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// The fleet a coordinator's URL alone joins, as `snowmint serve`'s.
const DEFAULT_FLEET: &str = "default";
/// How long a start waits for the first claim when not told.
const DEFAULT_CLAIM_WAIT: Duration = Duration::from_secs(30);
/// The shortest reservation step: each step is a disk write.
const MIN_MARK_STEP: Duration = Duration::from_millis(10);
/// The longest step and start-up wait accepted.
const DAY: Duration = Duration::from_secs(24 * 3600);

/// The settings of an issuer, and how to start it: [`start`] in an async
/// program, [`start_blocking`] in one without a runtime (it runs the
/// issuer's own runtime thread).
///
/// A node source is required: [`node`], [`hostname_ordinal`] or
/// [`coordinator`]. Everything else has the defaults of `snowmint serve`:
///
/// | setting | default |
/// |---|---|
/// | [`state_dir`](IssuerBuilder::state_dir) | [`default_state_dir`] (`$XDG_STATE_HOME/snowmint`, else `~/.local/state/snowmint`) |
/// | [`layout`](IssuerBuilder::layout) | [`Layout::TWITTER`] |
/// | [`clock_policy`](IssuerBuilder::clock_policy) | [`ClockPolicy::Refuse`] |
/// | [`slots`](IssuerBuilder::slots) | every slot of the layout |
/// | [`claim_ttl`](IssuerBuilder::claim_ttl) | 10 s |
/// | [`mark_step`](IssuerBuilder::mark_step) | 1 s |
/// | [`mark_wait_max`](IssuerBuilder::mark_wait_max) | 2 s |
/// | [`wait_for_claim`](IssuerBuilder::wait_for_claim) | 30 s |
///
/// Nothing is checked until the start, whose error names the value and
/// what is accepted.
///
/// [`start`]: IssuerBuilder::start
/// [`start_blocking`]: IssuerBuilder::start_blocking
/// [`node`]: IssuerBuilder::node
/// [`hostname_ordinal`]: IssuerBuilder::hostname_ordinal
/// [`coordinator`]: IssuerBuilder::coordinator
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::{ClockPolicy, Layout};
/// use snowmint_fleet::EmbeddedIssuer;
///
/// let dir = tempfile::tempdir()?;
/// let issuer = EmbeddedIssuer::builder()
///     .node(3, 7)
///     .state_dir(dir.path())
///     .layout(Layout::DISCORD)
///     .clock_policy(ClockPolicy::Wait { max: Duration::from_millis(500) })
///     .start_blocking()?;
/// let id = issuer.next_id()?;
/// // Discord's node is a worker and a process: 3 and 7.
/// assert_eq!(Layout::DISCORD.decode(id)?.get("process"), Some(7));
/// issuer.shutdown();
///
/// // Checked at the start: the error names the value and the range.
/// let err = EmbeddedIssuer::builder().node(40, 0).state_dir(dir.path()).start_blocking().unwrap_err();
/// assert_eq!(err.to_string(), "datacenter 40 is out of range (0..=31)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct IssuerBuilder {
    source: Option<SourceSetting>,
    slots: Option<RangeInclusive<u64>>,
    slots_per_node: u64,
    claim_ttl: Option<Duration>,
    state_dir: Option<PathBuf>,
    layout: Layout,
    clock_policy: ClockPolicy,
    clock: Arc<dyn Clock>,
    mark_step: Duration,
    mark_wait_max: Duration,
    claim_wait: Duration,
    lock_wait: Duration,
    holder: Option<String>,
}

/// Where the node comes from, as given (checked at the start).
// Made once per issuer: a coordinator's settings (with their layout) are
// large, and boxing them would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum SourceSetting {
    Node(u64, u64),
    Hostname(Option<String>),
    Coordinator { url: String, fleet: String },
    Given(NodeSource),
}

impl std::fmt::Debug for IssuerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The coordinator's URL may carry a password: only its kind shows.
        let source = match &self.source {
            None => "none".to_owned(),
            Some(SourceSetting::Node(d, m)) => format!("datacenter {d} machine {m}"),
            Some(SourceSetting::Hostname(name)) => format!("hostname {name:?}"),
            Some(SourceSetting::Coordinator { url, fleet }) => format!(
                "coordinator {} (fleet {fleet:?})",
                url.split("://").next().unwrap_or("?")
            ),
            Some(SourceSetting::Given(NodeSource::Coordinator { url, config })) => {
                format!("coordinator {} (fleet {:?})", url.kind(), config.fleet())
            }
            Some(SourceSetting::Given(other)) => format!("{other:?}"),
        };
        f.debug_struct("IssuerBuilder")
            .field("source", &source)
            .field("slots", &self.slots)
            .field("slots_per_node", &self.slots_per_node)
            .field("claim_ttl", &self.claim_ttl)
            .field("state_dir", &self.state_dir)
            .field("layout", &self.layout)
            .field("clock_policy", &self.clock_policy)
            .field("mark_step", &self.mark_step)
            .field("mark_wait_max", &self.mark_wait_max)
            .field("claim_wait", &self.claim_wait)
            .field("lock_wait", &self.lock_wait)
            .finish_non_exhaustive()
    }
}

impl Default for IssuerBuilder {
    fn default() -> Self {
        IssuerBuilder::new()
    }
}

impl IssuerBuilder {
    /// Settings with every default and no node source yet.
    pub fn new() -> IssuerBuilder {
        IssuerBuilder {
            source: None,
            slots: None,
            slots_per_node: 1,
            claim_ttl: None,
            state_dir: None,
            layout: Layout::TWITTER,
            clock_policy: ClockPolicy::Refuse,
            clock: Arc::new(SystemClock),
            mark_step: Duration::from_secs(1),
            mark_wait_max: Duration::from_secs(2),
            claim_wait: DEFAULT_CLAIM_WAIT,
            lock_wait: Duration::ZERO,
            holder: None,
        }
    }

    /// Issues as the node (`datacenter`, `machine`), given explicitly:
    /// no other process may issue as it (the host lock keeps a second
    /// process on this host and state directory out; other hosts are the
    /// operator's to keep apart, or use [`coordinator`](Self::coordinator)).
    ///
    /// In a layout other than Twitter's, `machine` is the lowest node
    /// field and `datacenter` the node fields above it taken together (see
    /// [`Layout::node_from_pair`](snowmint::Layout::node_from_pair)): for
    /// Sonyflake, `.node(0, machine)`.
    pub fn node(mut self, datacenter: u64, machine: u64) -> Self {
        self.source = Some(SourceSetting::Node(datacenter, machine));
        self
    }

    /// Issues as the node whose slot is the ordinal of this machine's
    /// hostname (`ids-12` -> slot 12), as a Kubernetes StatefulSet names
    /// its pods.
    pub fn hostname_ordinal(mut self) -> Self {
        self.source = Some(SourceSetting::Hostname(None));
        self
    }

    /// Issues as the node whose slot is the ordinal of `hostname`.
    pub fn hostname(mut self, hostname: impl Into<String>) -> Self {
        self.source = Some(SourceSetting::Hostname(Some(hostname.into())));
        self
    }

    /// Claims a slot of the fleet `fleet` from the coordinator at `url`
    /// (`etcd://HOST:PORT[,...]`, `zk://HOST:PORT[,...][/CHROOT]` or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=...]`), keeps it
    /// alive, and issues only while it holds it (fencing).
    pub fn coordinator(mut self, url: impl Into<String>, fleet: impl Into<String>) -> Self {
        self.source = Some(SourceSetting::Coordinator {
            url: url.into(),
            fleet: fleet.into(),
        });
        self
    }

    /// Takes the node's source as already read and checked (how `snowmint
    /// serve` passes its configuration); [`slots`](Self::slots) and
    /// [`claim_ttl`](Self::claim_ttl) do not apply to it.
    pub fn source(mut self, source: NodeSource) -> Self {
        self.source = Some(SourceSetting::Given(source));
        self
    }

    /// The slots a coordinated node may claim (default: all the layout
    /// has).
    pub fn slots(mut self, slots: RangeInclusive<u64>) -> Self {
        self.slots = Some(slots);
        self
    }

    /// How many slots the node holds at once (a power of two, default 1),
    /// for K times one slot's rate: within each tick the node issues from
    /// its slots in ascending order. With [`node`](Self::node), the slots
    /// from that node's on (`slot .. slot + count`), each locked on this
    /// host as a node of its own would be, so that a range overlapping
    /// another running node's is refused; with
    /// [`coordinator`](Self::coordinator), an aligned block of `count`
    /// free slots of [`slots`](Self::slots), claimed, kept and released as
    /// one.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    /// use snowmint_fleet::EmbeddedIssuer;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let wide = EmbeddedIssuer::builder().node(0, 4).slots_per_node(4).state_dir(dir.path()).start_blocking()?;
    /// // Slot 6 is one of the four: another node given it is refused.
    /// let err = EmbeddedIssuer::builder().node(0, 6).state_dir(dir.path()).start_blocking().unwrap_err();
    /// assert!(err.to_string().contains("datacenter 0 machine 6"), "{err}");
    /// wide.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slots_per_node(mut self, count: u64) -> Self {
        self.slots_per_node = count;
        self
    }

    /// How long a coordinated claim outlives the node's last word
    /// (1 s..=1 h, default 10 s): a crashed node's slot frees after it,
    /// and a node cut off stops issuing before it.
    pub fn claim_ttl(mut self, ttl: Duration) -> Self {
        self.claim_ttl = Some(ttl);
        self
    }

    /// Where the node's high-water mark and lock live (created if
    /// missing). Share it with every process of the host that issues IDs
    /// (`snowmint serve`, `snowmint generate`, other embedded issuers), so
    /// that their locks meet.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The layout IDs are issued in.
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// What to do when the clock goes back (default: refuse until it
    /// catches up).
    pub fn clock_policy(mut self, policy: ClockPolicy) -> Self {
        self.clock_policy = policy;
        self
    }

    /// Where time comes from (default: the system clock). Tests drive a
    /// clock of their own.
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The same, shared.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How far ahead of the clock the high-water mark is reserved at each
    /// write (10 ms..=24 h, default 1 s, at most
    /// [`mark_wait_max`](Self::mark_wait_max)).
    pub fn mark_step(mut self, step: Duration) -> Self {
        self.mark_step = step;
        self
    }

    /// The longest gap to a recorded mark ahead of the clock that a start
    /// waits out (a restart right after the last ID); a longer one (a
    /// clock set back) is refused (default 2 s).
    pub fn mark_wait_max(mut self, wait: Duration) -> Self {
        self.mark_wait_max = wait;
        self
    }

    /// How long a start waits until IDs can be issued (a coordinated node
    /// claiming its slot); past it, the start fails with the reason.
    /// `Duration::ZERO` returns at once, and IDs are refused until the
    /// node holds a slot (default 30 s).
    pub fn wait_for_claim(mut self, wait: Duration) -> Self {
        self.claim_wait = wait;
        self
    }

    /// How long a start waits for the node's lock while another process
    /// on this host holds it (default: not at all, the start is refused
    /// at once with [`FleetError::NodeLocked`], naming the holder). For
    /// short-lived processes that take turns on one node, such as
    /// `snowmint generate` run many times at once.
    pub fn lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// What a coordinated node writes into the slot key it claims, for an
    /// operator to find the process (default: host, pid, `listen=embedded`
    /// and the start time, as [`Holder`]).
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// The state directory the start will use.
    pub fn state_dir_or_default(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(|| default_state_dir(|name| std::env::var(name).ok()))
    }

    /// Starts the issuer on the current Tokio runtime and returns once IDs
    /// can be issued (see [`wait_for_claim`](Self::wait_for_claim)).
    ///
    /// # Errors
    ///
    /// A setting that cannot be used (the message names the value and
    /// what is accepted); the state directory; another process issuing as
    /// the node ([`FleetError::NodeLocked`], naming its pid and lock
    /// file); a mark further ahead of the clock than
    /// [`mark_wait_max`](Self::mark_wait_max) ([`FleetError::MarkAhead`]);
    /// no claim within the wait ([`FleetError::Fenced`], with the reason).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime: use [`start_blocking`](Self::start_blocking)
    /// there.
    pub async fn start(self) -> Result<EmbeddedIssuer, FleetError> {
        let claim_wait = self.claim_wait;
        let issuer = self.start_primed(true).await?;
        if let Err(error) = wait_until_ready(&issuer, claim_wait).await {
            issuer.release().await;
            return Err(error);
        }
        Ok(EmbeddedIssuer::on_callers_runtime(issuer))
    }

    /// Starts the issuer on a runtime thread of its own (named
    /// `snowmint-issuer`) and returns once IDs can be issued; for programs
    /// without a runtime, and for those that want the issuer's claim kept
    /// whatever their own runtime does.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start); also when the thread or its runtime
    /// cannot be made ([`FleetError::Io`]).
    pub fn start_blocking(self) -> Result<EmbeddedIssuer, FleetError> {
        EmbeddedIssuer::start_on_own_thread(self)
    }

    /// Starts an [`Issuer`] (the asynchronous one, as `snowmint serve`
    /// runs it) on the current Tokio runtime: the state directory, the
    /// slot source, the node's lock, and the start-up rule of the mark
    /// (a mark slightly ahead of the clock is waited out, one too far
    /// ahead refused). Does not wait for a claim, and reserves each
    /// claim's mark at its first ID.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), but for the wait for a claim.
    pub async fn start_issuer(self) -> Result<Issuer, FleetError> {
        self.start_primed(false).await
    }

    pub(super) async fn start_primed(self, prime: bool) -> Result<Issuer, FleetError> {
        let state_dir = self.state_dir_or_default();
        let lock_wait = self.lock_wait;
        let (source, options, mark_wait_max) = self.resolve(state_dir)?;
        create_state_dir(&options.state_dir)?;
        let holder = Some(source.1);
        let slots = source
            .0
            .slot_source(options.layout, &options.state_dir, holder)?;
        let issuer = Issuer::start_with(slots, options, prime, lock_wait).await?;
        if let Err(error) = issuer.wait_out_mark(mark_wait_max).await {
            issuer.release().await;
            return Err(error);
        }
        Ok(issuer)
    }

    /// Checks the settings.
    #[allow(clippy::type_complexity)]
    fn resolve(
        self,
        state_dir: PathBuf,
    ) -> Result<((NodeSource, String), IssuerOptions, Duration), FleetError> {
        let layout = self.layout;
        let mark_step =
            snowmint::value::check_duration("mark_step", self.mark_step, MIN_MARK_STEP..=DAY)?;
        let mark_wait_max = snowmint::value::check_duration(
            "mark_wait_max",
            self.mark_wait_max,
            Duration::ZERO..=DAY,
        )?;
        if mark_step > mark_wait_max {
            return Err(SettingError::MarkStepAboveWait {
                mark_step,
                mark_wait_max,
            }
            .into());
        }
        let coordinated = matches!(self.source, Some(SourceSetting::Coordinator { .. }));
        if !coordinated && (self.slots.is_some() || self.claim_ttl.is_some()) {
            return Err(SettingError::ClaimSettingsWithoutCoordinator.into());
        }
        let source = match self.source {
            None => {
                return Err(SettingError::NoNode.into());
            }
            Some(SourceSetting::Node(datacenter, machine)) => {
                let node = layout.node_from_pair(datacenter, machine)?;
                match self.slots_per_node {
                    1 => NodeSource::Static(node),
                    slots => NodeSource::StaticSlots { node, slots },
                }
            }
            Some(SourceSetting::Hostname(_) | SourceSetting::Given(_))
                if self.slots_per_node != 1 =>
            {
                return Err(SettingError::SlotsPerNodeWithoutBlock.into());
            }
            Some(SourceSetting::Hostname(name)) => NodeSource::Hostname(name),
            Some(SourceSetting::Coordinator { url, fleet }) => {
                let url: CoordinatorUrl = url.parse()?;
                let fleet = if fleet.is_empty() {
                    DEFAULT_FLEET.to_owned()
                } else {
                    fleet
                };
                let slots = match self.slots {
                    Some(range) => SlotRange::new(*range.start(), *range.end())?,
                    None => SlotRange::all(layout),
                };
                let ttl = self.claim_ttl.unwrap_or(DEFAULT_TTL);
                let config = CoordinatorConfig::new(&fleet, slots, ttl, String::new(), layout)?
                    .with_slots_per_node(self.slots_per_node)?;
                NodeSource::Coordinator { url, config }
            }
            Some(SourceSetting::Given(source)) => source,
        };
        let holder = self.holder.unwrap_or_else(|| default_holder().to_string());
        let options = IssuerOptions {
            layout,
            clock_policy: self.clock_policy,
            clock: self.clock,
            state_dir,
            mark_step,
        };
        Ok(((source, holder), options, mark_wait_max))
    }

    /// How long a start waits for the first claim.
    pub(super) fn claim_wait(&self) -> Duration {
        self.claim_wait
    }
}

/// Who an embedded node is, as written into its slot key.
fn default_holder() -> Holder {
    Holder {
        host: system_hostname().unwrap_or_else(|_| "unknown".to_owned()),
        pid: std::process::id(),
        listen: "embedded".to_owned(),
        grpc: None,
        started_ms: SystemClock.now_ms(),
    }
}

/// Waits until `issuer` holds a claim it can issue under, at most `wait`;
/// then the reason it does not. A clock behind by less than what is left
/// of the wait is waited out: a slot taken over from a holder whose mark
/// ran ahead of the clock (by up to its mark step) is ready once the
/// clock passes that mark, and its first ID would be refused before.
/// A clock further behind (or outside the layout) is no reason to wait:
/// IDs are refused or waited for by the clock policy, with a retry-after.
pub(super) async fn wait_until_ready(issuer: &Issuer, wait: Duration) -> Result<(), FleetError> {
    let until = Instant::now() + wait;
    let mut state = issuer.source().state();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let refusal = match issuer.readiness().await {
            Err(refusal @ Refusal::ClockBehind { .. }) if refusal.retry_after() < left => {
                tokio::time::sleep(refusal.retry_after()).await;
                continue;
            }
            Ok(()) | Err(Refusal::ClockBehind { .. } | Refusal::ClockOutOfRange { .. }) => {
                return Ok(());
            }
            Err(refusal) => refusal,
        };
        if left.is_zero() {
            if wait.is_zero() {
                return Ok(());
            }
            return Err(FleetError::Fenced {
                reason: format!(
                    "no ID could be issued within {} of the start: {refusal}",
                    format_duration(wait)
                ),
            });
        }
        // A claim comes as a new state; a generator set up, a lock let go
        // or the clock catching up do not, so look again now and then.
        let _ = tokio::time::timeout(left.min(Duration::from_millis(50)), state.changed()).await;
    }
}

//! [`Client`]: IDs from a fleet, through a prefetch buffer with bounded
//! staleness, failing over across nodes.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use snowmint::{Clock, Layout, SnowflakeId};
use tokio::task::AbortHandle;
use tonic::{Code, Request, Response, Status};

use crate::builder::{ClientBuilder, MAX_BATCH};
use crate::nodes::{Connect, Nodes, Pick, Stub};
use crate::proto::{GetNodeRequest, NextIdsRequest};
use crate::{Error, Stats};

/// How many failed attempts an [`Error::Unavailable`] lists.
const ATTEMPTS_SHOWN: usize = 6;

/// The settings a [`ClientBuilder`] collects.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) max_age: Duration,
    pub(crate) batch: u32,
    pub(crate) call_timeout: Duration,
    pub(crate) deadline: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) layout: Option<Layout>,
    pub(crate) clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("max_age", &self.max_age)
            .field("batch", &self.batch)
            .field("call_timeout", &self.call_timeout)
            .field("deadline", &self.deadline)
            .field("max_backoff", &self.max_backoff)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

/// A client of a snowmint fleet's gRPC API. Cheap to clone; clones share
/// the buffer, the nodes and the counters.
///
/// - [`next_id`](Client::next_id) and [`next_ids`](Client::next_ids) take
///   IDs from a local buffer, refilled in the background from a node
///   before it runs dry: a current batch and a spare one (a double buffer).
/// - No ID handed out is older than `max_age` (its timestamp against this
///   machine's clock, at the moment it is handed out); older ones are
///   dropped, never reused. With `max_age` zero every call is a round
///   trip.
/// - A node that fails, refuses (fenced, clock behind) or does not answer
///   within the per-call timeout is skipped, with backoff, and the call
///   goes to the next; the caller sees an error only when no node serves
///   within the call's deadline.
/// - IDs are unique across nodes (each holds its own slot) and strictly
///   increasing from one node, but **not ordered across nodes**: after a
///   failover, or between batches of different nodes, an ID may be smaller
///   than one handed out before it.
#[derive(Debug, Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

/// What clones of a client share.
#[derive(Debug)]
pub(crate) struct Shared {
    settings: Settings,
    nodes: Nodes,
    /// The fleet's layout, given or learned from the first node.
    layout: OnceLock<Layout>,
    buffer: Mutex<Buffer>,
    /// Told when a refill ends, so that callers waiting for it look again.
    refilled: tokio::sync::Notify,
    counters: Counters,
    /// Background tasks (discovery), stopped with the last clone.
    tasks: Mutex<Vec<AbortHandle>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        for task in self
            .tasks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    buffer_hits: AtomicU64,
    refills: AtomicU64,
    stale_dropped: AtomicU64,
    failovers: AtomicU64,
    round_trips: AtomicU64,
}

/// The double buffer: the batch being handed out and the one that waits.
#[derive(Debug, Default)]
struct Buffer {
    current: Vec<u64>,
    /// The next ID of `current` to hand out.
    position: usize,
    spare: Option<Vec<u64>>,
    /// Whether a refill is under way (one at a time).
    refilling: bool,
}

impl Buffer {
    /// Moves up to `want` fresh IDs into `out`: timestamp at or after
    /// `oldest_ms`. Stale ones met on the way are dropped; returns
    /// (taken, dropped).
    fn take(
        &mut self,
        out: &mut Vec<u64>,
        want: usize,
        oldest_ms: i64,
        layout: &Layout,
    ) -> (usize, u64) {
        let (mut taken, mut dropped) = (0, 0u64);
        loop {
            let rest = &self.current[self.position..];
            if !rest.is_empty() {
                // A batch is strictly increasing, so its timestamps never
                // go down: the stale IDs are a prefix.
                let stale = rest.partition_point(|&id| timestamp_ms(layout, id) < oldest_ms);
                dropped += stale as u64;
                self.position += stale;
                let rest = &self.current[self.position..];
                let n = rest.len().min(want - taken);
                out.extend_from_slice(&rest[..n]);
                self.position += n;
                taken += n;
                if taken == want {
                    return (taken, dropped);
                }
            }
            match self.spare.take() {
                Some(spare) => {
                    self.current = spare;
                    self.position = 0;
                }
                None => return (taken, dropped),
            }
        }
    }

    /// One fresh ID, if the buffer holds one; stale ones met on the way
    /// are dropped and counted in the second value.
    fn take_one(&mut self, oldest_ms: i64, layout: &Layout) -> (Option<u64>, u64) {
        let mut dropped = 0;
        loop {
            while let Some(&id) = self.current.get(self.position) {
                self.position += 1;
                if timestamp_ms(layout, id) >= oldest_ms {
                    return (Some(id), dropped);
                }
                dropped += 1;
                // The rest of a stale batch is mostly stale too: drop it
                // in one go rather than one ID at a time.
                let rest = &self.current[self.position..];
                let stale = rest.partition_point(|&id| timestamp_ms(layout, id) < oldest_ms);
                dropped += stale as u64;
                self.position += stale;
            }
            match self.spare.take() {
                Some(spare) => {
                    self.current = spare;
                    self.position = 0;
                }
                None => return (None, dropped),
            }
        }
    }

    fn remaining(&self) -> usize {
        self.current.len() - self.position + self.spare.as_ref().map_or(0, Vec::len)
    }

    /// Puts a refilled batch where it belongs. With both places taken (a
    /// hedged fetch and the refill it hedged both came back), the batch is
    /// dropped: its IDs are never handed out.
    fn put(&mut self, ids: Vec<u64>) {
        if self.position >= self.current.len() {
            self.current = ids;
            self.position = 0;
        } else if self.spare.is_none() {
            self.spare = Some(ids);
        }
    }
}

/// The timestamp of `id`; IDs above the layout's largest (which no node
/// sends) count as infinitely old, so that they are dropped.
fn timestamp_ms(layout: &Layout, id: u64) -> i64 {
    match layout.check_id(SnowflakeId::from_u64(id)) {
        Ok(id) => layout.timestamp_ms(id),
        Err(_) => i64::MIN,
    }
}

impl Client {
    /// A builder: give it [`endpoints`](ClientBuilder::endpoints) or
    /// [`discover`](ClientBuilder::discover).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// # let node = snowmint_test_support::in_process::grpc::GrpcNode::start(
    /// #     snowmint::Node::from_slot(34),
    /// #     std::sync::Arc::new(snowmint::SystemClock),
    /// # )
    /// # .await;
    /// # let endpoint = node.endpoint(); // a node's --grpc-listen, as http://HOST:PORT
    /// use snowmint_client::Client;
    ///
    /// let client = Client::builder().endpoints([endpoint]).build().await?;
    /// let (a, b) = (client.next_id().await?, client.next_id().await?);
    /// assert!(a < b, "one node's IDs increase");
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    pub(crate) fn new(
        settings: Settings,
        endpoints: &[String],
        how: Connect,
    ) -> Result<Client, Error> {
        let nodes = Nodes::new(endpoints, settings.call_timeout, how)?;
        let layout = OnceLock::new();
        if let Some(given) = settings.layout {
            let _ = layout.set(given);
        }
        Ok(Client {
            shared: Arc::new(Shared {
                settings,
                nodes,
                layout,
                buffer: Mutex::new(Buffer::default()),
                refilled: tokio::sync::Notify::new(),
                counters: Counters::default(),
                tasks: Mutex::new(Vec::new()),
            }),
        })
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn set_discovered(&self, fixed: &[String], found: &[String]) {
        self.shared.set_discovered(fixed, found);
    }

    pub(crate) fn hold_task(&self, task: AbortHandle) {
        self.shared
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(task);
    }

    /// One new ID: from the buffer when it holds a fresh one, else from a
    /// node.
    ///
    /// # Errors
    ///
    /// [`Error::Unavailable`] when no node served within the deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// # let node = snowmint_test_support::in_process::grpc::GrpcNode::start(
    /// #     snowmint::Node::from_slot(34),
    /// #     std::sync::Arc::new(snowmint::SystemClock),
    /// # )
    /// # .await;
    /// # let endpoint = node.endpoint(); // a node's --grpc-listen, as http://HOST:PORT
    /// use snowmint::{Layout, SnowflakeId};
    /// use snowmint_client::Client;
    /// use std::time::Duration;
    ///
    /// let client = Client::builder()
    ///     .endpoints([endpoint])
    ///     .max_age(Duration::from_secs(60))
    ///     .build()
    ///     .await?;
    /// let id = SnowflakeId::from_u64(client.next_id().await?);
    /// let parts = Layout::TWITTER.decode(id).expect("a Twitter-layout ID");
    /// assert_eq!(parts.get("machine"), Some(2));
    /// // The first call filled the buffer; the next ones come from it.
    /// client.next_id().await?;
    /// assert_eq!(client.stats().round_trips, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn next_id(&self) -> Result<u64, Error> {
        // The common case, from the buffer, without the machinery of a
        // batch; the slow path is boxed so that this future stays small.
        if let Some(id) = self.shared.take_one() {
            return Ok(id);
        }
        let ids = Box::pin(self.next_ids(1)).await?;
        Ok(ids[0])
    }

    /// `n` new IDs (any `n` from 1; more than 4096 take several calls).
    /// IDs from one node come in increasing order; a result that spans a
    /// failover or two batches may not be sorted.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `n = 0`; [`Error::Unavailable`] when
    /// no node served within the deadline (IDs taken before are dropped,
    /// not handed out later).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// # let node = snowmint_test_support::in_process::grpc::GrpcNode::start(
    /// #     snowmint::Node::from_slot(34),
    /// #     std::sync::Arc::new(snowmint::SystemClock),
    /// # )
    /// # .await;
    /// # let endpoint = node.endpoint(); // a node's --grpc-listen, as http://HOST:PORT
    /// use snowmint_client::{Client, Error};
    ///
    /// let client = Client::builder().endpoints([endpoint]).build().await?;
    /// let ids = client.next_ids(10_000).await?;
    /// let distinct: std::collections::HashSet<u64> = ids.iter().copied().collect();
    /// assert_eq!(distinct.len(), 10_000);
    /// assert!(matches!(client.next_ids(0).await, Err(Error::InvalidArgument(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn next_ids(&self, n: usize) -> Result<Vec<u64>, Error> {
        if n == 0 {
            return Err(Error::InvalidArgument(
                "n 0 is out of range (at least 1)".to_owned(),
            ));
        }
        let shared = &self.shared;
        let deadline = Instant::now() + shared.settings.deadline;
        let mut out = Vec::with_capacity(n);
        if shared.settings.max_age.is_zero() {
            while out.len() < n {
                let want = (n - out.len()).min(MAX_BATCH as usize) as u32;
                out.extend(shared.fetch(want, deadline).await?);
            }
            return Ok(out);
        }
        let layout = shared.layout(deadline).await?;
        let max_age_ms = i64::try_from(shared.settings.max_age.as_millis()).unwrap_or(i64::MAX);
        // Whether this call already fetched beside a refill that was slow
        // (a node that does not answer costs the caller at most this).
        let mut hedged = false;
        loop {
            let wait = {
                let mut buffer = shared.buffer();
                let oldest_ms = shared.settings.clock.now_ms().saturating_sub(max_age_ms);
                let want = n - out.len();
                let (taken, dropped) = buffer.take(&mut out, want, oldest_ms, &layout);
                shared.count(&shared.counters.buffer_hits, taken as u64);
                shared.count(&shared.counters.stale_dropped, dropped);
                if out.len() == n {
                    shared.refill_soon(&mut buffer);
                    return Ok(out);
                }
                if buffer.refilling {
                    // Made now, so that the end of that refill wakes it.
                    Some(shared.refilled.notified())
                } else {
                    buffer.refilling = true;
                    None
                }
            };
            let own_refill = match wait {
                Some(refilled) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    // The refill under way may sit on a node that stopped
                    // answering: after a quarter of the per-call timeout,
                    // this call asks the next node itself (once).
                    let patience = if hedged {
                        left
                    } else {
                        left.min(shared.settings.call_timeout / 4)
                    };
                    if tokio::time::timeout(patience, refilled).await.is_ok() {
                        continue;
                    }
                    if hedged || patience == left {
                        return Err(Error::Unavailable {
                            deadline: shared.settings.deadline,
                            attempts: vec!["the buffer's refill did not finish".to_owned()],
                        });
                    }
                    hedged = true;
                    false
                }
                None => true,
            };
            let want = (n - out.len()).clamp(shared.settings.batch as usize, MAX_BATCH as usize);
            let fetched = shared.fetch(want as u32, deadline).await;
            let mut buffer = shared.buffer();
            if own_refill {
                buffer.refilling = false;
            }
            shared.refilled.notify_waiters();
            let ids = fetched?;
            shared.count(&shared.counters.refills, 1);
            buffer.put(ids);
        }
    }

    /// The counters so far.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// # let node = snowmint_test_support::in_process::grpc::GrpcNode::start(
    /// #     snowmint::Node::from_slot(34),
    /// #     std::sync::Arc::new(snowmint::SystemClock),
    /// # )
    /// # .await;
    /// # let endpoint = node.endpoint(); // a node's --grpc-listen, as http://HOST:PORT
    /// use snowmint_client::Client;
    /// use std::time::Duration;
    ///
    /// // No buffer: every call is a round trip.
    /// let client = Client::builder()
    ///     .endpoints([endpoint])
    ///     .max_age(Duration::ZERO)
    ///     .build()
    ///     .await?;
    /// client.next_id().await?;
    /// client.next_id().await?;
    /// let stats = client.stats();
    /// assert_eq!((stats.round_trips, stats.buffer_hits), (2, 0));
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        Stats {
            buffer_hits: read(&c.buffer_hits),
            refills: read(&c.refills),
            stale_dropped: read(&c.stale_dropped),
            failovers: read(&c.failovers),
            round_trips: read(&c.round_trips),
        }
    }

    /// The gRPC endpoints the client knows now (given and discovered).
    pub fn endpoints(&self) -> Vec<String> {
        self.shared.nodes.endpoints()
    }

    /// IDs in the buffer now, fresh or not.
    pub fn buffered(&self) -> usize {
        self.shared.buffer().remaining()
    }
}

impl Shared {
    fn buffer(&self) -> MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One fresh ID from the buffer, if it has one (and the layout is
    /// known); starts a refill when the buffer runs low.
    fn take_one(self: &Arc<Self>) -> Option<u64> {
        if self.settings.max_age.is_zero() {
            return None;
        }
        let layout = self.layout.get()?;
        let max_age_ms = i64::try_from(self.settings.max_age.as_millis()).unwrap_or(i64::MAX);
        let mut buffer = self.buffer();
        let oldest_ms = self.settings.clock.now_ms().saturating_sub(max_age_ms);
        let (id, dropped) = buffer.take_one(oldest_ms, layout);
        self.count(&self.counters.stale_dropped, dropped);
        let id = id?;
        self.count(&self.counters.buffer_hits, 1);
        self.refill_soon(&mut buffer);
        Some(id)
    }

    fn count(&self, counter: &AtomicU64, n: u64) {
        if n > 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub(crate) fn set_discovered(&self, fixed: &[String], found: &[String]) {
        let mut all: Vec<String> = fixed.to_vec();
        for endpoint in found {
            if !all.contains(endpoint) {
                all.push(endpoint.clone());
            }
        }
        self.nodes.replace(&all);
    }

    /// Starts a background refill when the buffer is at half a batch or
    /// less, has no spare and none is under way.
    fn refill_soon(self: &Arc<Self>, buffer: &mut Buffer) {
        if buffer.refilling
            || buffer.spare.is_some()
            || buffer.remaining() > (self.settings.batch as usize) / 2
        {
            return;
        }
        buffer.refilling = true;
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            let deadline = Instant::now() + shared.settings.deadline;
            let fetched = shared.fetch(shared.settings.batch, deadline).await;
            let mut buffer = shared.buffer();
            buffer.refilling = false;
            match fetched {
                Ok(ids) => {
                    shared.count(&shared.counters.refills, 1);
                    buffer.put(ids);
                }
                // The next call that finds the buffer empty fetches itself,
                // and says what went wrong if that fails too.
                Err(error) => tracing::debug!(%error, "background refill failed"),
            }
            shared.refilled.notify_waiters();
        });
    }

    /// The fleet's layout: given, learned already, or asked of a node.
    async fn layout(&self, deadline: Instant) -> Result<Layout, Error> {
        if let Some(layout) = self.layout.get() {
            return Ok(*layout);
        }
        let node = self
            .attempt(deadline, |mut client, timeout| async move {
                let mut request = Request::new(GetNodeRequest {});
                request.set_timeout(timeout);
                client.get_node(request).await
            })
            .await?;
        let layout = node
            .spec
            .parse::<Layout>()
            .map_err(|error| Error::Unavailable {
                deadline: self.settings.deadline,
                attempts: vec![format!(
                    "a node's layout {:?} cannot be read: {error}",
                    node.spec
                )],
            })?;
        Ok(*self.layout.get_or_init(|| layout))
    }

    /// `count` IDs (1..=4096) from the first node that serves them.
    async fn fetch(&self, count: u32, deadline: Instant) -> Result<Vec<u64>, Error> {
        let batch = self
            .attempt(deadline, |mut client, timeout| async move {
                let mut request = Request::new(NextIdsRequest { count });
                request.set_timeout(timeout);
                client.next_ids(request).await
            })
            .await?;
        self.count(&self.counters.round_trips, 1);
        Ok(batch.ids)
    }

    /// Runs `call` on nodes in turn until one answers, skipping the ones
    /// that back off, until `deadline`.
    async fn attempt<T, F, Fut>(&self, deadline: Instant, mut call: F) -> Result<T, Error>
    where
        F: FnMut(Stub, Duration) -> Fut,
        Fut: Future<Output = Result<Response<T>, Status>>,
    {
        let mut attempts: Vec<String> = Vec::new();
        let unavailable = |attempts: Vec<String>| Error::Unavailable {
            deadline: self.settings.deadline,
            attempts,
        };
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(unavailable(attempts));
            }
            let node = match self.nodes.pick() {
                Pick::Ask(node) => node,
                Pick::WaitUntil(at) => {
                    tokio::time::sleep_until(at.min(deadline).into()).await;
                    continue;
                }
                Pick::Empty => {
                    // Discovery may find nodes meanwhile.
                    let nap = Duration::from_millis(100);
                    tokio::time::sleep_until((now + nap).min(deadline).into()).await;
                    continue;
                }
            };
            let timeout = self.settings.call_timeout.min(deadline - now);
            node.sent();
            let answer = tokio::time::timeout(timeout, call(node.client.clone(), timeout)).await;
            node.returned();
            let failure = match answer {
                Ok(Ok(response)) => {
                    node.succeeded();
                    return Ok(response.into_inner());
                }
                Ok(Err(status)) if status.code() == Code::InvalidArgument => {
                    return Err(Error::InvalidArgument(status.message().to_owned()));
                }
                Ok(Err(status)) if status.code() == Code::Unauthenticated => {
                    // The node answered: it is not failing, the client's
                    // credentials are.
                    node.succeeded();
                    return Err(Error::Unauthenticated {
                        endpoint: node.endpoint.clone(),
                        message: status.message().to_owned(),
                    });
                }
                Ok(Err(status)) => {
                    let retry_after = status
                        .metadata()
                        .get("retry-after-ms")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok())
                        .map(Duration::from_millis);
                    node.failed(retry_after, self.settings.max_backoff);
                    format!(
                        "{}: {:?}: {}",
                        node.endpoint,
                        status.code(),
                        status.message()
                    )
                }
                Err(_) => {
                    node.failed(None, self.settings.max_backoff);
                    format!(
                        "{}: no answer within {} ms",
                        node.endpoint,
                        timeout.as_millis()
                    )
                }
            };
            tracing::debug!(failure = %failure, "trying the next node");
            self.count(&self.counters.failovers, 1);
            if attempts.len() == ATTEMPTS_SHOWN {
                attempts.remove(0);
            }
            attempts.push(failure);
        }
    }
}

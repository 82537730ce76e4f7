//! The gRPC API in-process, on a real loopback socket: a node whose claim
//! the test switches on and off, for the server's and the client's tests.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, ClockPolicy, Layout, Node};
use snowmint_fleet::{BoxFuture, Claim, FleetError, NodeState, SlotSource};
use snowmint_server::{AppState, Issuer, IssuerOptions};
use tokio::sync::{oneshot, watch};

use crate::temp::{TempDir, temp_dir};

/// A slot source the test switches between a claim and fenced. It claims
/// the slot of `node` in the Twitter layout.
pub struct Switch {
    node: Node,
    state: watch::Sender<NodeState>,
}

impl Switch {
    /// A source holding `node`'s slot (generation 1).
    pub fn new(node: Node) -> Switch {
        let switch = Switch {
            node,
            state: watch::Sender::new(NodeState::Fenced {
                reason: "starting".to_owned(),
            }),
        };
        switch.hold(1);
        switch
    }

    /// Fenced, for `reason`.
    pub fn fence(&self, reason: &str) {
        self.state.send_replace(NodeState::Fenced {
            reason: reason.to_owned(),
        });
    }

    /// Holding the slot again, as claim `generation`.
    pub fn hold(&self, generation: u64) {
        let slot = Layout::TWITTER.slot_of(self.node).expect("a Twitter node");
        self.state.send_replace(NodeState::Active(Claim {
            slot,
            slots: 1,
            node: self.node,
            generation,
            valid_until: None,
            floor_ms: None,
            details: BTreeMap::new(),
        }));
    }
}

impl SlotSource for Switch {
    fn kind(&self) -> &'static str {
        "static"
    }

    fn state(&self) -> watch::Receiver<NodeState> {
        self.state.subscribe()
    }

    fn reserve(&self, _generation: u64, _mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>> {
        Box::pin(async { Ok(()) })
    }

    fn release(&self) -> BoxFuture<'_, ()> {
        Box::pin(async { self.fence("released at shutdown") })
    }
}

/// A node serving only gRPC on a free loopback port, stopped on drop.
pub struct GrpcNode {
    /// Where it listens.
    pub address: SocketAddr,
    /// The state behind it (metrics, issuer).
    pub state: AppState,
    /// Its claim, which the test switches.
    pub source: Arc<Switch>,
    _dir: TempDir,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for GrpcNode {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl GrpcNode {
    /// Node `node` of the Twitter layout on `clock`, with the `refuse`
    /// policy and a state directory of its own.
    pub async fn start(node: Node, clock: Arc<dyn Clock>) -> GrpcNode {
        let dir = temp_dir("grpc");
        let source = Arc::new(Switch::new(node));
        let issuer = Issuer::start(
            Arc::clone(&source) as Arc<dyn SlotSource>,
            IssuerOptions {
                layout: Layout::TWITTER,
                clock_policy: ClockPolicy::Refuse,
                clock,
                state_dir: dir.path().to_owned(),
                mark_step: Duration::from_secs(1),
            },
        )
        .await
        .unwrap();
        let state = AppState::new(issuer);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel();
        // Served as `snowmint serve` serves its gRPC listener, through the
        // one front end and its limits.
        let _serving = state.clone().serve(
            vec![(snowmint_server::Listener::Grpc, listener)],
            async move {
                let _ = stopped.await;
            },
        );
        GrpcNode {
            address,
            state,
            source,
            _dir: dir,
            stop: Some(stop),
        }
    }

    /// `http://ADDR`, what a client connects to.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// A sample of the node's Prometheus text, such as
    /// `snowmint_ids_issued_total` (0 when absent).
    pub fn metric(&self, name: &str) -> f64 {
        let text = self.state.metrics().render(self.state.issuer());
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .map_or(0.0, |value| value.trim().parse().unwrap())
    }
}

//! The namespaces, the switch, the links and the cuts.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::AsFd;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::forward::Forward;

/// The first three bytes of every host's address: hosts are
/// `10.77.0.1`, `10.77.0.2`, ... (each network is a world of its own, so
/// two networks may use the same addresses).
pub const SUBNET_PREFIX: [u8; 3] = [10, 77, 0];

/// What every namespace the harness makes is named after, so that one
/// left by a test process that was killed can be told and removed.
const PREFIX: &str = "smt-";

/// The bridge in the switch's namespace.
const BRIDGE: &str = "br0";

/// The nftables table and chain on the switch that hold the cuts.
const TABLE: &str = "snowmint";
const CHAIN: &str = "cuts";

/// How long a connection into a host may take to be made (a liveness
/// bound: the test's own connections are never cut).
const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// What to do when a command of the harness is missing.
const INSTALL_IP: &str = "apt-get install iproute2";
const INSTALL_NFT: &str = "apt-get install nftables";
/// What to do when the kernel refuses a namespace.
const NEED_ROOT: &str = "the partition harness makes network namespaces, links and nftables rules, which needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run the tests as root (scripts/test and CI do), or in a container started with --privileged";

/// A network of hosts joined by one switch, each host a network namespace
/// of its own. Every namespace goes when the network is dropped: drop the
/// processes placed on its hosts first (declare the network before them).
pub struct Network {
    inner: Inner,
}

/// The network's namespaces and cuts.
struct Inner {
    /// The name every namespace of this network starts with.
    id: String,
    /// The switch's namespace.
    switch: String,
    state: Mutex<State>,
}

/// The hosts and the cuts now.
#[derive(Default)]
struct State {
    /// Every host made: its label, namespace, address and port on the
    /// switch.
    hosts: Vec<HostEntry>,
    /// Directed cuts: packets from the first address to the second are
    /// dropped.
    cuts: BTreeSet<(Ipv4Addr, Ipv4Addr)>,
}

#[derive(Clone)]
struct HostEntry {
    label: String,
    netns: String,
    ip: Ipv4Addr,
    port: String,
}

/// One host of a [`Network`]: a network namespace with loopback and one
/// link to the switch. Cloning it names the same host; it lives as long
/// as its network.
#[derive(Clone)]
pub struct Host {
    entry: Arc<HostEntry>,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.entry.label, self.entry.ip)
    }
}

impl Network {
    /// Makes a network whose namespaces are named after `label` (short:
    /// it names each namespace), with its switch and no host yet.
    ///
    /// Panics, saying how to get it, when a command or a capability the
    /// harness needs is missing.
    pub fn new(label: &str) -> Network {
        check_program("ip", &["-V"], INSTALL_IP);
        check_program("nft", &["--version"], INSTALL_NFT);
        remove_leftovers();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = format!(
            "{PREFIX}{}-{}-{label}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let switch = format!("{id}-switch");
        let made = run("ip", &["netns", "add", &switch]);
        if !made.status.success() {
            panic!(
                "cannot make the network namespace {switch}: {}; {NEED_ROOT}",
                stderr(&made)
            );
        }
        let network = Network {
            inner: Inner {
                id,
                switch: switch.clone(),
                state: Mutex::new(State::default()),
            },
        };
        ip(&["-n", &switch, "link", "set", "lo", "up"]);
        let bridge = run(
            "ip",
            &["-n", &switch, "link", "add", BRIDGE, "type", "bridge"],
        );
        assert!(
            bridge.status.success(),
            "the kernel refused a bridge ({}): the partition harness needs the bridge module (modprobe bridge)",
            stderr(&bridge)
        );
        ip(&["-n", &switch, "link", "set", BRIDGE, "up"]);
        let table = nft(
            &switch,
            &format!(
                "add table bridge {TABLE}\nadd chain bridge {TABLE} {CHAIN} {{ type filter hook forward priority 0; policy accept; }}\n"
            ),
        );
        if let Err(error) = table {
            panic!(
                "nftables refused a bridge table ({error}): the partition harness needs the kernel's nf_tables for bridges (CONFIG_NF_TABLES_BRIDGE; modprobe nf_tables nft_meta_bridge)"
            );
        }
        network
    }

    /// Makes a host named `label` (unique in this network): a namespace
    /// with loopback up and `eth0` linked to the switch, at the next
    /// address of `10.77.0.0/24`.
    pub fn host(&self, label: &str) -> Host {
        let inner = &self.inner;
        let mut state = inner.lock();
        assert!(
            state.hosts.iter().all(|host| host.label != label),
            "the network already has a host {label}"
        );
        let number = state.hosts.len() + 1;
        assert!(number < 255, "a network holds at most 254 hosts");
        let [a, b, c] = SUBNET_PREFIX;
        let entry = HostEntry {
            label: label.to_owned(),
            netns: format!("{}-{label}", inner.id),
            ip: Ipv4Addr::new(a, b, c, number as u8),
            port: format!("p{number}"),
        };
        let ns = entry.netns.as_str();
        let made = run("ip", &["netns", "add", ns]);
        assert!(
            made.status.success(),
            "cannot make the network namespace {ns}: {}; {NEED_ROOT}",
            stderr(&made)
        );
        // Recorded at once, so that a failure below still removes it.
        state.hosts.push(entry.clone());
        let address = format!("{}/24", entry.ip);
        ip(&["-n", ns, "link", "set", "lo", "up"]);
        ip(&[
            "-n",
            ns,
            "link",
            "add",
            "eth0",
            "type",
            "veth",
            "peer",
            "name",
            &entry.port,
            "netns",
            &inner.switch,
        ]);
        ip(&["-n", ns, "addr", "add", &address, "dev", "eth0"]);
        ip(&["-n", ns, "link", "set", "eth0", "up"]);
        ip(&[
            "-n",
            &inner.switch,
            "link",
            "set",
            &entry.port,
            "master",
            BRIDGE,
        ]);
        ip(&["-n", &inner.switch, "link", "set", &entry.port, "up"]);
        Host {
            entry: Arc::new(entry),
        }
    }

    /// Drops every packet `from` sends to `to`; what `to` sends to `from`
    /// still passes.
    pub fn cut(&self, from: &Host, to: &Host) {
        self.change(|cuts| {
            cuts.insert((from.ip(), to.ip()));
        });
    }

    /// Drops every packet between `a` and `b`, both ways.
    pub fn cut_both(&self, a: &Host, b: &Host) {
        self.change(|cuts| {
            cuts.insert((a.ip(), b.ip()));
            cuts.insert((b.ip(), a.ip()));
        });
    }

    /// Cuts `host` off from each of `others`, both ways, at once.
    pub fn isolate(&self, host: &Host, others: &[&Host]) {
        self.change(|cuts| {
            for other in others {
                cuts.insert((host.ip(), other.ip()));
                cuts.insert((other.ip(), host.ip()));
            }
        });
    }

    /// Lets what `from` sends to `to` pass again.
    pub fn heal(&self, from: &Host, to: &Host) {
        self.change(|cuts| {
            cuts.remove(&(from.ip(), to.ip()));
        });
    }

    /// Lets everything between `a` and `b` pass again.
    pub fn heal_both(&self, a: &Host, b: &Host) {
        self.change(|cuts| {
            cuts.remove(&(a.ip(), b.ip()));
            cuts.remove(&(b.ip(), a.ip()));
        });
    }

    /// Removes every cut (links taken down stay down).
    pub fn heal_all(&self) {
        self.change(BTreeSet::clear);
    }

    /// Replaces every cut with `cuts` (each drops what its first host
    /// sends to its second), at once: for a test that keeps several
    /// faults of its own and applies their union.
    pub fn set_cuts(&self, cuts: &[(&Host, &Host)]) {
        self.change(|now| {
            *now = cuts.iter().map(|(from, to)| (from.ip(), to.ip())).collect();
        });
    }

    /// The cuts now, as `from -> to` with the hosts' labels.
    pub fn cuts(&self) -> Vec<String> {
        let state = self.inner.lock();
        let label = |ip: Ipv4Addr| {
            state
                .hosts
                .iter()
                .find(|host| host.ip == ip)
                .map_or_else(|| ip.to_string(), |host| host.label.clone())
        };
        state
            .cuts
            .iter()
            .map(|(from, to)| format!("{} -> {}", label(*from), label(*to)))
            .collect()
    }

    /// Takes `host`'s link down (its `eth0`): nothing reaches it or leaves
    /// it, and its own stack sees the link go.
    pub fn link_down(&self, host: &Host) {
        ip(&["-n", host.netns(), "link", "set", "eth0", "down"]);
    }

    /// Brings `host`'s link up again.
    pub fn link_up(&self, host: &Host) {
        ip(&["-n", host.netns(), "link", "set", "eth0", "up"]);
    }

    /// Applies `change` to the cuts and writes them to the switch in one
    /// nftables transaction, so that no packet sees half of a change.
    fn change(&self, change: impl FnOnce(&mut BTreeSet<(Ipv4Addr, Ipv4Addr)>)) {
        let mut state = self.inner.lock();
        change(&mut state.cuts);
        let mut script = format!("flush chain bridge {TABLE} {CHAIN}\n");
        for (from, to) in &state.cuts {
            script.push_str(&format!(
                "add rule bridge {TABLE} {CHAIN} ip saddr {from} ip daddr {to} drop\n"
            ));
        }
        if let Err(error) = nft(&self.inner.switch, &script) {
            panic!("cannot change the cuts: {error}\n{script}");
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        let inner = &mut self.inner;
        let state = inner.state.get_mut().unwrap_or_else(|e| e.into_inner());
        // A namespace's veth end goes with it, and takes its peer along (a
        // namespace a process still runs in lives on, unnamed, until it
        // ends).
        for host in &state.hosts {
            let _ = run("ip", &["netns", "del", &host.netns]);
        }
        let _ = run("ip", &["netns", "del", &inner.switch]);
    }
}

impl Host {
    /// Its label.
    pub fn label(&self) -> &str {
        &self.entry.label
    }

    /// Its address on the network.
    pub fn ip(&self) -> Ipv4Addr {
        self.entry.ip
    }

    /// Its address with `port`.
    pub fn addr(&self, port: u16) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(self.entry.ip, port))
    }

    /// The name of its network namespace (`ip netns`).
    pub fn netns(&self) -> &str {
        &self.entry.netns
    }

    /// `program` run on this host (`ip netns exec NETNS program`): the
    /// process sees this host's network only. Its pid is the program's
    /// (`ip` replaces itself with it).
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", self.netns(), program]);
        command
    }

    /// [`command`](Self::command), the program run as the user `uid`
    /// with group `gid` (`setpriv`, from util-linux), for servers that
    /// refuse to run as root.
    pub fn command_as(&self, program: &str, uid: u32, gid: u32) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", self.netns(), "setpriv"]);
        command.arg(format!("--reuid={uid}"));
        command.arg(format!("--regid={gid}"));
        command.args(["--clear-groups", "--", program]);
        command
    }

    /// Moves the calling thread into this host's network: every socket it
    /// makes from now on is the host's. For threads of the test's own
    /// that live on the host (clients); never for a runtime's threads.
    pub fn enter(&self) -> std::io::Result<()> {
        let namespace = File::open(format!("/run/netns/{}", self.netns()))?;
        rustix::thread::move_into_link_name_space(
            namespace.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .map_err(std::io::Error::from)
    }

    /// A TCP connection to `addr` made from this host, by a thread that
    /// enters it for that alone; the connection stays the host's.
    pub fn connect(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    self.enter()?;
                    TcpStream::connect_timeout(&addr, CONNECT_LIMIT)
                })
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the connecting thread panicked")))
        })
    }

    /// A loopback port of the test's own namespace that forwards every
    /// connection to `port` on this host, connected from inside the host
    /// (so no cut stands in the way): how the test reads a server it put
    /// on a host.
    pub fn forward(&self, port: u16) -> Forward {
        Forward::start(self.clone(), self.addr(port))
    }
}

/// Runs `program` with `args`, its output captured; panics with how to
/// get it when it cannot be run.
fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {program} {}: {error}", args.join(" ")))
}

/// Runs `ip` with `args`; panics with its error output when it fails.
fn ip(args: &[&str]) {
    let output = run("ip", args);
    assert!(
        output.status.success(),
        "ip {} failed: {}",
        args.join(" "),
        stderr(&output)
    );
}

/// Runs the nftables `script` in the namespace `netns`, in one
/// transaction.
fn nft(netns: &str, script: &str) -> Result<(), String> {
    let mut child = Command::new("ip")
        .args(["netns", "exec", netns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run nft: {error}"))?;
    child
        .stdin
        .take()
        .expect("a piped stdin")
        .write_all(script.as_bytes())
        .map_err(|error| format!("cannot give nft its script: {error}"))?;
    let output = child
        .wait_with_output()
        .map_err(|error| format!("cannot wait for nft: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(stderr(&output))
    }
}

/// Standard error of `output`, trimmed.
fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

/// Panics, saying how to install it, when `program` cannot be run.
fn check_program(program: &str, args: &[&str], install: &str) {
    if let Err(error) = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        panic!("the partition harness needs {program} ({error}); install it with: {install}");
    }
}

/// Removes the namespaces of networks whose test process is gone (killed
/// before it could drop them): named `smt-PID-...` with no process PID.
fn remove_leftovers() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run("ip", &["netns", "del", &name]);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// Listens on `port` of `host` (a thread of the test entered into
    /// it) and answers each connection with its own label.
    fn answer_with_label(host: &Host, port: u16) {
        let host = host.clone();
        let (ready, listening) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            host.enter().unwrap();
            let listener = TcpListener::bind(host.addr(port)).unwrap();
            ready.send(()).unwrap();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let _ = stream.write_all(host.label().as_bytes());
            }
        });
        listening.recv().unwrap();
    }

    /// What `from` reads from `to`'s port, or why not within half a
    /// second.
    fn ask(from: &Host, to: &Host, port: u16) -> Result<String, String> {
        let mut stream = from.connect(to.addr(port)).map_err(|e| e.to_string())?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| e.to_string())?;
        Ok(answer)
    }

    /// Hosts reach each other through the switch; a cut one way stops a
    /// connection from being made either way (the handshake needs both
    /// directions); a heal lets it through; link down cuts a host from
    /// all; the namespaces go with the network.
    #[test]
    fn hosts_reach_each_other_until_cut() {
        let network = Network::new("self-test");
        let (a, b, c) = (network.host("a"), network.host("b"), network.host("c"));
        assert_eq!(a.ip(), Ipv4Addr::new(10, 77, 0, 1));
        for host in [&a, &b, &c] {
            answer_with_label(host, 7000);
        }
        assert_eq!(ask(&a, &b, 7000).as_deref(), Ok("b"));
        assert_eq!(ask(&b, &a, 7000).as_deref(), Ok("a"));

        network.cut(&a, &b);
        assert_eq!(network.cuts(), ["a -> b"]);
        let refused = |from: &Host, to: &Host| {
            // A SYN (or its SYN-ACK) dropped: the connection times out.
            let addr = to.addr(7000);
            std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        from.enter().unwrap();
                        TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_err()
                    })
                    .join()
                    .unwrap()
            })
        };
        assert!(refused(&a, &b), "a reached b through a cut");
        assert!(
            refused(&b, &a),
            "b's SYN-ACK from a came back through a cut"
        );
        assert_eq!(
            ask(&a, &c, 7000).as_deref(),
            Ok("c"),
            "a cut of a -> b only"
        );
        network.heal(&a, &b);
        assert_eq!(ask(&a, &b, 7000).as_deref(), Ok("b"));

        network.isolate(&c, &[&a, &b]);
        assert!(refused(&a, &c) && refused(&c, &b));
        network.heal_all();
        assert!(network.cuts().is_empty());
        assert_eq!(ask(&c, &a, 7000).as_deref(), Ok("a"));

        network.link_down(&b);
        assert!(refused(&a, &b));
        network.link_up(&b);
        crate::wait::wait_until("b's link to come up", Duration::from_secs(10), || {
            ask(&a, &b, 7000).ok()
        });

        // The test reaches a host's port through a forward of its own.
        let forward = b.forward(7000);
        let mut stream = TcpStream::connect(forward.addr()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert_eq!(answer, "b");

        let names = [a.netns().to_owned(), network.inner.switch.clone()];
        drop((a, b, c, forward));
        drop(network);
        for name in names {
            assert!(
                !std::path::Path::new("/run/netns").join(&name).exists(),
                "{name} outlived its network"
            );
        }
    }
}

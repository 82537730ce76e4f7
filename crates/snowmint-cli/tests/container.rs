//! The container image of `deploy/Containerfile`, built and run with
//! podman (Debian's `podman` and `runc`), against a real etcd: two
//! containers on one etcd claim different slots and serve IDs; their
//! health check (the image's own, `snowmint probe /readyz`) reports them
//! healthy; `podman stop` (SIGTERM) releases a claim at once, and a third
//! container takes that slot and issues above its high-water mark. It
//! prints how long each container took from `podman run` to its first ID.
//!
//! No image registry is reached: the base image is made from Debian's
//! packages (`snowmint_test_support::podman`). The image holds the binary
//! under test (the Containerfile takes it from the build context, as
//! docs/deploying.md builds it from a release build). podman runs with
//! `runc` and host networking (the containers reach the test's etcd on
//! loopback).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint::{Layout, SnowflakeId};
use snowmint_test_support::http::Connection;
use snowmint_test_support::net::free_port;
use snowmint_test_support::podman::{BASE, Podman};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::wait::wait_until;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// The image built from the Containerfile.
const IMAGE: &str = "localhost/snowmint-test:latest";

/// A bound on each wait (not a timing assertion).
const LIMIT: Duration = Duration::from_secs(90);

/// Builds the image from deploy/Containerfile, with the binary under test
/// in the build context.
fn build(podman: &Podman) {
    let context = podman.dir().join("context");
    let _ = std::fs::remove_dir_all(&context);
    std::fs::create_dir_all(&context).unwrap();
    std::fs::copy(SNOWMINT, context.join("snowmint")).unwrap();
    let containerfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/Containerfile");
    podman.run(&[
        "build",
        // HEALTHCHECK is kept by the docker format only.
        "--format",
        "docker",
        "--network",
        "host",
        "--build-arg",
        &format!("BASE={BASE}"),
        "-f",
        containerfile.to_str().unwrap(),
        "-t",
        IMAGE,
        context.to_str().unwrap(),
    ]);
}

/// A container, removed (with its volume) when dropped.
struct Container<'a> {
    podman: &'a Podman,
    name: String,
    address: std::net::SocketAddr,
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        let _ = self.podman.output(&["rm", "-f", "-v", &self.name]);
    }
}

impl<'a> Container<'a> {
    /// Runs the image as one node of `fleet` on `etcd`, and returns once
    /// it answers /v1/id with an ID, and how long that took from `podman
    /// run`.
    fn start(podman: &'a Podman, name: &str, etcd: &str, fleet: &str) -> (Container<'a>, Duration) {
        let port = free_port();
        let name = format!("snowmint-test-{name}-{}", std::process::id());
        let _ = podman.output(&["rm", "-f", "-v", &name]);
        let started = Instant::now();
        podman.run(&[
            "run",
            "-d",
            "--network",
            "host",
            "--hostname",
            &name,
            "--name",
            &name,
            "-e",
            &format!("SNOWMINT_LISTEN=127.0.0.1:{port}"),
            "-e",
            &format!("SNOWMINT_COORDINATOR=etcd://{etcd}"),
            "-e",
            &format!("SNOWMINT_FLEET={fleet}"),
            "-e",
            "SNOWMINT_SLOTS=0-1",
            "-e",
            "SNOWMINT_CLAIM_TTL=2s",
            IMAGE,
        ]);
        let container = Container {
            podman,
            name,
            address: ([127, 0, 0, 1], port).into(),
        };
        wait_until(&format!("{} to issue an ID", container.name), LIMIT, || {
            let answer = Connection::open(container.address)
                .ok()?
                .get("/v1/id")
                .ok()?;
            (answer.status == 200).then_some(())
        });
        let first_id = started.elapsed();
        (container, first_id)
    }

    fn json(&self, target: &str) -> Value {
        let answer = Connection::open(self.address).unwrap().get(target).unwrap();
        assert_eq!(
            answer.status, 200,
            "{}: {target}: {}",
            self.name, answer.body
        );
        serde_json::from_str(&answer.body).unwrap()
    }

    fn ids(&self, count: usize) -> Vec<u64> {
        self.json(&format!("/v1/ids?count={count}"))["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().parse().unwrap())
            .collect()
    }

    fn slot(&self) -> u64 {
        self.json("/v1/node")["slot"].as_u64().unwrap()
    }

    /// The image's health check, run now, and the state podman records.
    fn health(&self) -> (bool, String) {
        let ran = self.podman.output(&["healthcheck", "run", &self.name]);
        let status = self.podman.run(&[
            "inspect",
            "--format",
            "{{.State.Health.Status}}",
            &self.name,
        ]);
        (ran.status.success(), status.trim().to_owned())
    }

    fn logs(&self) -> String {
        let output = self.podman.output(&["logs", &self.name]);
        String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout)
    }
}

fn slot_of(id: u64) -> u64 {
    (id >> 12) & 0x3ff
}

fn timestamp_of(id: u64) -> i64 {
    Layout::TWITTER.timestamp_ms(SnowflakeId::from_u64(id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_containers_claim_slots_and_a_third_takes_a_released_one() {
    let podman = Podman::new();
    tokio::task::block_in_place(|| {
        podman.base_image();
        build(&podman);
    });
    let etcd = EtcdServer::start().await;
    let endpoint = etcd.client_addr().to_string();
    let fleet = format!("podman-{}", std::process::id());

    let (a, a_first) =
        tokio::task::block_in_place(|| Container::start(&podman, "a", &endpoint, &fleet));
    let (b, b_first) =
        tokio::task::block_in_place(|| Container::start(&podman, "b", &endpoint, &fleet));
    let (slot_a, slot_b) = tokio::task::block_in_place(|| (a.slot(), b.slot()));
    assert_ne!(slot_a, slot_b, "two containers hold one slot");
    let holders = etcd.slot_holders(&fleet).await;
    assert_eq!(
        holders.keys().copied().collect::<Vec<_>>(),
        [0, 1],
        "{holders:?}"
    );
    assert!(
        holders[&slot_a].contains(&format!("host={}", a.name)),
        "{holders:?}"
    );
    assert!(
        holders[&slot_b].contains(&format!("host={}", b.name)),
        "{holders:?}"
    );

    let mut seen = HashSet::new();
    let ids_a = tokio::task::block_in_place(|| {
        for container in [&a, &b] {
            // The image's user, and its state directory on the volume.
            let (healthy, status) = container.health();
            assert!(
                healthy && status == "healthy",
                "{}: {status}",
                container.name
            );
            let pid =
                container
                    .podman
                    .run(&["inspect", "--format", "{{.State.Pid}}", &container.name]);
            let status = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).unwrap();
            let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
            assert!(
                !uid.split_whitespace().skip(1).any(|u| u == "0"),
                "runs as root: {uid}"
            );
            let node = container.json("/v1/node");
            assert!(
                node["state_file"]
                    .as_str()
                    .unwrap()
                    .starts_with("/var/lib/snowmint/"),
                "{node}"
            );
        }
        let ids_a = a.ids(1000);
        for (container, slot, ids) in [(&a, slot_a, ids_a.clone()), (&b, slot_b, b.ids(1000))] {
            for id in ids {
                assert_eq!(slot_of(id), slot, "{}", container.name);
                assert!(seen.insert(id), "ID {id} twice");
            }
        }
        ids_a
    });

    // podman stop: SIGTERM, a clean exit, and the claim released at once
    // (the key is gone when stop returns, not a TTL later).
    let stopped = tokio::task::block_in_place(|| {
        podman.run(&["stop", &a.name]);
        podman.run(&["inspect", "--format", "{{.State.ExitCode}}", &a.name])
    });
    assert_eq!(stopped.trim(), "0");
    let logs = tokio::task::block_in_place(|| a.logs());
    assert!(logs.contains("SIGTERM received"), "{logs}");
    assert!(
        logs.contains(&format!("its claim on slot {slot_a} is released")),
        "{logs}"
    );
    let holders = etcd.slot_holders(&fleet).await;
    assert!(
        !holders.contains_key(&slot_a),
        "slot {slot_a} still held: {holders:?}"
    );
    let mark = etcd
        .stored_mark(&fleet, slot_a)
        .await
        .expect("the released slot keeps its high-water mark");
    let last_a = *ids_a.last().unwrap();
    assert!(
        mark >= timestamp_of(last_a),
        "mark {mark} below A's last ID"
    );

    // A third container: the one free slot is A's; it issues above A's
    // mark, so above every ID A issued.
    let (c, c_first) =
        tokio::task::block_in_place(|| Container::start(&podman, "c", &endpoint, &fleet));
    tokio::task::block_in_place(|| {
        assert_eq!(c.slot(), slot_a);
        let ids_c = c.ids(1000);
        assert!(
            timestamp_of(ids_c[0]) > mark,
            "C issued at or below A's mark"
        );
        assert!(ids_c[0] > last_a);
        for id in ids_c.into_iter().chain(b.ids(100)) {
            assert!(seen.insert(id), "ID {id} twice");
        }
        let (healthy, status) = c.health();
        assert!(healthy && status == "healthy", "{status}");
    });
    println!(
        "podman run to first ID: a {} ms (slot {slot_a}), b {} ms (slot {slot_b}), c {} ms (slot {}, A's, after podman stop)",
        a_first.as_millis(),
        b_first.as_millis(),
        c_first.as_millis(),
        slot_a
    );
    drop((a, b, c));
}

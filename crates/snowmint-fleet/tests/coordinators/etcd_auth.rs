//! The fleet claim engine against a real etcd with authentication on
//! (RBAC): a user whose role has readwrite on the fleet's prefix only
//! claims, and clients find the nodes with the same credentials; a wrong
//! password, a user without the right, and no user at all each fence the
//! node with a sentence that says what is wrong, never the password.

use std::time::Duration;

use crate::scenarios::refusals::{engine, refusal};
use snowmint_fleet::{
    CoordinatorAccess, CoordinatorUrl, Credentials, EtcdBackend, FleetName, Secret, SlotSource,
    read_holders_with,
};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::etcd::Permission;
use snowmint_test_support::wait::eventually;

const ROOT_PASSWORD: &str = "root-Pw-1";
const IDS_PASSWORD: &str = "ids-Pw-2";
const WRONG_PASSWORD: &str = "wrong-Pw-3";

/// An etcd with authentication on: `root`; `ids`, whose role has
/// readwrite on `/snowmint/ids/` only; `reader`, whose role may only read
/// it; `nobody`, with no role.
async fn secured() -> EtcdServer {
    let cluster = EtcdServer::start().await;
    cluster
        .enable_auth(
            ROOT_PASSWORD,
            &[
                (
                    "ids",
                    IDS_PASSWORD,
                    Some(Permission::read_write("/snowmint/ids/").with_prefix()),
                ),
                (
                    "reader",
                    IDS_PASSWORD,
                    Some(Permission::read("/snowmint/ids/").with_prefix()),
                ),
                ("nobody", IDS_PASSWORD, None),
            ],
        )
        .await;
    cluster
}

fn backend(cluster: &EtcdServer, user: &str, password: &str) -> EtcdBackend {
    EtcdBackend::new(vec![cluster.client_addr().to_string()]).with_credentials(Credentials {
        user: user.into(),
        password: Secret::new(password),
    })
}

/// A user whose role covers only `/snowmint/ids/` claims, keeps and
/// releases a slot of fleet `ids`; a client reading the fleet with the
/// same credentials finds it, and without them is told to log in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_whose_role_covers_only_the_fleet_prefix_works() {
    let cluster = secured().await;
    let node = engine(backend(&cluster, "ids", IDS_PASSWORD), "ids");
    let mut states = node.state();
    let claim = eventually("a claim", Duration::from_secs(60), || {
        let claim = states
            .borrow_and_update()
            .claim_at(std::time::Instant::now())
            .cloned();
        async move { claim }
    })
    .await;
    assert_eq!(
        claim.details["coordinator"],
        format!("etcd://ids:***@{}", cluster.client_addr())
    );

    let fleet: FleetName = "ids".parse().unwrap();
    let url: CoordinatorUrl = format!("etcd://ids@{}", cluster.client_addr())
        .parse()
        .unwrap();
    let access = CoordinatorAccess::default().with_password(Secret::new(IDS_PASSWORD));
    let holders = read_holders_with(&url, &access, &fleet).await;
    // The holder value is "ids-node", no holder this version can read:
    // what counts is that the read was allowed.
    assert!(holders.is_ok(), "{holders:?}");
    // A client needs no more than read on the prefix.
    let reader: CoordinatorUrl = format!("etcd://reader@{}", cluster.client_addr())
        .parse()
        .unwrap();
    let holders = read_holders_with(&reader, &access, &fleet).await;
    assert!(holders.is_ok(), "{holders:?}");
    let anonymous: CoordinatorUrl = format!("etcd://{}", cluster.client_addr()).parse().unwrap();
    let err = read_holders_with(&anonymous, &CoordinatorAccess::default(), &fleet)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("etcd's authentication is on"), "{err}");

    node.release().await;
    let left = cluster
        .keys_as("root", ROOT_PASSWORD, "/snowmint/ids/slots/")
        .await;
    assert!(left.is_empty(), "the release left a slot key: {left:?}");
    let layout = cluster
        .keys_as("root", ROOT_PASSWORD, "/snowmint/ids/layout")
        .await;
    assert_eq!(layout.len(), 1, "no layout record under the prefix");
}

/// A wrong password: a sentence that says so, without the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_is_a_clear_error() {
    let cluster = secured().await;
    let reason = refusal(backend(&cluster, "ids", WRONG_PASSWORD), "ids").await;
    assert!(
        reason.contains("user \"ids\" cannot log in: etcd says the user name or password is wrong"),
        "{reason}"
    );
    assert!(reason.starts_with(&format!(
        "the coordinator etcd://ids:***@{} could not serve the request: ",
        cluster.client_addr()
    )));
    assert!(!reason.contains(WRONG_PASSWORD), "{reason}");
}

/// A user without the right, or with read only: the reason names the key,
/// the right missing and the grant that fixes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_without_rights_on_the_prefix_is_told_which() {
    let cluster = secured().await;
    for (user, right) in [("nobody", "read"), ("reader", "read and write")] {
        let reason = refusal(backend(&cluster, user, IDS_PASSWORD), "ids").await;
        let expected = format!(
            "user \"{user}\" may not {right} /snowmint/ids/layout (etcd: permission denied); \
             grant its role readwrite on the prefix /snowmint/ids/; retrying"
        );
        assert!(reason.ends_with(&expected), "{reason}");
    }
    // A fleet outside the role's prefix, for the user that has one.
    let reason = refusal(backend(&cluster, "ids", IDS_PASSWORD), "other").await;
    assert!(
        reason.contains("user \"ids\" may not read /snowmint/other/layout"),
        "{reason}"
    );
    assert!(
        reason.contains("on the prefix /snowmint/other/"),
        "{reason}"
    );
}

/// No user at all, with authentication on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_user_is_a_clear_error() {
    let cluster = secured().await;
    let anonymous = EtcdBackend::new(vec![cluster.client_addr().to_string()]);
    let reason = refusal(anonymous, "ids").await;
    assert!(
        reason.contains("etcd's authentication is on, and this node gives no user"),
        "{reason}"
    );
    assert!(
        reason.contains("readwrite on the prefix /snowmint/ids/"),
        "{reason}"
    );
}

/// Credentials given to an etcd whose authentication is off are not used:
/// the node says so in its log and claims.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_for_an_etcd_without_authentication_go_unused() {
    let cluster = EtcdServer::start().await;
    let slot =
        crate::scenarios::refusals::claims(backend(&cluster, "ids", IDS_PASSWORD), "open").await;
    assert!(slot <= 3);
}

/// etcd's login tokens expire (`--auth-token-ttl`, here 1 s, shorter than
/// the 2 s between keep-alives of a 6 s claim): the node logs in again as
/// it goes, and keeps its claim undisturbed over many expiries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tokens_are_renewed_without_a_loss() {
    let cluster = EtcdServer::start_with(&["--auth-token-ttl", "1"]).await;
    cluster
        .enable_auth(
            ROOT_PASSWORD,
            &[(
                "ids",
                IDS_PASSWORD,
                Some(Permission::read_write("/snowmint/ids/").with_prefix()),
            )],
        )
        .await;
    let ttl = Duration::from_secs(6);
    let node = crate::node::TestNode::start(
        "renewing",
        backend(&cluster, "ids", IDS_PASSWORD),
        "ids",
        "0-3",
        ttl,
    );
    node.wait_active(1).await;
    let issued = node.issued_count();
    tokio::time::sleep(ttl * 3).await;
    node.assert_undisturbed();
    node.wait_issued(issued, 100).await;
    node.release().await;
}

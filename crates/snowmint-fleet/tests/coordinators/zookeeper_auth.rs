//! The fleet claim engine against a real ZooKeeper with digest
//! authentication: every scenario passes with the fleet's identity; every
//! znode the fleet creates carries an ACL that lets only that identity
//! write or delete it (world read by choice); a second client with other
//! credentials can neither delete nor overwrite a slot or a mark (the
//! hand-deleted slot of the scenarios fails at the delete); wrong or
//! missing credentials fence the node with a sentence that says so.

use std::time::Duration;

use crate::node::TestNode;
use crate::scenarios::TTL;
use crate::scenarios::refusals::{claims, refusal};
use base64::Engine;
use snowmint_fleet::{Credentials, Secret, ZooKeeperBackend};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::zookeeper_secure::{
    FLEET_PASSWORD, FLEET_USER, ZooKeeperDigestServer, client_as,
};
use zookeeper_client::{Acl, AuthId, Client, Error, Permission};

every_scenario!(ZooKeeperDigestServer);

const INTRUDER_PASSWORD: &str = "intruder-Pw-9";

/// ZooKeeper's digest identity of `user`:`password`, computed here as its
/// documentation says: `user:base64(sha1(user:password))`.
fn digest_id(user: &str, password: &str) -> String {
    let hash = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{user}:{password}").as_bytes(),
    );
    format!(
        "{user}:{}",
        base64::engine::general_purpose::STANDARD.encode(hash.as_ref())
    )
}

fn backend(cluster: &ZooKeeperDigestServer, world_read: bool) -> ZooKeeperBackend {
    ZooKeeperBackend::new(vec![cluster.client_addr().to_string()], None)
        .with_credentials(ZooKeeperDigestServer::credentials(), world_read)
}

/// A node that claimed a slot of `fleet` and has issued, so that its
/// slot's mark is written too.
async fn node_with_a_mark(
    cluster: &ZooKeeperDigestServer,
    fleet: &str,
    world_read: bool,
) -> (TestNode<ZooKeeperBackend>, u64) {
    let node = TestNode::start("holder", backend(cluster, world_read), fleet, "0-3", TTL);
    let slot = node.wait_active(1).await.slot;
    node.wait_issued(0, 10).await;
    let client = cluster.client().await;
    snowmint_test_support::wait::eventually("the slot's mark", Duration::from_secs(60), || {
        let client = &client;
        async move {
            client
                .check_stat(&format!("/snowmint/{fleet}/hwm/{slot}"))
                .await
                .unwrap()
        }
    })
    .await;
    (node, slot)
}

async fn acl_of(client: &Client, path: &str) -> Vec<Acl> {
    client
        .get_acl(path)
        .await
        .unwrap_or_else(|err| panic!("cannot read the ACL of {path}: {err}"))
        .0
}

/// The slot, the mark, the layout record and the fleet's directories
/// belong to the fleet's identity alone; `/snowmint`, shared between
/// fleets, lets anyone create in it and nothing more. With world read,
/// anyone may read the fleet's znodes, and still write none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slot_and_mark_znodes_carry_the_acl() {
    let cluster = ZooKeeperDigestServer::start().await;
    let fleet_id = digest_id(FLEET_USER, FLEET_PASSWORD);
    let owner = Acl::new(Permission::ALL, AuthId::new("digest", &fleet_id));
    let client = cluster.client().await;
    for world_read in [false, true] {
        let fleet = if world_read { "readable" } else { "closed" };
        let (node, slot) = node_with_a_mark(&cluster, fleet, world_read).await;
        let mut owned = vec![owner.clone()];
        if world_read {
            owned.push(Acl::new(Permission::READ, AuthId::anyone()));
        }
        for path in [
            format!("/snowmint/{fleet}/slots/{slot}"),
            format!("/snowmint/{fleet}/hwm/{slot}"),
            format!("/snowmint/{fleet}/layout"),
            format!("/snowmint/{fleet}/slots"),
            format!("/snowmint/{fleet}/hwm"),
            format!("/snowmint/{fleet}"),
        ] {
            assert_eq!(acl_of(&client, &path).await, owned, "{path}");
        }
        if !world_read {
            // The first fleet made /snowmint, without world read.
            let shared = vec![
                owner.clone(),
                Acl::new(Permission::CREATE, AuthId::anyone()),
            ];
            assert_eq!(acl_of(&client, "/snowmint").await, shared);
        }
        node.release().await;
    }
}

/// Another identity (or none) can neither delete nor overwrite a slot or
/// a mark, nor read them without world read: the scenario of a slot key
/// deleted by hand now fails at the delete, and the holder keeps its
/// claim undisturbed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_credentials_cannot_delete_or_set_slots_and_marks() {
    let cluster = ZooKeeperDigestServer::start().await;
    let (node, slot) = node_with_a_mark(&cluster, "guarded", false).await;
    let intruder = client_as(cluster.client_addr(), "intruder", INTRUDER_PASSWORD).await;
    let anonymous = Client::connect(&cluster.client_addr().to_string())
        .await
        .unwrap();
    // The fleet's own user with a wrong password is another identity.
    let wrong = client_as(cluster.client_addr(), FLEET_USER, INTRUDER_PASSWORD).await;
    for (who, client) in [
        ("intruder", &intruder),
        ("anonymous", &anonymous),
        ("wrong password", &wrong),
    ] {
        for path in [
            format!("/snowmint/guarded/slots/{slot}"),
            format!("/snowmint/guarded/hwm/{slot}"),
            "/snowmint/guarded/layout".to_owned(),
        ] {
            assert_eq!(
                client.delete(&path, None).await,
                Err(Error::NoAuth),
                "{who} deleted {path}"
            );
            assert_eq!(
                client.set_data(&path, b"0", None).await.map(drop),
                Err(Error::NoAuth),
                "{who} overwrote {path}"
            );
            assert_eq!(
                client.get_data(&path).await.map(drop),
                Err(Error::NoAuth),
                "{who} read {path}"
            );
        }
        assert_eq!(
            client
                .create(
                    "/snowmint/guarded/slots/9",
                    b"squatter",
                    &zookeeper_client::CreateMode::Ephemeral
                        .with_acls(zookeeper_client::Acls::anyone_all()),
                )
                .await
                .map(drop),
            Err(Error::NoAuth),
            "{who} created a slot"
        );
    }
    tokio::time::sleep(TTL).await;
    node.assert_undisturbed();
    node.release().await;

    // With world read, anyone reads, and still writes nothing.
    let (node, slot) = node_with_a_mark(&cluster, "open-read", true).await;
    let path = format!("/snowmint/open-read/slots/{slot}");
    let (holder, _) = anonymous.get_data(&path).await.unwrap();
    assert_eq!(holder, b"holder");
    assert_eq!(anonymous.delete(&path, None).await, Err(Error::NoAuth));
    assert_eq!(
        anonymous.set_data(&path, b"x", None).await.map(drop),
        Err(Error::NoAuth)
    );
    node.release().await;
}

/// A wrong password for the fleet's user: ZooKeeper's digest scheme takes
/// any password as some identity, so the refusal comes at the first
/// znode the fleet owns; the reason says so, without the password. A
/// node without credentials is told to give them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_or_missing_credentials_are_a_clear_error() {
    let cluster = ZooKeeperDigestServer::start().await;
    claims(backend(&cluster, false), "owned").await;
    let wrong = ZooKeeperBackend::new(vec![cluster.client_addr().to_string()], None)
        .with_credentials(
            Credentials {
                user: FLEET_USER.into(),
                password: Secret::new(INTRUDER_PASSWORD),
            },
            false,
        );
    let reason = refusal(wrong, "owned").await;
    assert!(
        reason.contains(&format!(
            "the digest identity of user {FLEET_USER:?} may not "
        )),
        "{reason}"
    );
    assert!(reason.contains("/snowmint/owned/"), "{reason}");
    assert!(
        reason.contains("a wrong password is another identity too"),
        "{reason}"
    );
    assert!(!reason.contains(INTRUDER_PASSWORD), "{reason}");
    assert!(
        reason.starts_with(&format!(
            "the coordinator zk://{FLEET_USER}:***@{} could not serve the request: ",
            cluster.client_addr()
        )),
        "{reason}"
    );

    let anonymous = ZooKeeperBackend::new(vec![cluster.client_addr().to_string()], None);
    let reason = refusal(anonymous, "owned").await;
    assert!(
        reason.contains("this node, which gives no user, may not "),
        "{reason}"
    );
    assert!(reason.contains("give its user and password"), "{reason}");
}

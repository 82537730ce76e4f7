//! The ACLs of the znodes a session creates (see the parent module's
//! "Who may touch the znodes"), and the directories made with them.

use zookeeper_client::{Acl, AuthId, Client, CreateMode, CreateOptions, Error, Permission};

use super::{Op, ZooKeeperBackend};
use crate::coordinator::BackendError;

/// The ACLs of what a session creates: the fleet's own znodes, and the
/// directories it shares with other fleets.
#[derive(Debug, Clone)]
pub(super) struct ZnodeAcls {
    owned: Vec<Acl>,
    shared: Vec<Acl>,
}

impl ZnodeAcls {
    /// Open to all: no credentials.
    pub(super) fn open() -> ZnodeAcls {
        let all = vec![Acl::new(Permission::ALL, AuthId::anyone())];
        ZnodeAcls {
            owned: all.clone(),
            shared: all,
        }
    }

    /// Everything to the session's identity; reading (and creating in the
    /// shared directories) to anyone as said.
    pub(super) fn owned_by_creator(world_read: bool) -> ZnodeAcls {
        let creator = Acl::new(Permission::ALL, AuthId::authed());
        let read = if world_read {
            Permission::READ
        } else {
            Permission::NONE
        };
        let mut owned = vec![creator.clone()];
        if world_read {
            owned.push(Acl::new(read, AuthId::anyone()));
        }
        let shared = vec![
            creator,
            Acl::new(Permission::CREATE | read, AuthId::anyone()),
        ];
        ZnodeAcls { owned, shared }
    }

    pub(super) fn persistent(&self) -> CreateOptions<'_> {
        CreateMode::Persistent.with_acls(zookeeper_client::Acls::new(&self.owned))
    }

    pub(super) fn ephemeral(&self) -> CreateOptions<'_> {
        CreateMode::Ephemeral.with_acls(zookeeper_client::Acls::new(&self.owned))
    }

    pub(super) fn shared_dir(&self) -> CreateOptions<'_> {
        CreateMode::Persistent.with_acls(zookeeper_client::Acls::new(&self.shared))
    }
}

impl ZooKeeperBackend {
    /// Creates `path` and the directories above it that are missing, from
    /// the top: the ones at or above `shared` (and a chroot's, with an
    /// empty `shared`: all of them) with the shared directories' ACL,
    /// the fleet's own with its ACL.
    pub(super) async fn make_dirs(
        &self,
        client: &Client,
        path: &str,
        shared: &str,
    ) -> Result<(), BackendError> {
        let mut end = 0;
        while end < path.len() {
            end = path[end + 1..]
                .find('/')
                .map_or(path.len(), |at| end + 1 + at);
            let dir = &path[..end];
            let is_shared = shared.is_empty() || shared.starts_with(dir);
            let options = match is_shared {
                true => self.acls.shared_dir(),
                false => self.acls.persistent(),
            };
            match client.create(dir, &[], &options).await {
                Ok(_) | Err(Error::NodeExists) => {}
                Err(error) => return Err(self.classify(error, Op::Create(dir))),
            }
        }
        Ok(())
    }
}

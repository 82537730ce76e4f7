//! The ZooKeeper backend: a session is a ZooKeeper session, a claimed slot
//! an ephemeral znode.
//!
//! - Claim: create the ephemeral znode; "node exists" means taken.
//! - Keep-alive: `sync`, then read the slot znode's stat, which proves
//!   this session still owns it (`ephemeralOwner`). The `sync` makes the
//!   server catch up with the leader first, so that a server cut off from
//!   the quorum cannot confirm a session that the leader has expired.
//! - High-water mark: a persistent znode, written in a multi-op that checks
//!   the slot znode still exists and names the mark's data version. A
//!   multi-op can check a znode's existence and version, not its owner: if
//!   an operator deletes the slot znode and another node creates it anew,
//!   the check passes for the old holder too. So the new holder writes the
//!   mark back before it uses the slot (the engine does this, as
//!   [`GUARD_PROVES_OWNER`](crate::Backend::GUARD_PROVES_OWNER) is false),
//!   which makes the old holder's next write conflict, and a conflict
//!   re-reads the slot znode's owner: not this session's, the guard is
//!   lost.
//! - Records (the fleet's layout): a persistent znode created if absent,
//!   read when it exists.
//! - Reads go through `sync` first, so that a follower that lags behind the
//!   leader cannot hide the previous holder's last mark.
//! - Release: delete the slot znode (if still ours), then the session
//!   closes when its client is dropped.
//! - Clock: an empty write to the fleet's `clock` znode, whose stat
//!   carries the modification time the leader gave it.

use std::time::Duration;

use zookeeper_client::{
    Acls, CheckWriteError, Client, CreateMode, CreateOptions, Error, MultiWriteResult,
};

use crate::coordinator::{Backend, BackendError, CoordinatorUrl, GuardedWrite, Opened, Versioned};

/// Claims slots through a ZooKeeper ensemble
/// (`zk://HOST:PORT[,HOST:PORT...][/CHROOT]`).
#[derive(Debug, Clone)]
pub struct ZooKeeperBackend {
    hosts: Vec<String>,
    chroot: Option<String>,
}

impl ZooKeeperBackend {
    /// A backend for the servers `HOST:PORT`, with every path under
    /// `chroot` if given (created when missing).
    pub fn new(hosts: Vec<String>, chroot: Option<String>) -> ZooKeeperBackend {
        ZooKeeperBackend { hosts, chroot }
    }
}

/// A ZooKeeper session; it closes when dropped.
pub struct ZooKeeperSession {
    client: Client,
}

const PERSISTENT: CreateOptions<'static> = CreateMode::Persistent.with_acls(Acls::anyone_all());
const EPHEMERAL: CreateOptions<'static> = CreateMode::Ephemeral.with_acls(Acls::anyone_all());

/// Sorts a ZooKeeper client error into what the engine must know (is the
/// session gone? was the server reached?) and a few plain words for the
/// message; the error itself stays behind as the source, for the log.
fn classify(err: Error) -> BackendError {
    let error = match &err {
        Error::SessionExpired | Error::SessionMoved | Error::AuthFailed | Error::ClientClosed => {
            BackendError::lost(err.to_string())
        }
        Error::NoHosts => {
            BackendError::unreachable("no server of the ensemble took the connection")
        }
        Error::ConnectionLoss => BackendError::unreachable("the connection was lost"),
        Error::Timeout => BackendError::unreachable("timed out"),
        other => BackendError::unavailable(other.to_string()),
    };
    error.with_source(err)
}

impl ZooKeeperSession {
    fn owns(&self, stat: &zookeeper_client::Stat) -> bool {
        stat.ephemeral_owner == self.client.session_id().0
    }
}

impl Backend for ZooKeeperBackend {
    type Session = ZooKeeperSession;

    const KIND: &'static str = "zookeeper";
    const SESSION_NAME: &'static str = "session";
    const GUARD_PROVES_OWNER: bool = false;

    fn url(&self) -> String {
        CoordinatorUrl::ZooKeeper {
            hosts: self.hosts.clone(),
            chroot: self.chroot.clone(),
        }
        .to_string()
    }

    async fn open_session(
        &self,
        ttl: Duration,
        dirs: &[String],
    ) -> Result<Opened<ZooKeeperSession>, BackendError> {
        let client = Client::connector()
            .with_session_timeout(ttl)
            .with_fail_eagerly()
            .connect(&self.hosts.join(","))
            .await
            .map_err(classify)?;
        let client = match &self.chroot {
            Some(root) => {
                client.mkdir(root, &PERSISTENT).await.map_err(classify)?;
                client.chroot(root.clone()).map_err(|_| {
                    BackendError::unavailable(format!("chroot {root:?} is not a valid path"))
                })?
            }
            None => client,
        };
        for dir in dirs {
            // A read first: in a running fleet the directories exist, and a
            // read costs the ensemble less than a create that fails.
            if client.check_stat(dir).await.map_err(classify)?.is_none() {
                client.mkdir(dir, &PERSISTENT).await.map_err(classify)?;
            }
        }
        Ok(Opened {
            id: client.session_id().to_string(),
            ttl: client.session_timeout(),
            session: ZooKeeperSession { client },
        })
    }

    async fn list(
        &self,
        session: &ZooKeeperSession,
        dir: &str,
    ) -> Result<Vec<String>, BackendError> {
        session.client.list_children(dir).await.map_err(classify)
    }

    async fn create_if_absent(
        &self,
        session: &ZooKeeperSession,
        path: &str,
        value: &[u8],
    ) -> Result<bool, BackendError> {
        match session.client.create(path, value, &EPHEMERAL).await {
            Ok(_) => Ok(true),
            Err(Error::NodeExists) => Ok(false),
            Err(err) => Err(classify(err)),
        }
    }

    async fn create_record(
        &self,
        session: &ZooKeeperSession,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        match session.client.create(path, value, &PERSISTENT).await {
            Ok(_) => Ok(None),
            Err(Error::NodeExists) => match self.read(session, path).await? {
                Some(found) => Ok(Some(found.value)),
                None => Err(BackendError::unavailable(format!(
                    "{path} was deleted while it was read"
                ))),
            },
            Err(err) => Err(classify(err)),
        }
    }

    async fn keep_alive(
        &self,
        session: &ZooKeeperSession,
        held: Option<&str>,
    ) -> Result<Duration, BackendError> {
        let path = held.unwrap_or("/");
        match session.client.sync(path).await {
            // A missing slot znode is reported by the stat below.
            Ok(()) | Err(Error::NoNode) => {}
            Err(err) => return Err(classify(err)),
        }
        let stat = session.client.check_stat(path).await.map_err(classify)?;
        match (held, stat) {
            (None, _) => Ok(session.client.session_timeout()),
            (Some(_), Some(stat)) if session.owns(&stat) => Ok(session.client.session_timeout()),
            (Some(path), _) => Err(BackendError::lost(format!(
                "znode {path} is no longer held by session {}",
                session.client.session_id()
            ))),
        }
    }

    async fn read(
        &self,
        session: &ZooKeeperSession,
        path: &str,
    ) -> Result<Option<Versioned>, BackendError> {
        match session.client.sync(path).await {
            Ok(()) | Err(Error::NoNode) => {}
            Err(err) => return Err(classify(err)),
        }
        match session.client.get_data(path).await {
            Ok((value, stat)) => Ok(Some(Versioned {
                value,
                version: stat.version.into(),
            })),
            Err(Error::NoNode) => Ok(None),
            Err(err) => Err(classify(err)),
        }
    }

    async fn write_guarded(
        &self,
        session: &ZooKeeperSession,
        guard: &str,
        path: &str,
        value: &[u8],
        expected: Option<i64>,
    ) -> Result<GuardedWrite, BackendError> {
        let bad_path =
            |err: Error| BackendError::unavailable(format!("cannot write {path}: {err}"));
        let mut writer = session
            .client
            .new_check_writer(guard, None)
            .map_err(bad_path)?;
        match expected {
            Some(version) => {
                let Ok(version) = i32::try_from(version) else {
                    return Ok(GuardedWrite::Conflict);
                };
                writer
                    .add_set_data(path, value, Some(version))
                    .map_err(bad_path)?;
            }
            None => writer
                .add_create(path, value, &PERSISTENT)
                .map_err(bad_path)?,
        }
        match writer.commit().await {
            Ok(results) => Ok(GuardedWrite::Written {
                version: match results.first() {
                    Some(MultiWriteResult::SetData { stat }) => stat.version.into(),
                    _ => 0,
                },
            }),
            Err(CheckWriteError::CheckFailed {
                source: Error::NoNode,
            }) => Ok(GuardedWrite::GuardLost),
            Err(CheckWriteError::OperationFailed {
                source: Error::BadVersion | Error::NodeExists | Error::NoNode,
                ..
            }) => {
                // The check saw a slot znode, not necessarily ours: one
                // created anew by another node passes it too.
                match session.client.check_stat(guard).await.map_err(classify)? {
                    Some(stat) if session.owns(&stat) => Ok(GuardedWrite::Conflict),
                    _ => Ok(GuardedWrite::GuardLost),
                }
            }
            Err(CheckWriteError::RequestFailed { source }) => Err(classify(source)),
            Err(other) => Err(BackendError::unavailable(other.to_string())),
        }
    }

    async fn clock(
        &self,
        session: &ZooKeeperSession,
        path: &str,
    ) -> Result<Option<i64>, BackendError> {
        // The leader stamps a write with its clock (the znode's mtime);
        // an empty write to a znode of the fleet's costs the ensemble one
        // small transaction.
        let stat = match session.client.set_data(path, b"", None).await {
            Err(Error::NoNode) => {
                match session.client.create(path, b"", &PERSISTENT).await {
                    Ok(_) | Err(Error::NodeExists) => {}
                    Err(err) => return Err(classify(err)),
                }
                session.client.set_data(path, b"", None).await
            }
            other => other,
        };
        Ok(Some(stat.map_err(classify)?.mtime))
    }

    async fn release(
        &self,
        session: &ZooKeeperSession,
        held: Option<&str>,
    ) -> Result<(), BackendError> {
        let Some(path) = held else { return Ok(()) };
        match session.client.check_stat(path).await.map_err(classify)? {
            Some(stat) if session.owns(&stat) => {
                match session.client.delete(path, Some(stat.version)).await {
                    Ok(()) | Err(Error::NoNode) => Ok(()),
                    Err(err) => Err(classify(err)),
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::testing::closed_port;

    /// A closed port: no server took the connection, said in words, with
    /// the client's error behind it.
    #[tokio::test]
    async fn a_refused_connection_reads_as_plain_words() {
        let backend = ZooKeeperBackend::new(vec![format!("127.0.0.1:{}", closed_port())], None);
        let Err(error) = backend.open_session(Duration::from_secs(2), &[]).await else {
            panic!("a session was opened through a closed port");
        };
        assert!(
            matches!(error, BackendError::Unreachable { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "no server of the ensemble took the connection"
        );
        assert!(error.source().is_some_and(|source| source.is::<Error>()));
    }
}

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
//!
//! # Who may touch the znodes
//!
//! Without credentials every znode is open to all (`world:anyone:cdrwa`),
//! as ZooKeeper's own default. With a user and password the session
//! authenticates with the `digest` scheme, and every znode it creates
//! carries an ACL (`ZnodeAcls`) that lets only that identity write or delete
//! it: `auth::cdrwa`, which the server turns into the session's
//! `digest:USER:HASH`, plus `world:anyone:r` with world read. The shared
//! directories above the fleet (`/snowmint` and the chroot's components)
//! also let anyone create in them (`world:anyone:c`), so that fleets with
//! other identities can live beside each other. Deleting a znode takes
//! `DELETE` on its parent, which only the fleet's identity has: another
//! client can neither delete nor overwrite a slot or a mark.
//!
//! With TLS ([`CoordinatorTls`], read anew for each session) the servers
//! are reached on their secure client port.

use std::time::Duration;

use zookeeper_client::{CheckWriteError, Client, Error, MultiWriteError, MultiWriteResult};

use crate::coordinator::{
    Backend, BackendError, CoordinatorTls, CoordinatorUrl, Credentials, GuardedWrite, Login,
    Opened, Versioned,
};
use crate::reason::tls_cause;
use acls::ZnodeAcls;
use tls::{check_tls_name, tls_options};

mod acls;
mod tls;

/// Claims slots through a ZooKeeper ensemble
/// (`zk://HOST:PORT[,HOST:PORT...][/CHROOT]`).
#[derive(Debug, Clone)]
pub struct ZooKeeperBackend {
    hosts: Vec<String>,
    chroot: Option<String>,
    /// TLS, when a CA is given.
    tls: Option<CoordinatorTls>,
    /// The `digest` identity the session authenticates as.
    credentials: Option<Credentials>,
    /// The ACLs of the znodes created.
    acls: ZnodeAcls,
}

impl ZooKeeperBackend {
    /// A backend for the servers `HOST:PORT`, with every path under
    /// `chroot` if given (created when missing).
    pub fn new(hosts: Vec<String>, chroot: Option<String>) -> ZooKeeperBackend {
        ZooKeeperBackend {
            hosts,
            chroot,
            tls: None,
            credentials: None,
            acls: ZnodeAcls::open(),
        }
    }

    /// The same backend, over TLS to the servers' secure client port,
    /// checked against `tls`'s CA and presenting its certificate if it has
    /// one. The files are read for each new session.
    pub fn with_tls(mut self, tls: CoordinatorTls) -> ZooKeeperBackend {
        self.tls = Some(tls);
        self
    }

    /// The same backend, authenticating as `credentials` with the `digest`
    /// scheme; the znodes it creates then let only that identity write or
    /// delete them, and anyone read them if `world_read`.
    pub fn with_credentials(
        mut self,
        credentials: Credentials,
        world_read: bool,
    ) -> ZooKeeperBackend {
        self.credentials = Some(credentials);
        self.acls = ZnodeAcls::owned_by_creator(world_read);
        self
    }

    /// Connects (over TLS if set) and authenticates.
    async fn connect(&self, ttl: Duration) -> Result<Client, BackendError> {
        let mut connector = Client::connector()
            .with_session_timeout(ttl)
            .with_fail_eagerly();
        if let Some(credentials) = &self.credentials {
            let auth = format!("{}:{}", credentials.user, credentials.password.expose());
            connector = connector.with_auth("digest", auth.as_bytes());
        }
        let cluster = self.hosts.join(",");
        let connected = match &self.tls {
            None => connector.connect(&cluster).await,
            Some(tls) => {
                // Read for each session: a certificate rotated on disk is
                // used from the next session on.
                let files = tls.load().map_err(BackendError::unavailable)?;
                let options = tls_options(&files)?;
                for host in &self.hosts {
                    check_tls_name(host)?;
                }
                // The client builds its configuration on the process's
                // default provider: make it the tree's one.
                let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
                let connected = connector.with_tls(options).secure_connect(&cluster).await;
                if let Err(error @ (Error::NoHosts | Error::ConnectionLoss | Error::Timeout)) =
                    connected
                {
                    // The client keeps why each server failed to itself:
                    // one handshake of ours finds out whether TLS did.
                    for host in &self.hosts {
                        if let Some(failure) = crate::tls_probe::tls_failure(host, &files).await
                            && let Some(reason) = tls_cause(&failure, tls)
                        {
                            return Err(BackendError::unreachable(reason).with_source(error));
                        }
                    }
                    return Err(classify(error));
                }
                connected
            }
        };
        connected.map_err(|error| self.classify(error, Op::Connect))
    }

    /// [`classify`], with a refusal (`NoAuth`) put in words that say who
    /// was refused what.
    pub(crate) fn classify(&self, error: Error, op: Op<'_>) -> BackendError {
        if !matches!(error, Error::NoAuth) {
            let tls = self.tls.as_ref().and_then(|tls| tls_cause(&error, tls));
            return match tls {
                Some(reason) => BackendError::unreachable(reason).with_source(error),
                None => classify(error),
            };
        }
        let what = match op {
            Op::Connect => "connect".to_owned(),
            Op::Read(path) => format!("read {path}"),
            Op::Create(path) => format!("create {path}"),
            Op::Write(path) => format!("write {path}"),
            Op::Delete(path) => format!("delete {path}"),
        };
        let reason = match &self.credentials {
            Some(credentials) => format!(
                "the digest identity of user {:?} may not {what} (ZooKeeper: not authorized): the znodes there belong to another identity; \
                 with ZooKeeper's digest scheme a wrong password is another identity too",
                credentials.user
            ),
            None => format!(
                "this node, which gives no user, may not {what} (ZooKeeper: not authorized): the fleet's znodes belong to an identity; \
                 give its user and password (zk://USER@HOST:PORT)"
            ),
        };
        BackendError::unavailable(reason).with_source(error)
    }
}

/// What a request does, for the message when ZooKeeper refuses it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<'a> {
    Connect,
    Read(&'a str),
    Create(&'a str),
    Write(&'a str),
    Delete(&'a str),
}

/// A ZooKeeper session; it closes when dropped.
pub struct ZooKeeperSession {
    client: Client,
}

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
            login: self.credentials.as_ref().map(|credentials| Login {
                user: credentials.user.clone(),
                password: Some(credentials.password.clone()),
            }),
        }
        .to_string()
    }

    async fn open_session(
        &self,
        ttl: Duration,
        dirs: &[String],
    ) -> Result<Opened<ZooKeeperSession>, BackendError> {
        let client = self.connect(ttl).await?;
        let client = match &self.chroot {
            Some(root) => {
                if client
                    .check_stat(root)
                    .await
                    .map_err(|error| self.classify(error, Op::Read(root)))?
                    .is_none()
                {
                    self.make_dirs(&client, root, "").await?;
                }
                client.chroot(root.clone()).map_err(|_| {
                    BackendError::unavailable(format!("chroot {root:?} is not a valid path"))
                })?
            }
            None => client,
        };
        for dir in dirs {
            // A read first: in a running fleet the directories exist, and a
            // read costs the ensemble less than a create that fails.
            if client
                .check_stat(dir)
                .await
                .map_err(|error| self.classify(error, Op::Read(dir)))?
                .is_none()
            {
                self.make_dirs(&client, dir, "/snowmint").await?;
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
        session
            .client
            .list_children(dir)
            .await
            .map_err(|error| self.classify(error, Op::Read(dir)))
    }

    async fn create_if_absent(
        &self,
        session: &ZooKeeperSession,
        paths: &[String],
        value: &[u8],
    ) -> Result<bool, BackendError> {
        let ephemeral = self.acls.ephemeral();
        if let [path] = paths {
            return match session.client.create(path, value, &ephemeral).await {
                Ok(_) => Ok(true),
                Err(Error::NodeExists) => Ok(false),
                Err(err) => Err(self.classify(err, Op::Create(path))),
            };
        }
        // Several slots: one multi-op, so that the ephemeral znodes are
        // created together or not at all.
        let mut writer = session.client.new_multi_writer();
        for path in paths {
            writer
                .add_create(path, value, &ephemeral)
                .map_err(|err| BackendError::unavailable(format!("cannot create {path}: {err}")))?;
        }
        match writer.commit().await {
            Ok(_) => Ok(true),
            Err(MultiWriteError::OperationFailed {
                source: Error::NodeExists,
                ..
            }) => Ok(false),
            Err(MultiWriteError::OperationFailed { index, source }) => {
                let path = paths.get(index).map_or("", String::as_str);
                Err(self.classify(source, Op::Create(path)))
            }
            Err(MultiWriteError::RequestFailed { source }) => Err(classify(source)),
        }
    }

    async fn create_record(
        &self,
        session: &ZooKeeperSession,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        match session
            .client
            .create(path, value, &self.acls.persistent())
            .await
        {
            Ok(_) => Ok(None),
            Err(Error::NodeExists) => match self.read(session, path).await? {
                Some(found) => Ok(Some(found.value)),
                None => Err(BackendError::unavailable(format!(
                    "{path} was deleted while it was read"
                ))),
            },
            Err(err) => Err(self.classify(err, Op::Create(path))),
        }
    }

    async fn keep_alive(
        &self,
        session: &ZooKeeperSession,
        held: &[String],
    ) -> Result<Duration, BackendError> {
        // One sync brings the server up to the leader for every read after.
        let path = held.first().map_or("/", String::as_str);
        match session.client.sync(path).await {
            // A missing slot znode is reported by the stat below.
            Ok(()) | Err(Error::NoNode) => {}
            Err(err) => return Err(classify(err)),
        }
        if held.is_empty() {
            session.client.check_stat(path).await.map_err(classify)?;
        }
        for path in held {
            match session.client.check_stat(path).await.map_err(classify)? {
                Some(stat) if session.owns(&stat) => {}
                _ => {
                    return Err(BackendError::lost(format!(
                        "znode {path} is no longer held by session {}",
                        session.client.session_id()
                    )));
                }
            }
        }
        Ok(session.client.session_timeout())
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
            Err(err) => Err(self.classify(err, Op::Read(path))),
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
        let persistent = self.acls.persistent();
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
                .add_create(path, value, &persistent)
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
            Err(CheckWriteError::OperationFailed {
                source: source @ Error::NoAuth,
                ..
            }) => Err(self.classify(
                source,
                match expected {
                    Some(_) => Op::Write(path),
                    None => Op::Create(path),
                },
            )),
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
                match session
                    .client
                    .create(path, b"", &self.acls.persistent())
                    .await
                {
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
        held: &[String],
    ) -> Result<(), BackendError> {
        for path in held {
            if let Some(stat) = session.client.check_stat(path).await.map_err(classify)?
                && session.owns(&stat)
            {
                match session.client.delete(path, Some(stat.version)).await {
                    Ok(()) | Err(Error::NoNode) => {}
                    Err(err) => return Err(self.classify(err, Op::Delete(path))),
                }
            }
        }
        Ok(())
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

//! The PostgreSQL backend: a session is a random id with a TTL, a claimed
//! slot a row of `slots` that names the session and expires on the
//! database's clock.
//!
//! - Claim: an insert that succeeds only if the slot has no row or its
//!   lease expired (`INSERT ... ON CONFLICT ... DO UPDATE ... WHERE
//!   expires_at < now()`).
//! - Keep-alive: an update of `expires_at` guarded by the session and the
//!   lease not having expired, so that a lost lease is seen as lost.
//!   Without a slot, a round trip proves that the database answers.
//! - High-water mark: a compare-and-set on `version` in `marks`, in the
//!   same statement as the check that the slot's row is still this
//!   session's and unexpired (locked `FOR SHARE`, so that no take-over
//!   commits in between). The check proves ownership, so a new holder
//!   need not write the mark back.
//! - Records (the fleet's layout): a row of `fleets`, inserted if absent.
//! - Claim history: a row of `claims` per slot, written by the same
//!   guarded compare-and-set as the mark.
//! - Clock: `clock_timestamp()`, the database's clock when it runs the
//!   statement.
//! - Release: a delete of the slot's row guarded by the session.
//!
//! The tables live in a schema (default `snowmint`), created with them if
//! absent ([`postgres_schema`]); a role that may not create them, or
//! lacks a right on them, gets a sentence naming what is missing. Expiry
//! counts on the database's clock only: the node's clock never enters a
//! statement. A lease is counted from when the database ran the
//! statement, which is after the node sent it, so the engine's deadline
//! (send time + TTL - margin) always falls before the row expires.
//!
//! One connection per node, made again with backoff when it breaks
//! (`link.rs`); TLS by rustls as the URL's `sslmode` says (`tls.rs`); the
//! password from the URL, `PGPASSWORD` or a password file
//! (`password.rs`). The engine's keys map onto rows in `keys.rs`. The
//! same way in runs a user's query for `snowmint audit` (`copy_out.rs`).

mod copy_out;
mod keys;
mod link;
mod password;
mod schema;
mod tls;

pub use copy_out::copy_out;
pub use schema::postgres_schema;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};

use crate::coordinator::{
    Backend, BackendError, GuardedWrite, Opened, PostgresUrl, Secret, Versioned,
};
use crate::reason::io_cause;
use keys::Key;
use link::{Conn, Link};

/// Claims slots through tables of a PostgreSQL database
/// (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=...]`).
pub struct PostgresBackend {
    link: Link,
}

impl PostgresBackend {
    /// A backend for the database `url` names.
    pub fn new(url: PostgresUrl) -> PostgresBackend {
        PostgresBackend {
            link: Link::new(url, None),
        }
    }

    /// The same backend, logging in with `password` when the URL holds
    /// none (before `PGPASSWORD` and password files are looked at).
    pub fn with_password(self, password: Secret) -> PostgresBackend {
        let url = self.link.url().clone();
        PostgresBackend {
            link: Link::new(url, Some(password)),
        }
    }

    /// Runs `statement` on the connection, connecting first if needed. A
    /// call dropped before its answer (the engine's time limit) or that
    /// broke the connection drops the connection.
    async fn query(
        &self,
        session: &PostgresSession,
        statement: impl Fn(&Conn) -> &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, BackendError> {
        let conn = self.link.conn(session.ttl).await?;
        let mut call = Call {
            link: &self.link,
            conn: Some(conn.clone()),
        };
        let result = conn.client.query(statement(&conn), params).await;
        match result {
            Ok(rows) => {
                call.conn = None;
                Ok(rows)
            }
            Err(error) => {
                if !error.is_closed() && error.as_db_error().is_some() {
                    // The server answered: the connection is sound.
                    call.conn = None;
                }
                Err(classify(error))
            }
        }
    }
}

/// One call on one connection; drops the connection when dropped before
/// it finished soundly.
struct Call<'a> {
    link: &'a Link,
    conn: Option<Arc<Conn>>,
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.link.discard(&conn);
        }
    }
}

/// A session: rows of `slots` name it while it holds them.
pub struct PostgresSession {
    id: String,
    ttl: Duration,
}

impl PostgresSession {
    fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A session id no other node draws: 128 random bits, in hex.
fn new_session_id() -> String {
    // std's hasher is seeded at random for each instance.
    let high = RandomState::new().build_hasher().finish();
    let low = RandomState::new().build_hasher().finish();
    format!("{high:016x}{low:016x}")
}

/// Sorts a client error into what the engine must know (was the server
/// reached?) and a few plain words for the message; the error itself
/// stays behind as the source, for the log.
pub(crate) fn classify(error: tokio_postgres::Error) -> BackendError {
    let reason = if let Some(db) = error.as_db_error() {
        let code = db.code();
        let unreachable = code.code().starts_with("08")
            || [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(code);
        let words = db.message().to_owned();
        if unreachable {
            BackendError::unreachable(words)
        } else {
            BackendError::unavailable(words)
        }
    } else if let Some(words) = io_cause(&error) {
        BackendError::unreachable(words)
    } else if error.is_closed() {
        BackendError::unreachable("the connection was closed")
    } else {
        // tokio-postgres's own words, without its error chain.
        let text = error.to_string();
        BackendError::unavailable(text.split(':').next().unwrap_or(&text).trim().to_owned())
    };
    reason.with_source(error)
}

impl Backend for PostgresBackend {
    type Session = PostgresSession;

    const KIND: &'static str = "postgres";
    const SESSION_NAME: &'static str = "session";
    const GUARD_PROVES_OWNER: bool = true;

    fn url(&self) -> String {
        self.link.url().to_string()
    }

    async fn open_session(
        &self,
        ttl: Duration,
        _dirs: &[String],
    ) -> Result<Opened<PostgresSession>, BackendError> {
        // Connecting also makes sure the tables are there.
        self.link.conn(ttl).await?;
        let id = new_session_id();
        Ok(Opened {
            session: PostgresSession {
                id: id.clone(),
                ttl,
            },
            ttl,
            id,
        })
    }

    async fn list(
        &self,
        session: &PostgresSession,
        dir: &str,
    ) -> Result<Vec<String>, BackendError> {
        let rows = match Key::parse(dir)? {
            Key::Slots { fleet } => {
                self.query(session, |c| &c.statements.list, &[&fleet])
                    .await?
            }
            Key::Histories { fleet } => {
                self.query(session, |c| &c.statements.list_histories, &[&fleet])
                    .await?
            }
            _ => {
                return Err(BackendError::unavailable(format!(
                    "{dir} is not a list of slots"
                )));
            }
        };
        Ok(rows
            .iter()
            .map(|row| row.get::<_, i64>(0).to_string())
            .collect())
    }

    async fn create_if_absent(
        &self,
        session: &PostgresSession,
        paths: &[String],
        value: &[u8],
    ) -> Result<bool, BackendError> {
        let (fleet, slots) = slot_keys(paths)?;
        let holder = String::from_utf8_lossy(value);
        let holder: &str = &holder;
        let claimed = self
            .query(
                session,
                |c| &c.statements.claim,
                &[&fleet, &slots, &holder, &session.id, &session.ttl_ms()],
            )
            .await;
        match claimed {
            Ok(rows) => Ok(!rows.is_empty()),
            // Some of the slots were held by another session: the
            // statement failed on purpose and nothing was claimed (see
            // `schema.rs`); a deadlock between two claims likewise.
            Err(error)
                if sql_state(&error).is_some_and(|code| {
                    *code == SqlState::DIVISION_BY_ZERO || *code == SqlState::T_R_DEADLOCK_DETECTED
                }) =>
            {
                Ok(false)
            }
            Err(error) => Err(error),
        }
    }

    async fn create_record(
        &self,
        session: &PostgresSession,
        path: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, BackendError> {
        let Key::Layout { fleet } = Key::parse(path)? else {
            return Err(BackendError::unavailable(format!("{path} is not a record")));
        };
        let layout = String::from_utf8_lossy(value);
        let layout: &str = &layout;
        let created = self
            .query(session, |c| &c.statements.create_layout, &[&fleet, &layout])
            .await?;
        if !created.is_empty() {
            return Ok(None);
        }
        match self.read(session, path).await? {
            Some(found) => Ok(Some(found.value)),
            None => Err(BackendError::unavailable(format!(
                "the layout of fleet {fleet} was deleted while it was read"
            ))),
        }
    }

    async fn keep_alive(
        &self,
        session: &PostgresSession,
        held: &[String],
    ) -> Result<Duration, BackendError> {
        if held.is_empty() {
            self.query(session, |c| &c.statements.ping, &[]).await?;
            return Ok(session.ttl);
        }
        let (fleet, slots) = slot_keys(held)?;
        let rows = self
            .query(
                session,
                |c| &c.statements.keep,
                &[&fleet, &slots, &session.id, &session.ttl_ms()],
            )
            .await?;
        let kept: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
        if let Some(slot) = slots.iter().find(|slot| !kept.contains(slot)) {
            return Err(BackendError::lost(format!(
                "slot {slot} of fleet {fleet} is no longer held by session {}",
                session.id
            )));
        }
        Ok(session.ttl)
    }

    async fn read(
        &self,
        session: &PostgresSession,
        path: &str,
    ) -> Result<Option<Versioned>, BackendError> {
        match Key::parse(path)? {
            // A live claim's holder; an expired row is a free slot.
            Key::Slot { fleet, slot } => {
                let rows = self
                    .query(session, |c| &c.statements.read_slot, &[&fleet, &slot])
                    .await?;
                Ok(rows.first().map(|row| Versioned {
                    value: row.get::<_, String>(0).into_bytes(),
                    version: 0,
                }))
            }
            Key::Mark { fleet, slot } => {
                let rows = self
                    .query(session, |c| &c.statements.read_mark, &[&fleet, &slot])
                    .await?;
                Ok(rows.first().map(|row| Versioned {
                    value: row.get::<_, i64>(0).to_string().into_bytes(),
                    version: row.get(1),
                }))
            }
            Key::History { fleet, slot } => {
                let rows = self
                    .query(session, |c| &c.statements.read_history, &[&fleet, &slot])
                    .await?;
                Ok(rows.first().map(|row| Versioned {
                    value: row.get::<_, String>(0).into_bytes(),
                    version: row.get(1),
                }))
            }
            Key::Layout { fleet } => {
                let rows = self
                    .query(session, |c| &c.statements.read_layout, &[&fleet])
                    .await?;
                Ok(rows.first().map(|row| Versioned {
                    value: row.get::<_, String>(0).into_bytes(),
                    version: 0,
                }))
            }
            _ => Err(BackendError::unavailable(format!(
                "{path} is not a key that can be read"
            ))),
        }
    }

    async fn write_guarded(
        &self,
        session: &PostgresSession,
        guard: &str,
        path: &str,
        value: &[u8],
        expected: Option<i64>,
    ) -> Result<GuardedWrite, BackendError> {
        let (fleet, guard_slot) = Key::slot(guard)?;
        let (written_fleet, slot, history) = match Key::parse(path)? {
            Key::Mark { fleet, slot } => (fleet, slot, false),
            Key::History { fleet, slot } => (fleet, slot, true),
            _ => {
                return Err(BackendError::unavailable(format!(
                    "{path} is not a key that a guarded write can change"
                )));
            }
        };
        if written_fleet != fleet {
            return Err(BackendError::unavailable(format!(
                "{guard} cannot guard {path}, a key of another fleet"
            )));
        }
        let text = String::from_utf8_lossy(value);
        let rows = if history {
            let text: &str = &text;
            match expected {
                Some(version) => {
                    self.query(
                        session,
                        |c| &c.statements.update_history,
                        &[&fleet, &guard_slot, &session.id, &slot, &text, &version],
                    )
                    .await?
                }
                None => {
                    self.query(
                        session,
                        |c| &c.statements.create_history,
                        &[&fleet, &guard_slot, &session.id, &slot, &text],
                    )
                    .await?
                }
            }
        } else {
            let mark_ms: i64 = text.trim().parse().map_err(|_| {
                BackendError::unavailable(format!("{text:?} is not a millisecond count"))
            })?;
            match expected {
                Some(version) => {
                    self.query(
                        session,
                        |c| &c.statements.update_mark,
                        &[&fleet, &guard_slot, &session.id, &slot, &mark_ms, &version],
                    )
                    .await?
                }
                None => {
                    self.query(
                        session,
                        |c| &c.statements.create_mark,
                        &[&fleet, &guard_slot, &session.id, &slot, &mark_ms],
                    )
                    .await?
                }
            }
        };
        let row = rows
            .first()
            .ok_or_else(|| BackendError::unavailable("the mark write returned no row"))?;
        let owned: bool = row.get(0);
        let written: Option<i64> = row.get(1);
        Ok(match (owned, written) {
            (true, Some(version)) => GuardedWrite::Written { version },
            (true, None) => GuardedWrite::Conflict,
            (false, _) => GuardedWrite::GuardLost,
        })
    }

    async fn clock(
        &self,
        session: &PostgresSession,
        _path: &str,
    ) -> Result<Option<i64>, BackendError> {
        let rows = self.query(session, |c| &c.statements.clock, &[]).await?;
        Ok(rows.first().map(|row| row.get::<_, i64>(0)))
    }

    async fn release(
        &self,
        session: &PostgresSession,
        held: &[String],
    ) -> Result<(), BackendError> {
        if held.is_empty() {
            return Ok(());
        }
        let (fleet, slots) = slot_keys(held)?;
        self.query(
            session,
            |c| &c.statements.release,
            &[&fleet, &slots, &session.id],
        )
        .await?;
        Ok(())
    }
}

/// The fleet and the slots of slot keys (all of one fleet).
fn slot_keys(paths: &[String]) -> Result<(&str, Vec<i64>), BackendError> {
    let mut fleet = "";
    let mut slots = Vec::with_capacity(paths.len());
    for path in paths {
        let (its_fleet, slot) = Key::slot(path)?;
        fleet = its_fleet;
        slots.push(slot);
    }
    Ok((fleet, slots))
}

/// The SQLSTATE of a backend error the database answered with.
fn sql_state(error: &BackendError) -> Option<&SqlState> {
    std::error::Error::source(error)?
        .downcast_ref::<tokio_postgres::Error>()?
        .code()
}

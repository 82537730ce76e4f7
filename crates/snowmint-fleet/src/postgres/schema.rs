//! The tables, created if absent, the rights a node needs on them, and
//! the statements each primitive runs, prepared once per connection.
//!
//! Every expiry is counted on the database's clock (`now()`, the start of
//! the statement's transaction, which is one statement here), never on
//! the node's.

use tokio_postgres::{Client, Statement};

use super::classify;
use crate::coordinator::BackendError;

/// The tables in schema `schema`, as `CREATE ... IF NOT EXISTS`
/// statements: what a node runs when they are missing, and what an
/// administrator can run by hand for a role that may not create them.
///
/// - `slots`: who holds each slot of each fleet, for which session, and
///   until when (on the database's clock).
/// - `marks`: each slot's high-water mark, and the version a
///   compare-and-set names.
/// - `fleets`: the layout each fleet's IDs are made in.
///
/// # Examples
///
/// ```
/// let ddl = snowmint_fleet::postgres_schema("snowmint");
/// assert!(ddl.starts_with("CREATE SCHEMA IF NOT EXISTS snowmint;\n"));
/// assert!(ddl.contains("CREATE TABLE IF NOT EXISTS snowmint.slots ("));
/// ```
pub fn postgres_schema(schema: &str) -> String {
    format!("CREATE SCHEMA IF NOT EXISTS {schema};\n{}", tables(schema))
}

fn tables(s: &str) -> String {
    format!(
        "\
CREATE TABLE IF NOT EXISTS {s}.slots (
    fleet      text        NOT NULL,
    slot       bigint      NOT NULL,
    holder     text        NOT NULL,
    session    text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (fleet, slot)
);
CREATE TABLE IF NOT EXISTS {s}.marks (
    fleet   text   NOT NULL,
    slot    bigint NOT NULL,
    mark_ms bigint NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (fleet, slot)
);
CREATE TABLE IF NOT EXISTS {s}.fleets (
    fleet  text PRIMARY KEY,
    layout text NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.claims (
    fleet   text   NOT NULL,
    slot    bigint NOT NULL,
    history text   NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (fleet, slot)
);
"
    )
}

/// The tables and the rights a node needs on each.
const NEEDS: [(&str, &[&str]); 4] = [
    ("slots", &["SELECT", "INSERT", "UPDATE", "DELETE"]),
    ("marks", &["SELECT", "INSERT", "UPDATE"]),
    ("fleets", &["SELECT", "INSERT"]),
    ("claims", &["SELECT", "INSERT", "UPDATE"]),
];

/// The statements of the primitives, prepared on one connection.
pub(super) struct Statements {
    /// (fleet) -> slot of every live claim.
    pub(super) list: Statement,
    /// (fleet) -> slot of every claim history.
    pub(super) list_histories: Statement,
    /// (fleet, slots, holder, session, ttl_ms) -> a row per slot if all
    /// were claimed (each free, or its lease expired); none if none was;
    /// a division by zero, undoing them, if only some were.
    pub(super) claim: Statement,
    /// (fleet, slots, session, ttl_ms) -> a row per slot whose lease was
    /// still this session's and is now extended.
    pub(super) keep: Statement,
    /// () -> the database's time; proves it answers.
    pub(super) ping: Statement,
    /// (fleet, slots, session) -> rows deleted.
    pub(super) release: Statement,
    /// (fleet, slot) -> holder of a live claim.
    pub(super) read_slot: Statement,
    /// (fleet, slot) -> (mark_ms, version).
    pub(super) read_mark: Statement,
    /// (fleet) -> layout.
    pub(super) read_layout: Statement,
    /// (fleet, layout) -> a row if created.
    pub(super) create_layout: Statement,
    /// (fleet, guard slot, session, slot, mark_ms, version) -> (guard
    /// held, new version if written).
    pub(super) update_mark: Statement,
    /// (fleet, guard slot, session, slot, mark_ms) -> (guard held, new
    /// version if written).
    pub(super) create_mark: Statement,
    /// (fleet, slot) -> (history, version).
    pub(super) read_history: Statement,
    /// (fleet, guard slot, session, slot, history, version) -> (guard
    /// held, new version if written).
    pub(super) update_history: Statement,
    /// (fleet, guard slot, session, slot, history) -> (guard held, new
    /// version if written).
    pub(super) create_history: Statement,
    /// () -> the database's clock now, Unix ms.
    pub(super) clock: Statement,
}

/// The guard of a mark write: the slot row, still this session's and
/// unexpired, locked against a concurrent take-over until the write
/// commits.
fn owner(s: &str) -> String {
    format!(
        "owner AS (SELECT slot FROM {s}.slots \
         WHERE fleet = $1::text AND slot = $2::bigint AND session = $3::text AND expires_at >= now() \
         FOR SHARE)"
    )
}

/// Makes sure the tables exist and the role may use them, then prepares
/// the statements.
pub(super) async fn prepare(client: &Client, schema: &str) -> Result<Statements, BackendError> {
    ensure_tables(client, schema).await?;
    let s = schema;
    let owner = owner(s);
    let ttl = "now() + $5::bigint * interval '1 millisecond'";
    let prepare = |sql: String| async move { client.prepare(&sql).await.map_err(classify) };
    // Sent together: tokio-postgres pipelines them on the connection, so
    // they cost about one round trip, not ten.
    let (list, claim, keep, ping, release) = tokio::try_join!(
        prepare(format!(
            "SELECT slot FROM {s}.slots WHERE fleet = $1::text AND expires_at >= now()"
        )),
        // Every slot of the array (ascending, so that two claims of one
        // block lock its rows in the same order) is inserted or taken over
        // from an expired lease. One statement is one transaction: when
        // only some could be (another session holds the rest), the
        // division by zero fails the statement and undoes them all.
        prepare(format!(
            "WITH claimed AS (\
               INSERT INTO {s}.slots AS held (fleet, slot, holder, session, expires_at) \
               SELECT $1::text, wanted.slot, $3::text, $4::text, {ttl} \
               FROM unnest($2::bigint[]) AS wanted(slot) ORDER BY wanted.slot \
               ON CONFLICT (fleet, slot) DO UPDATE \
               SET holder = excluded.holder, session = excluded.session, expires_at = excluded.expires_at \
               WHERE held.expires_at < now() \
               RETURNING slot), \
             won AS (SELECT count(*) AS n FROM claimed) \
             SELECT claimed.slot FROM claimed, won \
             WHERE CASE WHEN won.n = cardinality($2::bigint[]) THEN true ELSE won.n / 0 > 0 END"
        )),
        prepare(format!(
            "UPDATE {s}.slots SET expires_at = now() + $4::bigint * interval '1 millisecond' \
             WHERE fleet = $1::text AND slot = ANY($2::bigint[]) AND session = $3::text AND expires_at >= now() \
             RETURNING slot"
        )),
        prepare("SELECT now()".to_owned()),
        prepare(format!(
            "DELETE FROM {s}.slots WHERE fleet = $1::text AND slot = ANY($2::bigint[]) AND session = $3::text"
        )),
    )?;
    let (read_slot, read_mark, read_layout, create_layout, update_mark, create_mark) = tokio::try_join!(
        prepare(format!(
            "SELECT holder FROM {s}.slots \
             WHERE fleet = $1::text AND slot = $2::bigint AND expires_at >= now()"
        )),
        prepare(format!(
            "SELECT mark_ms, version FROM {s}.marks WHERE fleet = $1::text AND slot = $2::bigint"
        )),
        prepare(format!(
            "SELECT layout FROM {s}.fleets WHERE fleet = $1::text"
        )),
        prepare(format!(
            "INSERT INTO {s}.fleets (fleet, layout) VALUES ($1::text, $2::text) \
             ON CONFLICT (fleet) DO NOTHING RETURNING fleet"
        )),
        prepare(format!(
            "WITH {owner}, written AS (\
               UPDATE {s}.marks SET mark_ms = $5::bigint, version = version + 1 \
               WHERE fleet = $1::text AND slot = $4::bigint AND version = $6::bigint \
               AND EXISTS (SELECT 1 FROM owner) \
               RETURNING version) \
             SELECT EXISTS (SELECT 1 FROM owner), (SELECT version FROM written)"
        )),
        prepare(format!(
            "WITH {owner}, written AS (\
               INSERT INTO {s}.marks (fleet, slot, mark_ms, version) \
               SELECT $1::text, $4::bigint, $5::bigint, 1 WHERE EXISTS (SELECT 1 FROM owner) \
               ON CONFLICT (fleet, slot) DO NOTHING \
               RETURNING version) \
             SELECT EXISTS (SELECT 1 FROM owner), (SELECT version FROM written)"
        )),
    )?;
    let (read_history, update_history, create_history, clock, list_histories) = tokio::try_join!(
        prepare(format!(
            "SELECT history, version FROM {s}.claims WHERE fleet = $1::text AND slot = $2::bigint"
        )),
        prepare(format!(
            "WITH {owner}, written AS (\
               UPDATE {s}.claims SET history = $5::text, version = version + 1 \
               WHERE fleet = $1::text AND slot = $4::bigint AND version = $6::bigint \
               AND EXISTS (SELECT 1 FROM owner) \
               RETURNING version) \
             SELECT EXISTS (SELECT 1 FROM owner), (SELECT version FROM written)"
        )),
        prepare(format!(
            "WITH {owner}, written AS (\
               INSERT INTO {s}.claims (fleet, slot, history, version) \
               SELECT $1::text, $4::bigint, $5::text, 1 WHERE EXISTS (SELECT 1 FROM owner) \
               ON CONFLICT (fleet, slot) DO NOTHING \
               RETURNING version) \
             SELECT EXISTS (SELECT 1 FROM owner), (SELECT version FROM written)"
        )),
        // clock_timestamp(), not now(): now() is when the transaction
        // began, which a pooler or a long transaction could make stale.
        prepare("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint".to_owned()),
        prepare(format!(
            "SELECT slot FROM {s}.claims WHERE fleet = $1::text"
        )),
    )?;
    Ok(Statements {
        list,
        list_histories,
        claim,
        keep,
        ping,
        release,
        read_slot,
        read_mark,
        read_layout,
        create_layout,
        update_mark,
        create_mark,
        read_history,
        update_history,
        create_history,
        clock,
    })
}

/// What the database says of the schema and its tables, for this role.
struct Found {
    role: String,
    database: String,
    schema_exists: bool,
    schema_usage: bool,
    /// Per table of [`NEEDS`]: whether it exists, and the rights lacked.
    tables: Vec<(bool, Vec<&'static str>)>,
}

async fn inspect(client: &Client, schema: &str) -> Result<Found, BackendError> {
    let row = client
        .query_one(
            "SELECT current_user::text, current_database()::text, n.oid IS NOT NULL, \
             COALESCE(has_schema_privilege(n.oid, 'USAGE'), false) \
             FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = $1::text",
            &[&schema],
        )
        .await
        .map_err(classify)?;
    let mut found = Found {
        role: row.get(0),
        database: row.get(1),
        schema_exists: row.get(2),
        schema_usage: row.get(3),
        tables: Vec::new(),
    };
    let names: Vec<&str> = NEEDS.iter().map(|(table, _)| *table).collect();
    let rows = client
        .query(
            "SELECT c.oid IS NOT NULL, \
             COALESCE(has_table_privilege(c.oid, 'SELECT'), false), \
             COALESCE(has_table_privilege(c.oid, 'INSERT'), false), \
             COALESCE(has_table_privilege(c.oid, 'UPDATE'), false), \
             COALESCE(has_table_privilege(c.oid, 'DELETE'), false) \
             FROM unnest($2::text[]) WITH ORDINALITY AS t(name, n) \
             LEFT JOIN pg_namespace ns ON ns.nspname = $1::text \
             LEFT JOIN pg_class c ON c.relnamespace = ns.oid AND c.relname = t.name \
             ORDER BY t.n",
            &[&schema, &names],
        )
        .await
        .map_err(classify)?;
    for ((_, rights), row) in NEEDS.iter().zip(&rows) {
        let exists: bool = row.get(0);
        let lacked = ["SELECT", "INSERT", "UPDATE", "DELETE"]
            .iter()
            .enumerate()
            .filter(|(at, right)| rights.contains(right) && exists && !row.get::<_, bool>(at + 1))
            .map(|(_, right)| *right)
            .collect();
        found.tables.push((exists, lacked));
    }
    Ok(found)
}

/// Creates what is missing; fails with a sentence naming what is missing
/// or lacked, and by whom, when the role may not.
async fn ensure_tables(client: &Client, schema: &str) -> Result<(), BackendError> {
    let found = inspect(client, schema).await?;
    let role = &found.role;
    if found.tables.iter().all(|(exists, _)| *exists) {
        let mut lacked = Vec::new();
        if !found.schema_usage {
            lacked.push(format!("USAGE on schema {schema}"));
        }
        for ((table, _), (_, rights)) in NEEDS.iter().zip(&found.tables) {
            if !rights.is_empty() {
                lacked.push(format!("{} on table {schema}.{table}", rights.join(", ")));
            }
        }
        if lacked.is_empty() {
            return Ok(());
        }
        return Err(BackendError::unavailable(format!(
            "role {role:?} lacks {}",
            lacked.join("; ")
        )));
    }
    // One node at a time creates, so that two creating the same table do
    // not collide in the catalogue.
    let mut ddl =
        String::from("BEGIN;\nSELECT pg_advisory_xact_lock(hashtext('snowmint schema'));\n");
    if !found.schema_exists {
        ddl.push_str(&format!("CREATE SCHEMA IF NOT EXISTS {schema};\n"));
    }
    ddl.push_str(&tables(schema));
    ddl.push_str("COMMIT;\n");
    match client.batch_execute(&ddl).await {
        Ok(()) => {
            tracing::info!(schema, "created the tables of the fleet coordinator");
            Ok(())
        }
        Err(error)
            if error.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) =>
        {
            let missing: Vec<String> = NEEDS
                .iter()
                .zip(&found.tables)
                .filter(|(_, (exists, _))| !exists)
                .map(|((table, _), _)| format!("{schema}.{table}"))
                .collect();
            let reason = if found.schema_exists {
                let (tables, verb, them) = match missing.len() {
                    1 => ("table", "does", "it"),
                    _ => ("tables", "do", "them"),
                };
                format!(
                    "{tables} {} {verb} not exist and role {role:?} may not create {them} in \
                     schema {schema} (it lacks CREATE on the schema); create the tables as the \
                     fleet guide (docs/fleet.md) shows, or grant CREATE",
                    missing.join(", ")
                )
            } else {
                format!(
                    "schema {schema} does not exist and role {role:?} may not create it \
                     (it lacks CREATE on database {:?}); create the schema and tables as the \
                     fleet guide (docs/fleet.md) shows, or grant CREATE",
                    found.database
                )
            };
            Err(BackendError::unavailable(reason).with_source(error))
        }
        Err(error) => Err(classify(error)),
    }
}

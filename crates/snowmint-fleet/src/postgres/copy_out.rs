//! A query of the user's run over the fleet's way into PostgreSQL (TLS as
//! the URL's `sslmode` says, the password as a node finds it), its rows
//! streamed out as text: what `snowmint audit --postgres URL --query SQL`
//! reads, in bounded memory however many rows there are.

use tokio_stream::StreamExt;

use super::link::open;
use crate::FleetError;
use crate::coordinator::{PostgresUrl, Secret};

/// Runs `COPY (query) TO STDOUT` on the server `url` names, as the role
/// it names, with `password` (else the URL's, `PGPASSWORD` or the
/// password file), and hands the rows to `sink` as they come: PostgreSQL's
/// COPY text, a row per line, columns separated by tabs, NULL as `\N`.
/// `sink` may stop the copy with a reason.
///
/// Nothing is created or written: unlike a node, no table of the fleet is
/// made.
///
/// # Errors
///
/// [`FleetError::Coordinator`] when the server cannot be reached, refuses
/// the login or the query, or `sink` stops the copy.
pub async fn copy_out(
    url: &PostgresUrl,
    password: Option<&Secret>,
    query: &str,
    sink: &mut (dyn FnMut(&[u8]) -> Result<(), String> + Send),
) -> Result<(), FleetError> {
    let failed = |message: String| FleetError::Coordinator {
        coordinator: url.to_string(),
        message,
    };
    let (client, task) = open(url, password)
        .await
        .map_err(|error| failed(error.reason().to_owned()))?;
    let query = query.trim().trim_end_matches(';');
    let copied = async {
        let statement = format!("COPY ({query}) TO STDOUT");
        let stream = client
            .copy_out(statement.as_str())
            .await
            .map_err(|error| failed(format!("the query failed: {}", database_reason(&error))))?;
        let mut stream = std::pin::pin!(stream);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| {
                failed(format!("the copy broke off: {}", database_reason(&error)))
            })?;
            sink(&chunk).map_err(failed)?;
        }
        Ok(())
    }
    .await;
    task.abort();
    copied
}

/// The server's own message for an error it sent, else the client's.
fn database_reason(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => error.to_string(),
    }
}

//! What can go wrong when asking a fleet for IDs.

use std::time::Duration;

use snowmint_fleet::FleetError;

/// Why the client could not hand out IDs, or could not be built.
///
/// # Examples
///
/// ```
/// # #[tokio::main]
/// # async fn main() -> Result<(), snowmint_client::Error> {
/// use snowmint_client::{Client, Error};
/// use std::time::Duration;
///
/// // A node that does not answer: the call gives up at its deadline.
/// let client = Client::builder()
///     .endpoints(["http://127.0.0.1:9"])
///     .deadline(Duration::from_millis(300))
///     .build()
///     .await?;
/// match client.next_id().await {
///     Err(Error::Unavailable { deadline, attempts }) => {
///         assert_eq!(deadline, Duration::from_millis(300));
///         assert!(attempts.iter().all(|a| a.starts_with("http://127.0.0.1:9")), "{attempts:?}");
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No node answered with IDs within the call's deadline. `attempts`
    /// says what each node last answered, newest last.
    #[error(
        "no node could serve IDs within {} ms: {}",
        deadline.as_millis(),
        if attempts.is_empty() { "no node was known".to_owned() } else { attempts.join("; ") }
    )]
    Unavailable {
        /// The call's deadline.
        deadline: Duration,
        /// `ENDPOINT: what went wrong`, one per failed attempt (the last
        /// few).
        attempts: Vec<String>,
    },
    /// A value given to the client is out of range; the message names it,
    /// its value and the range.
    #[error("{0}")]
    InvalidArgument(String),
    /// A node refused the client's credentials (`UNAUTHENTICATED`): no
    /// token, or one it does not accept. Not retried on other nodes: a
    /// fleet shares its token files, so the others would refuse it too.
    /// The message is the node's, which never quotes the token.
    #[error("{endpoint} refused this client's token: {message}")]
    Unauthenticated {
        /// The node that refused.
        endpoint: String,
        /// What it said.
        message: String,
    },
    /// The builder's settings cannot be used.
    #[error("{0}")]
    Config(String),
    /// The fleet's nodes could not be read from the coordinator. The
    /// message is the context alone: the fleet's error (which coordinator,
    /// and what it said) is the source, which error reports print after
    /// it.
    #[error("cannot discover the fleet's nodes")]
    Discovery(#[source] FleetError),
}

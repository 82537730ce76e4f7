//! Finding the nodes of a fleet from the coordinator's slot keys.
//!
//! Each node that serves gRPC writes `grpc=HOST:PORT` into the value of
//! the slot key it holds (`/snowmint/<fleet>/slots/<slot>`); the key goes
//! away with the node's lease or session. Reading the keys therefore lists
//! the nodes that hold a slot now. A node that listens on an unspecified
//! address (`0.0.0.0`) is written as such and cannot be reached by it:
//! give such nodes a concrete `--grpc-listen` address.

use std::sync::Weak;
use std::time::Duration;

use snowmint_fleet::{CoordinatorAccess, CoordinatorUrl, FleetName};

use crate::Error;
use crate::client::Shared;

/// The gRPC endpoints of the nodes holding a slot of `fleet` now, by slot.
pub(crate) async fn endpoints(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    fleet: &FleetName,
) -> Result<Vec<String>, Error> {
    let holders = snowmint_fleet::read_holders_with(url, access, fleet)
        .await
        .map_err(Error::Discovery)?;
    Ok(holders
        .into_values()
        .filter_map(|holder| holder.grpc)
        .map(|address| format!("http://{address}"))
        .collect())
}

/// Reads the slot keys every `every` and replaces the client's nodes with
/// `fixed` and what it finds; stops when the client is dropped. A reading
/// that fails keeps the nodes as they were.
pub(crate) async fn follow(
    client: Weak<Shared>,
    url: CoordinatorUrl,
    access: CoordinatorAccess,
    fleet: FleetName,
    fixed: Vec<String>,
    every: Duration,
) {
    loop {
        tokio::time::sleep(every).await;
        let found = endpoints(&url, &access, &fleet).await;
        let Some(shared) = client.upgrade() else {
            return;
        };
        match found {
            Ok(found) => shared.set_discovered(&fixed, &found),
            Err(error) => tracing::warn!(error = %chain(&error), "keeping the nodes known so far"),
        }
    }
}

/// `error` and its sources, each after a colon.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

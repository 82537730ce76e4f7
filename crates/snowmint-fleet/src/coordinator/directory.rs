//! Reading a fleet's slot keys from outside it: who holds which slot, and
//! where it listens. Clients use this to find the nodes of a fleet.

use std::collections::BTreeMap;
use std::time::Duration;

use super::backend::Backend;
use super::dispatch::{UseBackend, with_backend};
use super::paths::Paths;
use super::{CoordinatorAccess, CoordinatorUrl, FleetName, Holder};
use crate::{BoxFuture, FleetError};

/// How long the short session of one reading lives if the reader dies
/// before ending it.
const READER_TTL: Duration = Duration::from_secs(5);

/// The holders of `fleet`'s slots on the coordinator at `url`, by slot, as
/// they are now: one short session that lists the slot keys, reads each and
/// ends. Keys whose value is not a holder this version can read are left
/// out, and so are keys that vanish between the listing and the reading.
/// For a secured coordinator, see [`read_holders_with`].
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use snowmint_fleet::{CoordinatorUrl, FleetName, read_holders};
///
/// let url: CoordinatorUrl = "etcd://10.0.0.9:2379".parse()?;
/// let fleet: FleetName = "ids".parse()?;
/// for (slot, holder) in read_holders(&url, &fleet).await? {
///     println!("slot {slot}: {} pid {}, gRPC {:?}", holder.host, holder.pid, holder.grpc);
/// }
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`FleetError::Coordinator`] when the coordinator cannot be reached or
/// answers with an error, or this build lacks its backend (cargo features
/// `etcd`, `zookeeper`, `postgres`).
pub async fn read_holders(
    url: &CoordinatorUrl,
    fleet: &FleetName,
) -> Result<BTreeMap<u64, Holder>, FleetError> {
    read_holders_with(url, &CoordinatorAccess::default(), fleet).await
}

/// [`read_holders`] from a secured coordinator: TLS and credentials as
/// `access` says (the same a node of the fleet is given). On ZooKeeper,
/// a reader needs the fleet's credentials unless its nodes grant world
/// read.
///
/// # Errors
///
/// As [`read_holders`]; also access settings that do not fit the URL
/// ([`CoordinatorAccess::check`]).
pub async fn read_holders_with(
    url: &CoordinatorUrl,
    access: &CoordinatorAccess,
    fleet: &FleetName,
) -> Result<BTreeMap<u64, Holder>, FleetError> {
    with_backend(url, access, ReadHolders(fleet))?.await
}

/// Reads the slot keys of a fleet with whichever backend the URL names.
struct ReadHolders<'a>(&'a FleetName);

impl<'a> UseBackend for ReadHolders<'a> {
    type Output = BoxFuture<'a, Result<BTreeMap<u64, Holder>, FleetError>>;

    fn with<B: Backend>(self, backend: B) -> Self::Output {
        Box::pin(async move { read_with(&backend, self.0).await })
    }
}

async fn read_with<B: Backend>(
    backend: &B,
    fleet: &FleetName,
) -> Result<BTreeMap<u64, Holder>, FleetError> {
    let failed = |error: super::BackendError| FleetError::Coordinator {
        coordinator: backend.url(),
        message: format!(
            "cannot read the slot keys of fleet {fleet}: {}",
            error.reason()
        ),
    };
    let paths = Paths::new(fleet.as_str());
    let opened = backend
        // The slots directory is made if missing (a fleet no node joined
        // yet), as the claim engine makes it; then it lists as empty.
        .open_session(READER_TTL, &[paths.slots_dir()])
        .await
        .map_err(failed)?;
    let session = opened.session;
    let read = async {
        let mut holders = BTreeMap::new();
        for name in backend.list(&session, &paths.slots_dir()).await? {
            let Ok(slot) = name.parse::<u64>() else {
                continue;
            };
            let Some(value) = backend.read(&session, &paths.slot(slot)).await? else {
                continue;
            };
            if let Some(holder) = std::str::from_utf8(&value.value)
                .ok()
                .and_then(Holder::parse)
            {
                holders.insert(slot, holder);
            }
        }
        Ok(holders)
    }
    .await;
    // The session holds nothing; ending it only saves the service work.
    let _ = backend.release(&session, None).await;
    read.map_err(failed)
}

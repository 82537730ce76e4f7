//! Reading a fleet's slot keys from outside it: who holds which slot, and
//! where it listens. Clients use this to find the nodes of a fleet.

use std::collections::BTreeMap;
use std::time::Duration;

use super::backend::Backend;
use super::paths::Paths;
use super::{FleetName, Holder};
use crate::FleetError;

/// How long the short session of one reading lives if the reader dies
/// before ending it.
const READER_TTL: Duration = Duration::from_secs(5);

/// The holders of `fleet`'s slots, read through `backend` in one short
/// session (see [`read_holders`](crate::read_holders)).
pub(crate) async fn read_with<B: Backend>(
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
    let _ = backend.release(&session, &[]).await;
    read.map_err(failed)
}

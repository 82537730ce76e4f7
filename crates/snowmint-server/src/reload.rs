//! Reading the TLS files and the token file again while the node runs.
//!
//! Their files are looked at every [`RELOAD_EVERY`]: one that changed (a
//! new modification time, length or inode, which covers edits in place
//! and the renames and symbolic-link swaps of Kubernetes secrets and
//! cert-manager) is read again. SIGHUP reads them all at once, changed or
//! not. A file that cannot be used is logged and counted
//! (`snowmint_reloads_total{file,result="failed"}`), and what was in force
//! stays.

use std::fs::Metadata;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::auth::Auth;
use crate::metrics::Metrics;
use crate::net::Tls;

/// How often the files are looked at.
pub const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// A file's identity and state: a change of any part is a change of the
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

impl FileStamp {
    /// The stamp of the file at `path` now (`None` when it cannot be
    /// read), following symbolic links: a link swapped to a new target is
    /// a new file.
    pub(crate) fn of(path: &Path) -> Option<FileStamp> {
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            modified: metadata.modified().ok(),
            len: metadata.len(),
            inode: inode(&metadata),
        })
    }
}

#[cfg(unix)]
fn inode(metadata: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(metadata)
}

#[cfg(not(unix))]
fn inode(_: &Metadata) -> u64 {
    0
}

/// Follows the files of `tls` and `auth` until the task is dropped.
pub(crate) async fn follow(tls: Option<Arc<Tls>>, auth: Option<Arc<Auth>>, metrics: Metrics) {
    if tls.is_none() && auth.is_none() {
        return;
    }
    #[cfg(unix)]
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(error) => {
            tracing::warn!(%error, "cannot listen for SIGHUP; files are still read again when they change");
            None
        }
    };
    let mut every = tokio::time::interval(RELOAD_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        #[cfg(unix)]
        let force = tokio::select! {
            _ = every.tick() => false,
            Some(()) = async { match hangup.as_mut() { Some(signal) => signal.recv().await, None => None } } => {
                tracing::info!("SIGHUP: reading the TLS and token files again");
                true
            }
        };
        #[cfg(not(unix))]
        let force = {
            every.tick().await;
            false
        };
        if let Some(tls) = &tls {
            match tls.reload(force) {
                Ok(false) => {}
                Ok(true) => {
                    metrics.reloaded("tls", true);
                    tracing::info!(
                        cert = %tls.files().cert.display(),
                        "TLS certificate and key read again; new connections use them"
                    );
                }
                Err(error) => {
                    metrics.reloaded("tls", false);
                    tracing::error!(%error, "TLS files not reloaded; the certificate in force stays");
                }
            }
        }
        if let Some(auth) = &auth {
            match auth.tokens().reload(force) {
                Ok(false) => {}
                Ok(true) if auth.tokens().revoked().is_some() => {
                    metrics.reloaded("tokens", true);
                    tracing::warn!(
                        reason = auth.tokens().revoked().unwrap_or_default(),
                        "every token is revoked: guarded endpoints refuse every request, and /readyz answers 503, until the file holds a token"
                    );
                }
                Ok(true) => {
                    metrics.reloaded("tokens", true);
                    tracing::info!(
                        file = %auth.tokens().path().display(),
                        tokens = auth.tokens().count(),
                        "token file read again"
                    );
                }
                Err(error) => {
                    metrics.reloaded("tokens", false);
                    tracing::error!(%error, "token file not reloaded; the tokens in force stay");
                }
            }
        }
    }
}

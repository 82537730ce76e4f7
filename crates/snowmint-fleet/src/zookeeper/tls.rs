//! TLS to ZooKeeper's secure client port: the client's options from the
//! files read, and the host names a certificate can be checked against.

use crate::coordinator::BackendError;
use zookeeper_client::Error;

/// The client's TLS options from the files read.
pub(super) fn tls_options(
    files: &crate::TlsFiles,
) -> Result<zookeeper_client::TlsOptions, BackendError> {
    let unusable = |error: Error| {
        BackendError::unavailable(format!(
            "the TLS files {} cannot be used: {error}",
            files.paths().ca().display()
        ))
    };
    let mut options = zookeeper_client::TlsOptions::new()
        .with_pem_ca(&String::from_utf8_lossy(&files.ca_pem))
        .map_err(unusable)?;
    if let Some((cert, key)) = &files.identity {
        options = options
            .with_pem_identity(&String::from_utf8_lossy(cert), key.expose())
            // The client's words could quote the key.
            .map_err(|_| {
                BackendError::unavailable(format!(
                    "the client certificate {} and its key cannot be used",
                    files
                        .paths()
                        .cert()
                        .map_or_else(String::new, |cert| cert.display().to_string())
                ))
            })?;
    }
    Ok(options)
}

/// Refuses a host that TLS cannot check a certificate against (the client
/// would stop on it).
pub(super) fn check_tls_name(host: &str) -> Result<(), BackendError> {
    let name = match host.rsplit_once(':') {
        Some((name, _)) => name,
        None => host,
    };
    let name = name
        .strip_prefix('[')
        .and_then(|name| name.strip_suffix(']'))
        .unwrap_or(name);
    rustls_pki_types::ServerName::try_from(name)
        .map(drop)
        .map_err(|_| {
            BackendError::unavailable(format!(
                "host {name:?} is no name a TLS certificate can be checked against"
            ))
        })
}

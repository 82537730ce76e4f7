//! Why a TLS connection to a server fails, found by one handshake of our
//! own: ZooKeeper's client tries every server and reports only that none
//! took the connection, so a wrong CA or a refused client certificate
//! would read as an unreachable ensemble. The probe makes one TLS
//! connection with the same files (rustls, blocking, on a thread of the
//! blocking pool), waits briefly after the handshake for the alert with
//! which a TLS 1.3 server refuses a client certificate, and returns the
//! rustls error it met, if any.
//!
//! A client that speaks cleartext to a server that speaks only TLS meets
//! a connection closed at once, in no words that say why: one handshake
//! of ours ([`speaks_tls`]) finds out whether the server answers in TLS.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use crate::TlsFiles;

/// How long each step of the probe may take.
const STEP: Duration = Duration::from_secs(2);

/// The rustls error a TLS connection to `host` (`HOST:PORT`) meets with
/// `files`, if any; `None` when the handshake went through, or failed for
/// a reason other than TLS (the server is down).
pub(crate) async fn tls_failure(host: &str, files: &TlsFiles) -> Option<rustls::Error> {
    let host = host.to_owned();
    let files = files.clone();
    tokio::task::spawn_blocking(move || probe(&host, &files))
        .await
        .ok()
        .flatten()
}

/// Whether the server at `host` (`HOST:PORT`) answers a TLS handshake.
/// The handshake trusts no authority, so a server that speaks TLS fails
/// it at its certificate, which it sends in its first answer; one that
/// does not fails it otherwise, or never answers (within a step).
#[cfg(feature = "etcd")]
pub(crate) async fn speaks_tls(host: &str) -> bool {
    let host = host.to_owned();
    tokio::task::spawn_blocking(move || {
        let config = ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(RootCertStore::empty())
        .with_no_client_auth();
        handshake(&host, config)
    })
    .await
    .ok()
    .flatten()
    .is_some_and(|error| matches!(error, rustls::Error::InvalidCertificate(_)))
}

fn probe(host: &str, files: &TlsFiles) -> Option<rustls::Error> {
    handshake(host, config(files)?)
}

/// The rustls error one TLS connection to `host` with `config` meets, if
/// any (see [`tls_failure`]).
fn handshake(host: &str, config: ClientConfig) -> Option<rustls::Error> {
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    let name = name
        .strip_prefix('[')
        .and_then(|name| name.strip_suffix(']'))
        .unwrap_or(name);
    let name = ServerName::try_from(name).ok()?.to_owned();
    let addr = host.to_socket_addrs().ok()?.next()?;
    let mut socket = TcpStream::connect_timeout(&addr, STEP).ok()?;
    socket.set_read_timeout(Some(STEP)).ok()?;
    socket.set_write_timeout(Some(STEP)).ok()?;
    let mut conn = ClientConnection::new(Arc::new(config), name).ok()?;
    let found = |error: std::io::Error| {
        error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .cloned()
    };
    while conn.is_handshaking() {
        if let Err(error) = conn.complete_io(&mut socket) {
            return found(error);
        }
    }
    // A TLS 1.3 server checks the client's certificate after the client
    // thinks the handshake done, and answers a refusal with an alert:
    // send a byte, and read what comes (or nothing, within a step).
    let _ = conn.writer().write_all(&[0]);
    let _ = conn.complete_io(&mut socket);
    let mut byte = [0u8; 1];
    match conn.reader().read(&mut byte) {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        _ => return None,
    }
    match conn.complete_io(&mut socket) {
        Err(error) => found(error),
        Ok(_) => None,
    }
}

fn config(files: &TlsFiles) -> Option<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&files.ca_pem) {
        roots.add(cert.ok()?).ok()?;
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .ok()?
    .with_root_certificates(roots);
    match &files.identity {
        None => Some(builder.with_no_client_auth()),
        Some((cert, key)) => {
            let chain = rustls::pki_types::CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            let key =
                rustls::pki_types::PrivateKeyDer::from_pem_slice(key.expose().as_bytes()).ok()?;
            builder.with_client_auth_cert(chain, key).ok()
        }
    }
}

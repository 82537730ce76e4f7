//! TLS on every listener whose protocol carries it: rustls on aws-lc-rs (the tree's one crypto
//! provider), the certificate and key read from PEM files and read again
//! when they change.
//!
//! - `--tls-cert` and `--tls-key` turn TLS on for every listener whose
//!   protocol carries it ([`Guard::TokensAndTls`]): HTTP (HTTP/1.1 and
//!   HTTP/2, chosen by ALPN) and gRPC (HTTP/2). A cleartext client fails
//!   the handshake. A protocol that carries no TLS is served beside it
//!   only as the configuration allows (loopback, or said to be open).
//! - `--tls-client-ca` requires a client certificate signed by one of the
//!   CAs in that file (mTLS), on those listeners.
//! - Rotation: each handshake takes the configuration in force when it
//!   starts; [`Tls::reload`] replaces it when a file changed, so new
//!   handshakes see the new certificate while open connections keep the
//!   session they have. A file that cannot be used at start stops the
//!   start; at a reload it is refused, logged and counted, and the
//!   configuration in force stays.
//! - Messages name the file and what is wrong with it, never its content:
//!   a malformed line of a key file would be key material.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::listener::{Guard, Listener};
use crate::reload::FileStamp;

/// The files TLS is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, PEM: the node's certificate first, then any
    /// intermediates.
    pub cert: PathBuf,
    /// The private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The CAs client certificates must be signed by (mTLS), PEM.
    pub client_ca: Option<PathBuf>,
}

/// Why TLS cannot be set up from the files. The message names the file
/// and what is wrong, never what the file holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file that cannot be read or used.
    #[error("TLS {what} {}: {reason}", path.display())]
    File {
        /// `certificate`, `key` or `client CA`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The key is not the certificate's.
    #[error(
        "TLS key {} does not belong to the certificate {} (the first certificate of the chain must be the key's)",
        key.display(),
        cert.display()
    )]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
    },
}

/// The node's TLS: the configuration in force for each listener, and the
/// files it was read from.
#[derive(Debug)]
pub struct Tls {
    files: TlsFiles,
    current: RwLock<Arc<Configs>>,
    /// What the files looked like when last read, to see a change.
    stamp: Mutex<Vec<Option<FileStamp>>>,
}

#[derive(Debug)]
struct Configs {
    /// By `Listener as usize`, with its ALPN protocols; `None` for a
    /// listener whose protocol carries no TLS.
    by_listener: [Option<Arc<ServerConfig>>; Listener::COUNT],
}

impl Tls {
    /// Reads `files` and sets TLS up from them.
    ///
    /// # Errors
    ///
    /// [`TlsError`] naming the file that cannot be read or used.
    pub fn load(files: TlsFiles) -> Result<Tls, TlsError> {
        let stamp = stamps(&files);
        let configs = Configs::read(&files)?;
        Ok(Tls {
            files,
            current: RwLock::new(Arc::new(configs)),
            stamp: Mutex::new(stamp),
        })
    }

    /// The files.
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// Reads the files again if any changed since they were last read (or
    /// always, with `force`), and puts the new configuration in force.
    /// `Ok(false)`: nothing changed. On an error the configuration in
    /// force stays, and the same files are not tried again until they
    /// change (or `force`).
    ///
    /// # Errors
    ///
    /// [`TlsError`] naming the file that cannot be read or used.
    pub fn reload(&self, force: bool) -> Result<bool, TlsError> {
        let now = stamps(&self.files);
        {
            let mut stamp = self.stamp.lock().unwrap_or_else(PoisonError::into_inner);
            if !force && *stamp == now {
                return Ok(false);
            }
            *stamp = now;
        }
        let configs = Configs::read(&self.files)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(configs);
        Ok(true)
    }

    /// The configuration for a handshake on `listener` now; `None` when
    /// its protocol carries no TLS.
    pub(crate) fn config(&self, listener: Listener) -> Option<Arc<ServerConfig>> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.by_listener[listener as usize].clone()
    }

    /// Whether clients must present a certificate.
    pub fn requires_client_certificates(&self) -> bool {
        self.files.client_ca.is_some()
    }
}

fn stamps(files: &TlsFiles) -> Vec<Option<FileStamp>> {
    [
        Some(&files.cert),
        Some(&files.key),
        files.client_ca.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|path| FileStamp::of(path))
    .collect()
}

impl Configs {
    fn read(files: &TlsFiles) -> Result<Configs, TlsError> {
        let chain = certificates(&files.cert, "certificate")?;
        let key = private_key(&files.key)?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .expect("aws-lc-rs supports the default protocol versions");
        let builder = match &files.client_ca {
            Some(path) => {
                let mut roots = rustls::RootCertStore::empty();
                for ca in certificates(path, "client CA")? {
                    roots.add(ca).map_err(|error| TlsError::File {
                        what: "client CA",
                        path: path.clone(),
                        reason: format!("holds a certificate that cannot be a CA ({error})"),
                    })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .map_err(|error| TlsError::File {
                            what: "client CA",
                            path: path.clone(),
                            reason: format!("cannot verify clients with it ({error})"),
                        })?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(chain, key)
            .map_err(|error| match error {
                rustls::Error::InconsistentKeys(_) => TlsError::Mismatch {
                    cert: files.cert.clone(),
                    key: files.key.clone(),
                },
                other => TlsError::File {
                    what: "key",
                    path: files.key.clone(),
                    reason: format!("cannot be used with the certificate ({other})"),
                },
            })?;
        let by_listener = Listener::ALL.map(|listener| match listener.guard() {
            Guard::TokensAndTls { alpn } => {
                let mut config = config.clone();
                config.alpn_protocols = alpn.iter().map(|name| name.to_vec()).collect();
                Some(Arc::new(config))
            }
            Guard::Nothing { .. } => None,
        });
        Ok(Configs { by_listener })
    }
}

/// The file at `path`, or why it cannot be read.
fn read(path: &Path, what: &'static str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::File {
        what,
        path: path.to_owned(),
        reason: format!("cannot be read: {error}"),
    })
}

/// The certificates of a PEM file (at least one).
fn certificates(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read(path, what)?;
    let bad = |reason: String| TlsError::File {
        what,
        path: path.to_owned(),
        reason,
    };
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| bad(pem_error(&error)))?;
    if chain.is_empty() {
        return Err(bad(
            "holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)".to_owned(),
        ));
    }
    Ok(chain)
}

/// The private key of a PEM file.
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = read(path, "key")?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|error| TlsError::File {
        what: "key",
        path: path.to_owned(),
        reason: match error {
            pem::Error::NoItemsFound => {
                "holds no private key (expected PEM: -----BEGIN PRIVATE KEY-----, or an RSA or EC one)"
                    .to_owned()
            }
            other => pem_error(&other),
        },
    })
}

/// What is wrong with a PEM file, in words that quote none of it (the
/// parser's own messages quote the offending line).
fn pem_error(error: &pem::Error) -> String {
    match error {
        pem::Error::MissingSectionEnd { .. } => {
            "is not valid PEM: a section has no -----END line".to_owned()
        }
        pem::Error::IllegalSectionStart { .. } => {
            "is not valid PEM: a -----BEGIN line is malformed".to_owned()
        }
        pem::Error::Base64Decode(_) => "is not valid PEM: a section is not base64".to_owned(),
        pem::Error::Io(error) => format!("cannot be read: {error}"),
        pem::Error::NoItemsFound => "holds nothing of the expected kind".to_owned(),
        pem::Error::SectionTooLarge => "is not valid PEM: a section is over 256 MB".to_owned(),
        _ => "is not valid PEM".to_owned(),
    }
}

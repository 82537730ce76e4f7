//! TLS and bearer tokens: how the client proves who it is talking to, and
//! who it is.
//!
//! - TLS trusts the CAs given (no system roots: nodes are internal, with
//!   their own CA), presents a client certificate when given (for nodes
//!   that require one, `--tls-client-ca`), and checks the node's
//!   certificate against the endpoint's host or the name given. With TLS,
//!   every node is dialled over TLS: `http://` endpoints (and discovered
//!   ones) become `https://`, so the client never falls back to
//!   cleartext.
//! - A token goes with every call as `authorization: Bearer <token>`.
//! - Keys and tokens are never shown: not in `Debug`, not in errors (PEM
//!   errors are put in words that quote nothing of the file).

use std::fmt;
use std::path::{Path, PathBuf};

use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};
use tonic::{Request, Status};

use crate::Error;

/// PEM given in memory, or a file to read it from when the client is
/// built.
#[derive(Clone)]
pub(crate) enum Pem {
    Bytes(Vec<u8>),
    File(PathBuf),
}

impl Pem {
    fn read(&self, what: &str) -> Result<Vec<u8>, Error> {
        match self {
            Pem::Bytes(bytes) => Ok(bytes.clone()),
            Pem::File(path) => std::fs::read(path).map_err(|error| {
                Error::Config(format!(
                    "{what} {}: cannot be read: {error}",
                    path.display()
                ))
            }),
        }
    }

    fn describe(&self, what: &str) -> String {
        match self {
            Pem::Bytes(_) => format!("{what} (given as PEM)"),
            Pem::File(path) => format!("{what} {}", path.display()),
        }
    }
}

/// The TLS settings a builder collects.
#[derive(Clone, Default)]
pub(crate) struct TlsOptions {
    pub(crate) ca: Option<Pem>,
    pub(crate) identity: Option<(Pem, Pem)>,
    pub(crate) domain: Option<String>,
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Which files, never what they hold.
        let source = |pem: &Pem| match pem {
            Pem::Bytes(_) => "<PEM given>".to_owned(),
            Pem::File(path) => path.display().to_string(),
        };
        f.debug_struct("TlsOptions")
            .field("ca", &self.ca.as_ref().map(source))
            .field(
                "identity",
                &self.identity.as_ref().map(|(cert, _)| source(cert)),
            )
            .field("domain", &self.domain)
            .finish()
    }
}

impl TlsOptions {
    /// The tonic configuration, after checking that every file is PEM of
    /// the right kind.
    pub(crate) fn build(&self) -> Result<ClientTlsConfig, Error> {
        let Some(ca) = &self.ca else {
            return Err(Error::Config(
                "TLS needs the CA that signed the nodes' certificates (tls_ca or tls_ca_file)"
                    .to_owned(),
            ));
        };
        let ca_pem = ca.read("TLS CA")?;
        check_certificates(&ca_pem, &ca.describe("TLS CA"))?;
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca_pem));
        if let Some((cert, key)) = &self.identity {
            let cert_pem = cert.read("TLS client certificate")?;
            check_certificates(&cert_pem, &cert.describe("TLS client certificate"))?;
            let key_pem = key.read("TLS client key")?;
            PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| {
                Error::Config(format!(
                    "{}: {}",
                    key.describe("TLS client key"),
                    match error {
                        pem::Error::NoItemsFound => "holds no private key (expected PEM: -----BEGIN PRIVATE KEY-----, or an RSA or EC one)".to_owned(),
                        other => pem_error(&other),
                    }
                ))
            })?;
            config = config.identity(Identity::from_pem(cert_pem, key_pem));
        }
        if let Some(domain) = &self.domain {
            config = config.domain_name(domain.clone());
        }
        Ok(config)
    }
}

fn check_certificates(bytes: &[u8], what: &str) -> Result<(), Error> {
    let certificates = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| Error::Config(format!("{what}: {}", pem_error(&error))))?;
    if certificates.is_empty() {
        return Err(Error::Config(format!(
            "{what}: holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(())
}

/// What is wrong with a PEM file, quoting none of it.
fn pem_error(error: &pem::Error) -> String {
    match error {
        pem::Error::MissingSectionEnd { .. } => "is not valid PEM: a section has no -----END line",
        pem::Error::IllegalSectionStart { .. } => {
            "is not valid PEM: a -----BEGIN line is malformed"
        }
        pem::Error::Base64Decode(_) => "is not valid PEM: a section is not base64",
        pem::Error::NoItemsFound => "holds nothing of the expected kind",
        _ => "is not valid PEM",
    }
    .to_owned()
}

/// Puts `authorization: Bearer <token>` on every call, when there is a
/// token.
#[derive(Clone, Default)]
pub(crate) struct Bearer(Option<MetadataValue<Ascii>>);

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(_) => f.write_str("Bearer(<token>)"),
            None => f.write_str("Bearer(none)"),
        }
    }
}

impl Bearer {
    /// The interceptor for `token`; an error (naming no part of the
    /// token) when a header cannot carry it.
    pub(crate) fn new(token: Option<&Token>) -> Result<Bearer, Error> {
        let Some(token) = token else {
            return Ok(Bearer(None));
        };
        let mut value = MetadataValue::try_from(format!("Bearer {}", token.0)).map_err(|_| {
            Error::Config(
                "the token holds a character a header cannot carry (a token is printable ASCII without spaces)"
                    .to_owned(),
            )
        })?;
        if token.0.is_empty() || token.0.contains(' ') {
            return Err(Error::Config(
                "the token is empty or holds a space (a token is printable ASCII without spaces)"
                    .to_owned(),
            ));
        }
        value.set_sensitive(true);
        Ok(Bearer(Some(value)))
    }
}

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// A bearer token, shown nowhere.
#[derive(Clone)]
pub(crate) struct Token(pub(crate) String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<token>")
    }
}

/// A token read from the first line of a file that is not blank or a `#`
/// comment (the server's token file format).
pub(crate) fn token_from_file(path: &Path) -> Result<Token, Error> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        Error::Config(format!(
            "token file {}: cannot be read: {error}",
            path.display()
        ))
    })?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| Token(line.to_owned()))
        .ok_or_else(|| Error::Config(format!("token file {}: holds no token", path.display())))
}

//! Reading a [`CoordinatorTls`]'s files into [`TlsFiles`], checked: what
//! the etcd and ZooKeeper backends build their TLS from, and what the
//! service checks at start.

use std::fmt;
use std::path::Path;

use super::access::CoordinatorTls;
use super::secret::Secret;

impl CoordinatorTls {
    /// Reads and checks the files now: the CA file holds at least one
    /// certificate; the node's certificate is valid now (not expired, not
    /// yet to come) and its key belongs to it.
    ///
    /// # Errors
    ///
    /// One sentence naming the file and what is wrong.
    pub fn load(&self) -> Result<TlsFiles, String> {
        self.read_files(true)
    }

    /// What [`load`](Self::load) checks, except the certificate's validity
    /// period: whether the files can be used at all. A service checks this
    /// at start (a bad file is a bad setting), and leaves an expired
    /// certificate, which a rotation may replace, to each new session.
    ///
    /// # Errors
    ///
    /// One sentence naming the file and what is wrong.
    pub fn check(&self) -> Result<(), String> {
        self.read_files(false).map(drop)
    }

    fn read_files(&self, validity: bool) -> Result<TlsFiles, String> {
        let ca_pem = read(&self.ca, "CA")?;
        certificates(&self.ca, "CA", &ca_pem)?;
        let identity = match &self.identity {
            None => None,
            Some((cert, key)) => {
                let cert_pem = read(cert, "client certificate")?;
                let chain = certificates(cert, "client certificate", &cert_pem)?;
                if validity {
                    check_validity(cert, &chain[0])?;
                }
                let key_pem = read(key, "client key")?;
                check_key(cert, &chain, key, &key_pem)?;
                Some((cert_pem, Secret::new(String::from_utf8_lossy(&key_pem))))
            }
        };
        Ok(TlsFiles {
            paths: self.clone(),
            ca_pem,
            identity,
        })
    }
}

/// The contents of a [`CoordinatorTls`]'s files, read and checked. Its
/// `Debug` names the files only.
#[derive(Clone)]
pub struct TlsFiles {
    paths: CoordinatorTls,
    /// The CA file's PEM text.
    pub(crate) ca_pem: Vec<u8>,
    /// The certificate chain's PEM text and the key's.
    pub(crate) identity: Option<(Vec<u8>, Secret)>,
}

impl TlsFiles {
    /// The files these were read from.
    pub fn paths(&self) -> &CoordinatorTls {
        &self.paths
    }
}

impl fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsFiles")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

/// The contents of `path`, the coordinator's `what` file.
fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|error| {
        format!(
            "cannot read the coordinator {what} file {}: {}",
            path.display(),
            crate::reason::io_reason(&error)
        )
    })
}

/// The certificates of the PEM text `pem`, read from `path`; at least one.
fn certificates(
    path: &Path,
    what: &str,
    pem: &[u8],
) -> Result<Vec<rustls_pki_types::CertificateDer<'static>>, String> {
    use rustls_pki_types::pem::PemObject;
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            format!(
                "the coordinator {what} file {} is not valid PEM: {error}",
                path.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "the coordinator {what} file {} holds no certificate (expected PEM, -----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certs)
}

/// Refuses a certificate outside its validity period now: the server would
/// refuse it during the handshake, in fewer words.
fn check_validity(path: &Path, cert: &rustls_pki_types::CertificateDer<'_>) -> Result<(), String> {
    use x509_cert::der::Decode;
    let parsed = x509_cert::Certificate::from_der(cert).map_err(|error| {
        format!(
            "the coordinator client certificate file {} holds a certificate that cannot be read: {error}",
            path.display()
        )
    })?;
    let validity = &parsed.tbs_certificate.validity;
    let ms = |time: &x509_cert::time::Time| {
        i64::try_from(time.to_unix_duration().as_millis()).unwrap_or(i64::MAX)
    };
    let (from, until) = (ms(&validity.not_before), ms(&validity.not_after));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        });
    let period = || {
        format!(
            "it is valid from {} to {}",
            snowmint::format_time(from),
            snowmint::format_time(until)
        )
    };
    if now > until {
        return Err(format!(
            "the coordinator client certificate {} expired at {} ({}); renew it",
            path.display(),
            snowmint::format_time(until),
            period()
        ));
    }
    if now < from {
        return Err(format!(
            "the coordinator client certificate {} is not valid yet ({}); check this machine's clock",
            path.display(),
            period()
        ));
    }
    Ok(())
}

/// Refuses a key file that holds no private key, or one that does not
/// belong to the certificate.
fn check_key(
    cert_path: &Path,
    chain: &[rustls_pki_types::CertificateDer<'static>],
    key_path: &Path,
    pem: &[u8],
) -> Result<(), String> {
    use rustls_pki_types::pem::PemObject;
    // The key's own words are left out: they could quote its contents.
    let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(pem).map_err(|_| {
        format!(
            "the coordinator client key file {} holds no private key (expected PEM, -----BEGIN PRIVATE KEY-----)",
            key_path.display()
        )
    })?;
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let signing = provider.key_provider.load_private_key(key).map_err(|_| {
        format!(
            "the coordinator client key file {} holds a private key of a kind TLS cannot use",
            key_path.display()
        )
    })?;
    rustls::sign::CertifiedKey::new(chain.to_vec(), signing)
        .keys_match()
        .map_err(|_| {
            format!(
                "the coordinator client key {} does not belong to the certificate {}",
                key_path.display(),
                cert_path.display()
            )
        })
}

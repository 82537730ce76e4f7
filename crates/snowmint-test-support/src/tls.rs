//! Certificates made by the tests (rcgen, on aws-lc-rs), for every server a
//! test secures: the coordinators (etcd, ZooKeeper and PostgreSQL, as in
//! production) and the node's own listeners; and a TLS client that reports
//! the certificate a server presents.
//!
//! - [`TestCa`]: a certificate authority, whose certificate is a file in a
//!   directory that lives as long as it does. It signs server certificates
//!   (for `127.0.0.1` and `localhost`, or the names a test gives), client
//!   certificates (named by their common name, which etcd takes as the
//!   user), and certificates whose validity ended ([`TestCa::issue`] for
//!   any other dates).
//! - [`Issued`]: a certificate and its key, as PEM and as files in the
//!   authority's directory (the key readable by its owner alone), with its
//!   serial number; [`Issued::replace`] writes it over other files the way
//!   cert-manager rotates them.
//! - [`presented_serial`]: connects, handshakes, and returns the serial
//!   number of the server's certificate, which a test compares with
//!   [`serial_bytes`] of an [`Issued::serial`]; [`serial_of`] reads it
//!   from a DER certificate.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SerialNumber,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use time::{Duration, OffsetDateTime};

use crate::temp::{TempDir, temp_dir};

/// The names a server certificate is for, unless a test gives others; a
/// client certificate carries them too (ZooKeeper checks a client's
/// certificate against the address it connects from).
pub const LOOPBACK: [&str; 2] = ["127.0.0.1", "localhost"];

/// What a certificate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A server's. It may act as a client too: etcd's own gateway connects
    /// to its client port with the server's certificate.
    Server,
    /// A client's.
    Client,
}

/// A certificate signed by a [`TestCa`], and its key.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM (PKCS #8).
    pub key_pem: String,
    /// Its serial number: each certificate of an authority has its own.
    pub serial: u64,
    /// The certificate's file, `<name>.pem`.
    pub cert: PathBuf,
    /// The key's file, `<name>-key.pem`.
    pub key: PathBuf,
    /// The key followed by the certificate, in one file,
    /// `<name>-both.pem` (ZooKeeper's PEM key store).
    pub combined: PathBuf,
}

/// A certificate authority made for one test; its files (its certificate,
/// and those of the certificates it signs) go when it does.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
    ca_file: PathBuf,
    /// The serial number of the next certificate.
    next_serial: AtomicU64,
    dir: TempDir,
}

impl TestCa {
    /// A new authority, called `name` in its certificate and its file,
    /// `<name>.pem`.
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).expect("a CA certificate").pem();
        let dir = temp_dir("tls");
        let ca_file = dir.path().join(format!("{name}.pem"));
        write_new(&ca_file, &pem, false);
        TestCa {
            issuer: Issuer::new(params, key),
            pem,
            ca_file,
            next_serial: AtomicU64::new(1),
            dir,
        }
    }

    /// The authority's certificate, PEM: what clients (or, for client
    /// certificates, the server) trust.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// The file of [`pem`](Self::pem).
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// The directory of the authority's files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A server certificate for `127.0.0.1` and `localhost`, valid from a
    /// day ago for a year.
    pub fn server(&self, name: &str) -> Issued {
        self.server_for(name, &LOOPBACK)
    }

    /// A server certificate for `hosts` (IP addresses or DNS names) only,
    /// valid from a day ago for a year.
    pub fn server_for(&self, name: &str, hosts: &[&str]) -> Issued {
        self.issue(name, Role::Server, hosts, valid_now())
    }

    /// A client certificate with the common name `name`, valid from a day
    /// ago for a year.
    pub fn client(&self, name: &str) -> Issued {
        self.issue(name, Role::Client, &LOOPBACK, valid_now())
    }

    /// A client certificate that expired yesterday.
    pub fn expired_client(&self, name: &str) -> Issued {
        let now = OffsetDateTime::now_utc();
        let valid = now - Duration::days(30)..now - Duration::days(1);
        self.issue(name, Role::Client, &LOOPBACK, valid)
    }

    /// A certificate for `role` with the common name `name`, for `hosts`,
    /// valid over `valid`, written as `<name>.pem`, `<name>-key.pem` and
    /// `<name>-both.pem` in [`dir`](Self::dir). Each name is issued once.
    pub fn issue(
        &self,
        name: &str,
        role: Role,
        hosts: &[&str],
        valid: Range<OffsetDateTime>,
    ) -> Issued {
        let hosts: Vec<String> = hosts.iter().map(|host| (*host).to_owned()).collect();
        let mut params = CertificateParams::new(hosts).expect("valid host names");
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        params.serial_number = Some(SerialNumber::from_slice(&serial.to_be_bytes()));
        params.not_before = valid.start;
        params.not_after = valid.end;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = match role {
            Role::Server => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            Role::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        };
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a signed certificate");
        let issued = Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            serial,
            cert: self.dir().join(format!("{name}.pem")),
            key: self.dir().join(format!("{name}-key.pem")),
            combined: self.dir().join(format!("{name}-both.pem")),
        };
        write_new(&issued.cert, &issued.cert_pem, false);
        write_new(&issued.key, &issued.key_pem, true);
        let both = format!("{}{}", issued.key_pem, issued.cert_pem);
        write_new(&issued.combined, &both, true);
        issued
    }
}

impl Issued {
    /// Replaces the files at `cert` and `key` the way cert-manager and
    /// Kubernetes do: each new file written beside the old one, then
    /// renamed over it, so that a reader never sees half a file.
    pub fn replace(&self, cert: &Path, key: &Path) {
        for (path, text) in [(key, &self.key_pem), (cert, &self.cert_pem)] {
            let fresh = path.with_extension("new");
            let _ = std::fs::remove_file(&fresh);
            write_new(&fresh, text, true);
            std::fs::rename(&fresh, path).unwrap();
        }
    }
}

/// From a day ago for a year: valid now, whatever the clock's drift.
fn valid_now() -> Range<OffsetDateTime> {
    let now = OffsetDateTime::now_utc();
    now - Duration::days(1)..now + Duration::days(365)
}

/// Writes `text` to a new file at `path`, readable by its owner alone when
/// `private` (as a key must be: PostgreSQL refuses any other). A file
/// already there is a test's mistake (a name issued twice), not to be
/// written over.
fn write_new(path: &Path, text: &str, private: bool) {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    if private {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    let mut file = options
        .open(path)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", path.display()));
    file.write_all(text.as_bytes())
        .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
}

/// Connects to `address`, handshakes trusting `ca_pem` (presenting
/// `client` when given) and returns the serial number of the certificate
/// the server presented, or the handshake's error. (With TLS 1.3 a server
/// refuses a client certificate only after the client's side of the
/// handshake is done: test refusals with a request, not with this.)
pub fn presented_serial(
    address: SocketAddr,
    ca_pem: &str,
    client: Option<&Issued>,
) -> Result<Vec<u8>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some(issued) => builder
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(issued.cert_pem.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap(),
                PrivateKeyDer::from_pem_slice(issued.key_pem.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    let name = ServerName::IpAddress(address.ip().into());
    let mut connection = rustls::ClientConnection::new(Arc::new(config), name.to_owned())
        .map_err(|e| e.to_string())?;
    let mut socket = TcpStream::connect_timeout(&address, std::time::Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    while connection.is_handshaking() {
        connection
            .complete_io(&mut socket)
            .map_err(|e| e.to_string())?;
    }
    let chain = connection
        .peer_certificates()
        .ok_or("the server presented no certificate")?;
    serial_of(&chain[0]).ok_or_else(|| "a certificate without a serial number".to_owned())
}

/// The serial number of the DER certificate `der`, as its big-endian
/// bytes without leading zeros.
pub fn serial_of(der: &[u8]) -> Option<Vec<u8>> {
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version
    // (optional), serialNumber INTEGER, ... }, ... }
    let (certificate, _) = element(der, 0x30)?;
    let (tbs, _) = element(certificate, 0x30)?;
    let rest = match element(tbs, 0xa0) {
        Some((_, rest)) => rest,
        None => tbs,
    };
    let (serial, _) = element(rest, 0x02)?;
    let start = serial.iter().position(|&b| b != 0).unwrap_or(serial.len());
    Some(serial[start..].to_vec())
}

/// The content of the DER element of tag `tag` at the start of `bytes`,
/// and what follows it.
fn element(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *bytes.first()? != tag {
        return None;
    }
    let first = *bytes.get(1)?;
    let (length, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let count = usize::from(first & 0x7f);
        let mut length = 0usize;
        for &b in bytes.get(2..2 + count)? {
            length = length.checked_mul(256)? + usize::from(b);
        }
        (length, 2 + count)
    };
    let content = bytes.get(header..header + length)?;
    Some((content, &bytes[header + length..]))
}

/// `serial` as [`serial_of`] reports it.
pub fn serial_bytes(serial: u64) -> Vec<u8> {
    let bytes = serial.to_be_bytes();
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each certificate has its own serial, read back from its DER; the
    /// files hold what the PEM fields do, keys for their owner alone.
    #[test]
    fn certificates_are_numbered_and_written() {
        use std::os::unix::fs::PermissionsExt;
        let ca = TestCa::new("test CA");
        let server = ca.server("server");
        let client = ca.client("client");
        assert_ne!(server.serial, client.serial);
        for issued in [&server, &client] {
            let der = CertificateDer::from_pem_slice(issued.cert_pem.as_bytes()).unwrap();
            assert_eq!(serial_of(&der), Some(serial_bytes(issued.serial)));
            assert_eq!(
                std::fs::read_to_string(&issued.cert).unwrap(),
                issued.cert_pem
            );
            for private in [&issued.key, &issued.combined] {
                let mode = std::fs::metadata(private).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{}", private.display());
            }
        }
        assert_eq!(std::fs::read_to_string(ca.ca_file()).unwrap(), ca.pem());
        let der = CertificateDer::from_pem_slice(server.cert_pem.as_bytes()).unwrap();
        assert_eq!(serial_of(&der[..10]), None);
    }
}

//! Certificates made by the tests (rcgen, on aws-lc-rs), and a TLS client
//! that reports the certificate a server presents.
//!
//! - [`TestCa`]: a certificate authority; it signs server certificates
//!   (for `127.0.0.1` and `localhost`) and client certificates, each with
//!   the serial number the test chooses, so that a test can tell which
//!   one a server presents.
//! - [`Issued`]: a certificate and its key, as PEM, written to files with
//!   [`Issued::write`].
//! - [`presented_serial`]: connects, handshakes, and returns the serial
//!   number of the server's certificate.
//! - [`serial_of`]: the serial number of a DER certificate.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A certificate authority made for one test.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

/// A certificate signed by a [`TestCa`], and its key.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM (PKCS#8).
    pub key_pem: String,
    /// The serial number it was given.
    pub serial: u64,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("an ECDSA key");
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let certificate = params.self_signed(&key).expect("a CA certificate");
        TestCa {
            pem: certificate.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA's certificate, PEM: what clients (or, for client
    /// certificates, the server) trust.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Writes the CA's certificate to `dir/name`; returns the path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, &self.pem).unwrap();
        path
    }

    /// A server certificate for `127.0.0.1` and `localhost`, with serial
    /// number `serial`.
    pub fn server(&self, serial: u64) -> Issued {
        self.issue(
            serial,
            vec!["127.0.0.1".to_owned(), "localhost".to_owned()],
            ExtendedKeyUsagePurpose::ServerAuth,
            "snowmint test node",
        )
    }

    /// A client certificate named `name`, with serial number `serial`.
    pub fn client(&self, name: &str, serial: u64) -> Issued {
        self.issue(
            serial,
            Vec::new(),
            ExtendedKeyUsagePurpose::ClientAuth,
            name,
        )
    }

    fn issue(
        &self,
        serial: u64,
        names: Vec<String>,
        usage: ExtendedKeyUsagePurpose,
        common_name: &str,
    ) -> Issued {
        let key = KeyPair::generate().expect("an ECDSA key");
        let mut params = CertificateParams::new(names).expect("valid names");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.serial_number = Some(SerialNumber::from_slice(&serial.to_be_bytes()));
        params.extended_key_usages = vec![usage];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.use_authority_key_identifier_extension = true;
        let certificate = params
            .signed_by(&key, &self.issuer)
            .expect("a signed certificate");
        Issued {
            cert_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
            serial,
        }
    }
}

impl Issued {
    /// Writes the certificate to `dir/NAME.crt` and the key to
    /// `dir/NAME.key` (mode 600); returns both paths.
    pub fn write(&self, dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let cert = dir.join(format!("{name}.crt"));
        let key = dir.join(format!("{name}.key"));
        std::fs::write(&cert, &self.cert_pem).unwrap();
        write_private(&key, self.key_pem.as_bytes());
        (cert, key)
    }

    /// Replaces the files at `cert` and `key` the way cert-manager and
    /// Kubernetes do: each new file written beside the old one, then
    /// renamed over it, so that a reader never sees half a file.
    pub fn replace(&self, cert: &Path, key: &Path) {
        for (path, text) in [(key, &self.key_pem), (cert, &self.cert_pem)] {
            let fresh = path.with_extension("new");
            write_private(&fresh, text.as_bytes());
            std::fs::rename(&fresh, path).unwrap();
        }
    }
}

/// Writes `bytes` to `path`, readable by its owner alone.
fn write_private(path: &Path, bytes: &[u8]) {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).unwrap();
    file.write_all(bytes).unwrap();
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
    let mut socket =
        TcpStream::connect_timeout(&address, Duration::from_secs(10)).map_err(|e| e.to_string())?;
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
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

    #[test]
    fn serials_are_read_back() {
        let ca = TestCa::new("test CA");
        let issued = ca.server(0x1234_5678);
        let der = CertificateDer::from_pem_slice(issued.cert_pem.as_bytes()).unwrap();
        assert_eq!(serial_of(&der), Some(serial_bytes(0x1234_5678)));
        assert_eq!(serial_of(&der[..10]), None);
    }
}

//! A certificate authority made by the test ([`TestCa`], with rcgen), and
//! the certificates it signs, written as PEM files into a directory that
//! lives as long as the authority: server certificates for `127.0.0.1`
//! and `localhost`, client certificates named by their common name, and
//! certificates whose validity ended (or has not begun).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use time::{Duration, OffsetDateTime};

use crate::temp::{TempDir, temp_dir};

/// What a certificate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A server's: named `127.0.0.1` and `localhost`.
    Server,
    /// A client's: its common name is the name given (etcd takes it as the
    /// user name).
    Client,
}

/// The files of a certificate the authority signed.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate, PEM.
    pub cert: PathBuf,
    /// Its private key, PEM (PKCS #8).
    pub key: PathBuf,
    /// The key followed by the certificate, in one PEM file (ZooKeeper's
    /// PEM key store).
    pub combined: PathBuf,
}

/// A certificate authority that lives as long as the value, with its
/// certificate in `ca.pem`-like file [`TestCa::ca_file`].
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    ca_file: PathBuf,
    dir: TempDir,
}

impl TestCa {
    /// A new authority, called `name` in its certificate and its file.
    pub fn new(name: &str) -> TestCa {
        let dir = temp_dir("tls");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("a CA key");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("a self-signed CA");
        let ca_file = dir.path().join(format!("{name}.pem"));
        std::fs::write(&ca_file, issuer.pem()).expect("cannot write the CA file");
        TestCa {
            issuer,
            ca_file,
            dir,
        }
    }

    /// The authority's certificate, PEM.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// The directory the files are written to.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A server certificate, valid from a day ago for a year.
    pub fn server(&self, name: &str) -> Issued {
        self.issue(
            name,
            Role::Server,
            now() - Duration::days(1),
            now() + Duration::days(365),
        )
    }

    /// A client certificate with the common name `name`, valid from a day
    /// ago for a year.
    pub fn client(&self, name: &str) -> Issued {
        self.issue(
            name,
            Role::Client,
            now() - Duration::days(1),
            now() + Duration::days(365),
        )
    }

    /// A client certificate that expired yesterday.
    pub fn expired_client(&self, name: &str) -> Issued {
        self.issue(
            name,
            Role::Client,
            now() - Duration::days(30),
            now() - Duration::days(1),
        )
    }

    /// A certificate for `role`, valid from `not_before` to `not_after`,
    /// written as `<name>.pem`, `<name>-key.pem` and `<name>-both.pem`.
    pub fn issue(
        &self,
        name: &str,
        role: Role,
        not_before: OffsetDateTime,
        not_after: OffsetDateTime,
    ) -> Issued {
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).expect("parameters");
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        params.distinguished_name.push(DnType::CommonName, name);
        params.not_before = not_before;
        params.not_after = not_after;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = match role {
            Role::Server => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            Role::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        };
        let key = KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a signed certificate");
        let files = Issued {
            cert: self.dir.path().join(format!("{name}.pem")),
            key: self.dir.path().join(format!("{name}-key.pem")),
            combined: self.dir.path().join(format!("{name}-both.pem")),
        };
        std::fs::write(&files.cert, cert.pem()).expect("cannot write a certificate");
        std::fs::write(&files.key, key.serialize_pem()).expect("cannot write a key");
        std::fs::write(
            &files.combined,
            format!("{}{}", key.serialize_pem(), cert.pem()),
        )
        .expect("cannot write a key store");
        files
    }
}

fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

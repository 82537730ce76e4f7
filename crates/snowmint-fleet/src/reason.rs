//! How the causes of errors read in messages.
//!
//! Messages are sentences for people: an operating-system error reads as
//! the system's own words ("permission denied", "connection refused"),
//! without the error number or the Rust type around it. The full error
//! still goes to the log where one is written.

use std::error::Error;
use std::io;

/// The operating system's words for `error`, starting in lower case and
/// without the `(os error N)` suffix: `permission denied`.
pub(crate) fn io_reason(error: &io::Error) -> String {
    let text = error.to_string();
    let text = match error.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or(text.clone(), str::to_owned),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        // Only a capital followed by lower case is a sentence's start: an
        // acronym (`EOF`) stays as it is.
        Some(first) if chars.next().is_some_and(char::is_lowercase) => {
            first.to_lowercase().chain(text.chars().skip(1)).collect()
        }
        _ => text,
    }
}

/// The words of the first I/O error among `error` and its sources, if any
/// (see [`io_reason`]).
#[cfg_attr(not(any(feature = "etcd", feature = "postgres")), allow(dead_code))]
pub(crate) fn io_cause(error: &(dyn Error + 'static)) -> Option<String> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<io::Error>() {
            return Some(io_reason(io));
        }
        cause = error.source();
    }
    None
}

/// What a failed TLS handshake with the coordinator means, in words that
/// name the file to look at, if a rustls error is among `error` and its
/// sources (an I/O error carries it as its inner error).
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
pub(crate) fn tls_cause(
    error: &(dyn Error + 'static),
    tls: &crate::CoordinatorTls,
) -> Option<String> {
    let mut cause = Some(error);
    let mut deepest = error;
    while let Some(error) = cause {
        let inner = error
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .map(|inner| inner as &(dyn Error + 'static));
        for candidate in [Some(error), inner].into_iter().flatten() {
            if let Some(found) = candidate.downcast_ref::<rustls::Error>() {
                return Some(tls_words(found, tls));
            }
            deepest = candidate;
        }
        cause = error.source();
    }
    // An alert read after the handshake may reach us only as text (an
    // HTTP/2 layer keeps the words of the I/O error, not the error).
    let text = deepest.to_string();
    let alert = text.strip_prefix("received fatal alert: ")?;
    alert_named(alert).map(|alert| tls_words(&rustls::Error::AlertReceived(alert), tls))
}

/// The alert rustls names `name` (its `Debug`), among those worth words.
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
fn alert_named(name: &str) -> Option<rustls::AlertDescription> {
    use rustls::AlertDescription as Alert;
    [
        Alert::CertificateRequired,
        Alert::CertificateExpired,
        Alert::BadCertificate,
        Alert::UnknownCA,
        Alert::CertificateUnknown,
        Alert::UnsupportedCertificate,
        Alert::CertificateRevoked,
        Alert::AccessDenied,
        Alert::HandshakeFailure,
    ]
    .into_iter()
    .find(|alert| format!("{alert:?}") == name)
}

#[cfg(any(feature = "etcd", feature = "zookeeper"))]
fn tls_words(error: &rustls::Error, tls: &crate::CoordinatorTls) -> String {
    use rustls::{AlertDescription as Alert, CertificateError as Cert, Error as E};
    let ca = tls.ca().display();
    let ours = || match tls.cert() {
        Some(cert) => format!("the client certificate {}", cert.display()),
        None => "the client certificate".to_owned(),
    };
    let said = match error {
        E::InvalidCertificate(Cert::UnknownIssuer) => {
            format!("the server's certificate is not signed by an authority in the CA file {ca}")
        }
        E::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            "the server's certificate is not issued for the host name the URL gives".to_owned()
        }
        E::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => {
            "the server's certificate has expired".to_owned()
        }
        E::InvalidCertificate(Cert::NotValidYet | Cert::NotValidYetContext { .. }) => {
            "the server's certificate is not valid yet (check this machine's clock)".to_owned()
        }
        E::InvalidCertificate(other) => format!("the server's certificate is refused ({other:?})"),
        E::AlertReceived(Alert::CertificateRequired) | E::NoCertificatesPresented => {
            match tls.cert() {
                None => "the server requires a client certificate, and none is configured (give the node a certificate and its key)".to_owned(),
                Some(cert) => format!("the server asked for a client certificate and did not take {}", cert.display()),
            }
        }
        E::AlertReceived(Alert::CertificateExpired) => {
            format!("the server refused {} as expired", ours())
        }
        E::AlertReceived(
            alert @ (Alert::BadCertificate
            | Alert::UnknownCA
            | Alert::CertificateUnknown
            | Alert::UnsupportedCertificate
            | Alert::CertificateRevoked
            | Alert::AccessDenied),
        ) => match tls.cert() {
            None => format!(
                "the server refused the handshake ({alert:?}); it may require a client certificate, and none is configured"
            ),
            Some(_) => format!(
                "the server refused {} ({alert:?}): it is not signed by an authority the server trusts, or not meant for client authentication",
                ours()
            ),
        },
        E::AlertReceived(other) => format!("the server ended the handshake ({other:?})"),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => {
            "the server's answer is not TLS (does it serve TLS on this port?)".to_owned()
        }
        other => other.to_string(),
    };
    format!("TLS handshake failed: {said}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused connection to a closed loopback port, as the system
    /// reports it.
    fn refused() -> io::Error {
        let port = crate::testing::closed_port();
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_err()
    }

    #[test]
    fn system_errors_read_as_the_systems_words() {
        let refused = refused();
        assert!(refused.to_string().contains("(os error"), "{refused}");
        assert_eq!(io_reason(&refused), "connection refused");
        let exists = std::fs::create_dir(std::env::temp_dir()).unwrap_err();
        assert_eq!(io_reason(&exists), "file exists");
    }

    #[test]
    fn other_errors_keep_their_text() {
        let other = io::Error::other("task panicked");
        assert_eq!(io_reason(&other), "task panicked");
        let acronym = io::Error::other("EOF while reading");
        assert_eq!(io_reason(&acronym), "EOF while reading");
    }

    /// The I/O error is found however deep it sits among the sources.
    #[test]
    fn io_causes_are_found_among_the_sources() {
        #[derive(Debug, thiserror::Error)]
        #[error("transport error")]
        struct Wrapper(#[source] io::Error);
        let wrapped = Wrapper(refused());
        assert_eq!(io_cause(&wrapped).as_deref(), Some("connection refused"));
        let plain = io::Error::other("x");
        let none: &(dyn Error + 'static) = &std::fmt::Error;
        assert_eq!(io_cause(none), None);
        assert_eq!(io_cause(&plain).as_deref(), Some("x"));
    }
}

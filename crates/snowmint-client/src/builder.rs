//! [`ClientBuilder`]: where the nodes are and how to ask them.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, Layout, SystemClock};
use snowmint_fleet::{CoordinatorAccess, CoordinatorUrl, FleetName};

use std::path::PathBuf;

use crate::client::{Client, Settings};
use crate::nodes::Connect;
use crate::secure::{Bearer, Pem, TlsOptions, Token, token_from_file};
use crate::{Error, discovery};

/// The largest batch one call asks a node for (the API's limit, the
/// service's own).
pub use snowmint_fleet::MAX_BATCH;

/// Builds a [`Client`]. Start with [`Client::builder`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    endpoints: Vec<String>,
    /// The coordinator, read at once (its `Debug` and its errors hide a
    /// password), and the fleet.
    discover: Option<(Result<CoordinatorUrl, String>, String)>,
    /// TLS and credentials for a secured coordinator.
    coordinator_access: CoordinatorAccess,
    discover_every: Duration,
    settings: Settings,
    tls: Option<TlsOptions>,
    token: Option<TokenSource>,
}

/// Where the token comes from.
#[derive(Debug, Clone)]
enum TokenSource {
    Given(Token),
    File(PathBuf),
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            endpoints: Vec::new(),
            discover: None,
            coordinator_access: CoordinatorAccess::default(),
            discover_every: Duration::from_secs(1),
            settings: Settings {
                max_age: Duration::from_millis(100),
                batch: MAX_BATCH,
                call_timeout: Duration::from_millis(500),
                deadline: Duration::from_secs(5),
                max_backoff: Duration::from_secs(2),
                layout: None,
                clock: Arc::new(SystemClock),
            },
            tls: None,
            token: None,
        }
    }
}

impl ClientBuilder {
    /// The nodes' gRPC addresses, such as `http://10.0.0.1:9090` (what
    /// `snowmint serve --grpc-listen` listens on). Added to any discovered
    /// ones.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// use snowmint_client::Client;
    ///
    /// let client = Client::builder()
    ///     .endpoints(["http://10.0.0.1:9090", "http://10.0.0.2:9090"])
    ///     .build()
    ///     .await?;
    /// assert_eq!(client.endpoints().len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn endpoints<I, S>(mut self, endpoints: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.endpoints.extend(endpoints.into_iter().map(Into::into));
        self
    }

    /// Finds the nodes from the fleet's slot keys on the coordinator
    /// (`etcd://HOST:PORT,...`, `zk://HOST:PORT,.../CHROOT` or
    /// `postgres://USER@HOST:PORT/DB`: its live slot rows), the gRPC
    /// address each node wrote into its key, and follows changes: nodes
    /// that claim a slot are added, nodes whose key is gone are dropped.
    /// A secured coordinator takes [`coordinator_access`](Self::coordinator_access)
    /// too; a password in the URL is never shown.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), snowmint_client::Error> {
    /// use snowmint_client::Client;
    ///
    /// // The nodes of fleet "ids", as they claim and release their slots.
    /// let client = Client::builder()
    ///     .discover("etcd://10.0.0.9:2379,10.0.0.10:2379", "ids")
    ///     .build()
    ///     .await?;
    /// println!("{:?}", client.endpoints());
    /// # Ok(())
    /// # }
    /// ```
    pub fn discover(mut self, coordinator: impl AsRef<str>, fleet: impl Into<String>) -> Self {
        let url = CoordinatorUrl::from_str(coordinator.as_ref()).map_err(|e| e.to_string());
        self.discover = Some((url, fleet.into()));
        self
    }

    /// How discovery reaches a secured coordinator: TLS (the CA, and a
    /// client certificate for mutual TLS) and the password of the URL's
    /// user, as the fleet's nodes are given them (`--coordinator-ca`,
    /// `--coordinator-cert`, `--coordinator-key`,
    /// `--coordinator-password-file`).
    ///
    /// ```
    /// use snowmint_client::{Client, CoordinatorAccess, CoordinatorTls, Secret};
    ///
    /// let access = CoordinatorAccess::default()
    ///     .with_tls(CoordinatorTls::new("/etc/ids/etcd-ca.pem").with_identity("/etc/ids/app.pem", "/etc/ids/app-key.pem"))
    ///     .with_password(Secret::new("from a secret store"));
    /// let builder = Client::builder()
    ///     .discover("etcd://ids-reader@10.0.0.9:2379", "ids")
    ///     .coordinator_access(access);
    /// assert!(!format!("{builder:?}").contains("from a secret store"));
    /// ```
    pub fn coordinator_access(mut self, access: CoordinatorAccess) -> Self {
        self.coordinator_access = access;
        self
    }

    /// How often discovery reads the slot keys again (default 1 s).
    pub fn discover_every(mut self, every: Duration) -> Self {
        self.discover_every = every;
        self
    }

    /// The oldest an ID may be when it is handed out, judged by its
    /// timestamp against this machine's clock (default 100 ms). Older IDs
    /// in the buffer are dropped, never handed out. `Duration::ZERO` turns
    /// the buffer off: every call is a round trip (see
    /// [`Client::stats`]).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.settings.max_age = max_age;
        self
    }

    /// IDs per refill of the buffer, 1..=4096 (default 4096).
    pub fn batch(mut self, batch: u32) -> Self {
        self.settings.batch = batch;
        self
    }

    /// How long one call to one node may take before the node is skipped
    /// as slow (default 500 ms).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.settings.call_timeout = timeout;
        self
    }

    /// How long `next_id` and `next_ids` keep trying the nodes before they
    /// give up with [`Error::Unavailable`] (default 5 s).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.settings.deadline = deadline;
        self
    }

    /// The longest a failed node is skipped before it is tried again
    /// (default 2 s).
    pub fn max_backoff(mut self, max: Duration) -> Self {
        self.settings.max_backoff = max;
        self
    }

    /// The layout of the fleet's IDs, which dates them for `max_age`. When
    /// not set, the client asks the first node that answers (`GetNode`).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.settings.layout = Some(layout);
        self
    }

    /// The clock IDs are dated against for `max_age` (default: the
    /// system clock). Tests drive it by hand.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.settings.clock = clock;
        self
    }

    /// Speaks TLS to every node, trusting the CAs of `ca_pem` (PEM): the
    /// CA that signed the nodes' certificates (`snowmint serve
    /// --tls-cert`). Endpoints given as `http://` are dialled as
    /// `https://`, and so are discovered ones: with TLS the client never
    /// speaks cleartext. The node's certificate must name the endpoint's
    /// host, or the name given to [`tls_domain`](Self::tls_domain).
    pub fn tls_ca(mut self, ca_pem: impl Into<Vec<u8>>) -> Self {
        self.tls.get_or_insert_default().ca = Some(Pem::Bytes(ca_pem.into()));
        self
    }

    /// [`tls_ca`](Self::tls_ca), read from a PEM file when the client is
    /// built.
    pub fn tls_ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.get_or_insert_default().ca = Some(Pem::File(path.into()));
        self
    }

    /// Presents this client certificate and key (PEM) to the nodes, for
    /// nodes that require one (`snowmint serve --tls-client-ca`). Needs
    /// [`tls_ca`](Self::tls_ca).
    pub fn tls_identity(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.get_or_insert_default().identity =
            Some((Pem::Bytes(cert_pem.into()), Pem::Bytes(key_pem.into())));
        self
    }

    /// [`tls_identity`](Self::tls_identity), read from PEM files when the
    /// client is built.
    pub fn tls_identity_files(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.tls.get_or_insert_default().identity =
            Some((Pem::File(cert.into()), Pem::File(key.into())));
        self
    }

    /// The name the nodes' certificates are checked against, instead of
    /// each endpoint's host (for nodes reached by addresses their
    /// certificates do not name).
    pub fn tls_domain(mut self, name: impl Into<String>) -> Self {
        self.tls.get_or_insert_default().domain = Some(name.into());
        self
    }

    /// Sends `authorization: Bearer <token>` with every call, for nodes
    /// that require a token (`snowmint serve --auth-token-file`). The
    /// token is never shown (`Debug` and errors leave it out).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint_client::Client;
    ///
    /// let builder = Client::builder()
    ///     .endpoints(["https://ids-0.internal:9090"])
    ///     .tls_ca_file("/etc/snowmint/tls/ca.crt")
    ///     .token("kJ8fQ2mZr4XbN7wVt1cYp5sLd0aHe3uG");
    /// assert!(!format!("{builder:?}").contains("kJ8fQ2mZ"));
    /// ```
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(TokenSource::Given(Token(token.into())));
        self
    }

    /// [`token`](Self::token), read when the client is built from the
    /// first line of `path` that is not blank or a `#` comment (a file in
    /// the format of the node's token file).
    pub fn token_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.token = Some(TokenSource::File(path.into()));
        self
    }

    /// The client. With discovery, reads the slot keys once before it
    /// returns (a coordinator that cannot be read is an error), then
    /// follows them in the background. Must be called inside a Tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for settings out of range, an endpoint that is not
    /// a URL, neither endpoints nor discovery, a TLS file or token that
    /// cannot be read or used (named, never quoted);
    /// [`Error::Discovery`] when the coordinator cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() {
    /// use snowmint_client::{Client, Error};
    ///
    /// let error = Client::builder()
    ///     .endpoints(["http://10.0.0.1:9090"])
    ///     .batch(0)
    ///     .build()
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(&error, Error::Config(message) if message == "batch 0 is out of range (1..=4096)"), "{error}");
    ///
    /// // Files are read when the client is built, and named when they cannot be.
    /// let error = Client::builder()
    ///     .endpoints(["https://10.0.0.1:9090"])
    ///     .tls_ca_file("/nonexistent/ca.pem")
    ///     .build()
    ///     .await
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("/nonexistent/ca.pem"), "{error}");
    /// # }
    /// ```
    pub async fn build(self) -> Result<Client, Error> {
        let s = &self.settings;
        if !(1..=MAX_BATCH).contains(&s.batch) {
            return Err(Error::Config(format!(
                "batch {} is out of range (1..={MAX_BATCH})",
                s.batch
            )));
        }
        for (name, value) in [
            ("call_timeout", s.call_timeout),
            ("deadline", s.deadline),
            ("discover_every", self.discover_every),
        ] {
            if value.is_zero() {
                return Err(Error::Config(format!(
                    "{name} 0 ms is out of range (at least 1 ms)"
                )));
            }
        }
        if self.endpoints.is_empty() && self.discover.is_none() {
            return Err(Error::Config(
                "no nodes: give endpoints, or a coordinator and fleet to discover them from"
                    .to_owned(),
            ));
        }
        let discover = match &self.discover {
            Some((url, fleet)) => {
                let url = url.clone().map_err(Error::Config)?;
                self.coordinator_access
                    .check(&url)
                    .map_err(|e| Error::Config(e.to_string()))?;
                Some((
                    url,
                    FleetName::from_str(fleet).map_err(|e| Error::Config(e.to_string()))?,
                ))
            }
            None => None,
        };
        let token = match &self.token {
            Some(TokenSource::Given(token)) => Some(token.clone()),
            Some(TokenSource::File(path)) => Some(token_from_file(path)?),
            None => None,
        };
        let how = Connect {
            tls: self.tls.as_ref().map(TlsOptions::build).transpose()?,
            bearer: Bearer::new(token.as_ref())?,
        };
        let client = Client::new(self.settings.clone(), &self.endpoints, how)?;
        if let Some((url, fleet)) = discover {
            let access = self.coordinator_access.clone();
            let found = discovery::endpoints(&url, &access, &fleet).await?;
            client.set_discovered(&self.endpoints, &found);
            let task = tokio::spawn(discovery::follow(
                Arc::downgrade(client.shared()),
                url,
                access,
                fleet,
                self.endpoints.clone(),
                self.discover_every,
            ));
            client.hold_task(task.abort_handle());
        }
        Ok(client)
    }
}

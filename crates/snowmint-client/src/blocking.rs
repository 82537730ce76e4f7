//! [`BlockingClient`]: the same client for code that is not async.

use crate::{Client, ClientBuilder, Error, Stats};

/// A [`Client`] with a runtime of its own, for code that is not async.
/// Calls block the calling thread; the buffer is refilled in the
/// background on the client's own thread. Do not use it inside an async
/// runtime (blocking there stalls the runtime): use [`Client`].
///
/// ```
/// # let runtime = tokio::runtime::Runtime::new().unwrap();
/// # let node = runtime.block_on(snowmint_test_support::in_process::grpc::GrpcNode::start(
/// #     snowmint::Node::from_slot(34),
/// #     std::sync::Arc::new(snowmint::SystemClock),
/// # ));
/// # let endpoint = node.endpoint(); // a node's --grpc-listen, as http://HOST:PORT
/// use snowmint_client::{BlockingClient, Client};
///
/// let client = BlockingClient::new(Client::builder().endpoints([endpoint]))?;
/// let id = client.next_id()?;
/// let batch = client.next_ids(100)?;
/// assert!(batch.iter().all(|later| *later > id));
/// # Ok::<(), snowmint_client::Error>(())
/// ```
#[derive(Debug)]
pub struct BlockingClient {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl BlockingClient {
    /// Builds the client from `builder` on a runtime of its own.
    ///
    /// # Errors
    ///
    /// As [`ClientBuilder::build`]; [`Error::Config`] if no thread can be
    /// started for the runtime.
    pub fn new(builder: ClientBuilder) -> Result<BlockingClient, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowmint-client")
            .enable_all()
            .build()
            .map_err(|error| {
                Error::Config(format!("cannot start the client's runtime: {error}"))
            })?;
        let client = runtime.block_on(builder.build())?;
        Ok(BlockingClient { runtime, client })
    }

    /// One new ID; see [`Client::next_id`].
    ///
    /// # Errors
    ///
    /// As [`Client::next_id`].
    pub fn next_id(&self) -> Result<u64, Error> {
        self.runtime.block_on(self.client.next_id())
    }

    /// `n` new IDs; see [`Client::next_ids`].
    ///
    /// # Errors
    ///
    /// As [`Client::next_ids`].
    pub fn next_ids(&self, n: usize) -> Result<Vec<u64>, Error> {
        self.runtime.block_on(self.client.next_ids(n))
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.client.stats()
    }

    /// The async client inside.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

//! The example of the crate's README is the code this test runs, word for
//! word but for the two node addresses.

use snowmint::{Node, SystemClock};
use snowmint_test_support::in_process::grpc::GrpcNode;
use snowmint_test_support::shown;
use std::sync::Arc;

/// The example, as the README shows it, with `a` and `b` for its two
/// addresses.
async fn readme_example(a: &str, b: &str) -> Result<(u64, Vec<u64>), snowmint_client::Error> {
    use snowmint_client::Client;
    use std::time::Duration;

    let client = Client::builder()
        .endpoints([a, b])
        // or: .discover("etcd://10.0.0.9:2379", "ids")
        .max_age(Duration::from_millis(100))
        .build()
        .await?;
    let id = client.next_id().await?;
    let batch = client.next_ids(100).await?;
    Ok((id, batch))
}

#[tokio::test]
async fn the_readme_example_runs_as_shown() {
    let indented = shown::as_function_body(include_str!("../README.md"), "", "rust,no_run")
        .replace("\"http://10.0.0.1:9090\"", "a")
        .replace("\"http://10.0.0.2:9090\"", "b");
    let source = include_str!("readme.rs");
    assert!(
        source.contains(&indented),
        "the crate README's example is not the code of readme_example:\n{indented}"
    );

    let node =
        |machine: u64| GrpcNode::start(Node::from_slot(2 * 32 + machine), Arc::new(SystemClock));
    let (a, b) = (node(1).await, node(2).await);
    let (id, batch) = readme_example(&a.endpoint(), &b.endpoint()).await.unwrap();
    assert_eq!(batch.len(), 100);
    assert!(!batch.contains(&id));
}

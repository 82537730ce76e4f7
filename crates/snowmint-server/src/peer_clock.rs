//! Reading another node's clock for the clock check: `GET /v1/node` on the
//! address its slot key names, `clock_ms` from the answer.
//!
//! The claim engine picks the nodes and judges the readings
//! (`snowmint_fleet::ClockVerdict`); this only asks. One request per
//! connection (`Connection: close`): the connection is made before the
//! clock is first read, so that only the request's own round trip counts
//! in the reading's error bar. An answer is read up to 64 KiB; a peer
//! that sends more, or no `clock_ms`, is left out of the check with the
//! reason.

use std::net::SocketAddr;
use std::sync::Arc;

use snowmint::Clock;
use snowmint_fleet::{BoxFuture, ClockSample, Holder, PeerClock};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most bytes read of a peer's answer (a `/v1/node` body is about
/// 1 KB).
const MAX_ANSWER: usize = 64 * 1024;

/// Reads peers' clocks over their HTTP API.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpPeerClock;

impl PeerClock for HttpPeerClock {
    fn read(
        &self,
        holder: Holder,
        clock: Arc<dyn Clock>,
    ) -> BoxFuture<'static, Result<ClockSample, String>> {
        Box::pin(async move { read_clock(&holder, clock.as_ref()).await })
    }
}

/// Where to reach the node: its listening address, or, when it listens on
/// every interface (`0.0.0.0`, `::`), its host name with that port.
fn target(holder: &Holder) -> String {
    match holder.listen.parse::<SocketAddr>() {
        Ok(address) if address.ip().is_unspecified() => {
            format!("{}:{}", holder.host, address.port())
        }
        _ => holder.listen.clone(),
    }
}

async fn read_clock(holder: &Holder, clock: &dyn Clock) -> Result<ClockSample, String> {
    let target = target(holder);
    let mut stream = TcpStream::connect(&target)
        .await
        .map_err(|error| format!("cannot connect to {target}: {error}"))?;
    // Small writes and reads: no Nagle delay on the request.
    let _ = stream.set_nodelay(true);
    let request = format!(
        "GET /v1/node HTTP/1.1\r\nHost: {target}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    let sent_ms = clock.now_ms();
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|error| format!("cannot ask {target}: {error}"))?;
    let mut answer = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    let received_ms = loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|error| format!("cannot read the answer of {target}: {error}"))?;
        if n == 0 {
            break clock.now_ms();
        }
        answer.extend_from_slice(&chunk[..n]);
        if answer.len() > MAX_ANSWER {
            return Err(format!("{target} answered more than {MAX_ANSWER} bytes"));
        }
    };
    let other_ms = clock_ms(&answer).map_err(|reason| format!("{target}: {reason}"))?;
    Ok(ClockSample {
        sent_ms,
        other_ms,
        received_ms,
    })
}

/// `clock_ms` of a `200` answer's JSON body.
fn clock_ms(answer: &[u8]) -> Result<i64, String> {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "the answer is not HTTP".to_owned())?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("answered {status:?}"));
    }
    let node: serde_json::Value =
        serde_json::from_str(body).map_err(|error| format!("the answer is not JSON: {error}"))?;
    node["clock_ms"]
        .as_i64()
        .ok_or_else(|| "the answer has no clock_ms".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_read_from_a_node_answer() {
        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"clock_ms\":1700000000123,\"ready\":true}";
        assert_eq!(clock_ms(answer), Ok(1_700_000_000_123));
        let refused = b"HTTP/1.1 404 Not Found\r\n\r\n{}";
        assert_eq!(
            clock_ms(refused),
            Err("answered \"HTTP/1.1 404 Not Found\"".to_owned())
        );
        assert!(clock_ms(b"garbage").is_err());
    }

    #[test]
    fn an_unspecified_address_is_reached_by_host_name() {
        let holder = |listen: &str| Holder {
            host: "web-1".into(),
            pid: 1,
            listen: listen.into(),
            grpc: None,
            started_ms: 0,
        };
        assert_eq!(target(&holder("0.0.0.0:8080")), "web-1:8080");
        assert_eq!(target(&holder("10.0.0.7:8080")), "10.0.0.7:8080");
    }
}

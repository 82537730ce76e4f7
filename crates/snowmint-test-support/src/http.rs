//! A minimal blocking HTTP/1.1 client over one keep-alive connection, so
//! that socket tests need no client library.
//!
//! Every read has a deadline ([`READ_LIMIT`]): a service that stops
//! answering fails the request with a timeout instead of hanging the test.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a read may wait for the service before the request fails (a
/// liveness bound, not a timing assertion).
pub const READ_LIMIT: Duration = Duration::from_secs(60);

/// The keys an API error object may carry (`{"error":{...}}`): `code` and
/// `message` always, the rest when they apply.
pub const ERROR_KEYS: [&str; 8] = [
    "code",
    "message",
    "field",
    "value",
    "min",
    "max",
    "readable_as",
    "retry_after_s",
];

/// One connection to the service.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A response: status, lower-cased headers, body.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Every header as (lower-cased name, value), in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, which must be UTF-8.
    pub body: String,
}

impl Response {
    /// The value of the header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Connection {
    /// Connects to the service at `address`.
    pub fn open(address: SocketAddr) -> io::Result<Connection> {
        Connection::from_stream(TcpStream::connect(address)?)
    }

    /// A connection over `stream`, already connected (such as one made
    /// from a host of a partition network).
    pub fn from_stream(stream: TcpStream) -> io::Result<Connection> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(READ_LIMIT))?;
        Ok(Connection {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends `GET target` and reads the whole response.
    pub fn get(&mut self, target: &str) -> io::Result<Response> {
        self.get_with(target, &[])
    }

    /// Sends `GET target` with `headers` added (each as `(name, value)`,
    /// sent as they are, repeated names included) and reads the whole
    /// response.
    pub fn get_with(&mut self, target: &str, headers: &[(&str, &str)]) -> io::Result<Response> {
        let mut request =
            format!("GET {target} HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\n");
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        self.writer.write_all(request.as_bytes())?;
        self.writer.flush()?;
        self.read_response()
    }

    fn read_response(&mut self) -> io::Result<Response> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            let (name, value) = trimmed
                .split_once(':')
                .ok_or_else(|| io::Error::other(format!("bad header {trimmed:?}")))?;
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .ok_or_else(|| io::Error::other("no content-length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(Response {
            status,
            headers,
            body: String::from_utf8(body).map_err(io::Error::other)?,
        })
    }
}

//! A minimal HTTP/1.1 client for the gateway's endpoints on 127.0.0.1: one request per
//! connection (`Connection: close`), bounded by socket timeouts, chunked replies decoded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A reply: status code and body.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body, decoded from chunked transfer encoding if need be.
    pub body: String,
}

/// Sends one request to `127.0.0.1:port` and reads the whole reply (at most `timeout`
/// between bytes).
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
    timeout: Duration,
) -> std::io::Result<Reply> {
    let mut conn = TcpStream::connect(("127.0.0.1", port))?;
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    if let Some(b) = body {
        conn.write_all(b.as_bytes())?;
    }
    conn.flush()?;
    let mut reader = BufReader::new(conn);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (mut chunked, mut length) = (false, None);
    for _ in 0..200 {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut raw = Vec::new();
    if chunked {
        for _ in 0..1_000_000 {
            let mut size = String::new();
            if reader.read_line(&mut size)? == 0 {
                break;
            }
            let n =
                usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut part = vec![0; n];
            reader.read_exact(&mut part)?;
            raw.extend_from_slice(&part);
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    } else if let Some(n) = length {
        raw.resize(n, 0);
        reader.read_exact(&mut raw)?;
    } else {
        reader.take(64 << 20).read_to_end(&mut raw)?;
    }
    Ok(Reply {
        status,
        body: String::from_utf8_lossy(&raw).into_owned(),
    })
}

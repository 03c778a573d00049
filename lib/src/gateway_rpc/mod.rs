//! A client of the gateway's WebSocket RPC, so that a write to a state dir a live gateway
//! owns joins the gateway's own write queue instead of racing it (issue 27).
//!
//! The protocol is openclaw@2026.7.1's (protocol 4), as recorded between `openclaw
//! sessions cleanup` and a real gateway (`recorded/`):
//!
//! 1. the client opens `ws://127.0.0.1:<port>` ([`address`]);
//! 2. the gateway sends the event `connect.challenge {nonce, ts}`;
//! 3. the client sends the request `connect` with `{minProtocol: 4, maxProtocol: 4,
//!    client: {id: "cli", mode: "cli", version, platform, instanceId}, caps: [], auth:
//!    {token | password}, role: "operator", scopes}`, and a `device` block signed over the
//!    nonce ([`device`]) unless it authenticates to a loopback gateway with the shared
//!    secret (the peer omits it then, `shouldOmitDeviceIdentityForGatewayCall`);
//! 4. the gateway answers `hello-ok` (with the methods it offers) or an error whose
//!    `details.code` says why (`AUTH_TOKEN_MISMATCH`, `AUTH_TOKEN_MISSING`, …) and closes;
//! 5. requests and their responses follow; events (`health`, `tick`) come in between.
//!
//! Scopes are the least the method needs (`method-scopes`: `sessions.list` needs
//! `operator.read`; cleanup, reset, compact and a delete of a live session
//! `operator.admin`; a patch of only label/category/pinned/archived/unread
//! `operator.write`).
//!
//! Unlike the peer, which treats a refused connect like a closed socket and then writes the
//! live store itself, every failure here is final and reported with its exit code: refused
//! credentials 77, an unreachable or vanished gateway 75; nothing is written locally.

pub mod address;
pub mod device;
pub mod frame;

use std::io::ErrorKind;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use thiserror::Error;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

pub use address::{GatewayAddress, UrlSource};
pub use device::DeviceIdentity;
pub use frame::{Frame, RpcFailure};

use crate::exit::{self, ExitCode};

/// The protocol version this client speaks.
pub const PROTOCOL: u64 = 4;
/// How long the connect handshake may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may take by default (a cleanup of a large store is slow).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest frame accepted from the gateway.
const MAX_FRAME: usize = 64 << 20;

/// Why a gateway call did not succeed.
#[derive(Debug, Error)]
pub enum GatewayRpcError {
    /// No connection could be made (nothing was sent).
    #[error("cannot reach the gateway at {url}: {reason}; nothing was changed")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The gateway refused this client's credentials or identity.
    #[error("the gateway at {url} refused this client: {reason}; nothing was changed. {hint}")]
    Unauthorized {
        /// The gateway's URL.
        url: String,
        /// The gateway's reason (`details.code` and message).
        reason: String,
        /// How to pass the right credentials.
        hint: String,
    },
    /// The connection ended or failed after the request was sent.
    #[error("the gateway at {url} went away during {method}: {reason}; it may or may not have applied it (look with claw-sessions list)")]
    Lost {
        /// The gateway's URL.
        url: String,
        /// The method in flight.
        method: String,
        /// What happened.
        reason: String,
    },
    /// No answer within the time allowed.
    #[error(
        "the gateway at {url} did not answer {method} in the time allowed; it may still apply it"
    )]
    TimedOut {
        /// The gateway's URL.
        url: String,
        /// The method (or `connect`).
        method: String,
    },
    /// The gateway does not offer the method (`hello-ok.features.methods`).
    #[error("the gateway at {url} does not offer {method}")]
    NoMethod {
        /// The gateway's URL.
        url: String,
        /// The method.
        method: String,
    },
    /// The URL cannot be used by this client.
    #[error("cannot call the gateway at {url}: {why}")]
    Unsupported {
        /// The URL.
        url: String,
        /// Why.
        why: String,
    },
    /// The gateway said something this client does not understand.
    #[error("the gateway at {url} broke the protocol: {what}")]
    Protocol {
        /// The gateway's URL.
        url: String,
        /// What was wrong.
        what: String,
    },
    /// The method ran and failed on the gateway.
    #[error("{method} failed on the gateway: {}", failure.message)]
    Failed {
        /// The method.
        method: String,
        /// The gateway's error (boxed: it carries the gateway's details).
        failure: Box<RpcFailure>,
    },
}

impl ExitCode for GatewayRpcError {
    fn exit_code(&self) -> i32 {
        match self {
            GatewayRpcError::Unauthorized { .. } => exit::NO_PERM,
            GatewayRpcError::Unreachable { .. }
            | GatewayRpcError::Lost { .. }
            | GatewayRpcError::TimedOut { .. }
            | GatewayRpcError::NoMethod { .. }
            | GatewayRpcError::Unsupported { .. } => exit::TEMP_FAIL,
            GatewayRpcError::Failed { failure, .. } => {
                let m = failure.message.to_ascii_lowercase();
                if m.contains("not found") || m.contains("no session") {
                    exit::NOT_FOUND
                } else if failure.code.as_deref() == Some("INVALID_REQUEST") {
                    exit::DATA_ERR
                } else {
                    exit::FAILURE
                }
            }
            GatewayRpcError::Protocol { .. } => exit::FAILURE,
        }
    }
}

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the gateway.
    Received,
    /// To the gateway.
    Sent,
}

/// What a connect needs.
#[derive(Debug, Clone)]
pub struct ConnectOptions<'a> {
    /// Where and with which credentials.
    pub address: &'a GatewayAddress,
    /// The operator scopes asked for (the least the calls need).
    pub scopes: &'a [&'a str],
    /// The device identity, when the state dir has one.
    pub device: Option<&'a DeviceIdentity>,
    /// Says where the credentials come from, for the refusal's hint (the config path).
    pub config_path: &'a std::path::Path,
}

/// A connected, authorized gateway session.
pub struct GatewayClient {
    ws: WebSocket<TcpStream>,
    url: String,
    methods: Vec<String>,
    state_dir: Option<String>,
    trace: Vec<(Direction, String)>,
    next_id: u64,
    instance: String,
}

impl GatewayClient {
    /// Connects and completes the handshake (see the module doc).
    pub fn connect(o: &ConnectOptions<'_>) -> Result<GatewayClient, GatewayRpcError> {
        let url = o.address.url.clone();
        let unreachable = |reason: String| GatewayRpcError::Unreachable {
            url: url.clone(),
            reason,
        };
        let Some(rest) = url.strip_prefix("ws://") else {
            return Err(GatewayRpcError::Unsupported {
                url: url.clone(),
                why: "only ws:// is supported (no TLS client); use a loopback ws:// URL or an SSH tunnel".into(),
            });
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let hostport = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
            && !authority.ends_with(']')
        {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addrs: Vec<_> = hostport
            .to_socket_addrs()
            .map_err(|e| unreachable(e.to_string()))?
            .collect();
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        let mut last = String::from("no address");
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e.to_string(),
            }
        }
        let stream = stream.ok_or_else(|| unreachable(last))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .map_err(|e| unreachable(e.to_string()))?;
        let request = url
            .as_str()
            .into_client_request()
            .map_err(|e| unreachable(e.to_string()))?;
        let mut config = tungstenite::protocol::WebSocketConfig::default();
        config.max_message_size = Some(MAX_FRAME);
        config.max_frame_size = Some(MAX_FRAME);
        let (ws, _) = tungstenite::client::client_with_config(request, stream, Some(config))
            .map_err(|e| unreachable(format!("WebSocket upgrade: {e}")))?;
        let mut client = GatewayClient {
            ws,
            url: url.clone(),
            methods: Vec::new(),
            state_dir: None,
            trace: Vec::new(),
            next_id: 0,
            instance: uuid::Uuid::new_v4().to_string(),
        };
        client.handshake(o, deadline)?;
        Ok(client)
    }

    fn handshake(
        &mut self,
        o: &ConnectOptions<'_>,
        deadline: Instant,
    ) -> Result<(), GatewayRpcError> {
        // Anything that fails before hello-ok changed nothing on the gateway.
        let nonce = loop {
            match self
                .read(deadline, "connect")
                .map_err(|e| self.pre_hello(e))?
            {
                Frame::Event { event, payload } if event == "connect.challenge" => {
                    match payload.get("nonce").and_then(Value::as_str).map(str::trim) {
                        Some(n) if !n.is_empty() => break n.to_string(),
                        _ => return Err(self.protocol("connect.challenge without a nonce".into())),
                    }
                }
                _ => continue,
            }
        };
        let token = o.address.token.as_deref();
        let password = o.address.password.as_deref();
        let mut auth = serde_json::Map::new();
        if let Some(t) = token {
            auth.insert("token".into(), json!(t));
        }
        if let Some(p) = password {
            auth.insert("password".into(), json!(p));
        }
        let platform = std::env::consts::OS;
        let mut params = json!({
            "minProtocol": PROTOCOL,
            "maxProtocol": PROTOCOL,
            "client": {
                "id": "cli",
                "displayName": "clawstate",
                "version": concat!("clawstate-", env!("CARGO_PKG_VERSION")),
                "platform": platform,
                "mode": "cli",
                "instanceId": self.instance,
            },
            "caps": [],
            "role": "operator",
            "scopes": o.scopes,
        });
        if !auth.is_empty() {
            params["auth"] = Value::Object(auth);
        }
        let shared_secret = token.is_some() || password.is_some();
        if let Some(d) = o
            .device
            .filter(|_| !(shared_secret && o.address.is_loopback()))
        {
            params["device"] = d.block(&device::SignedConnect {
                client_id: "cli",
                client_mode: "cli",
                role: "operator",
                scopes: o.scopes,
                signed_at_ms: chrono::Utc::now().timestamp_millis(),
                token: token.unwrap_or(""),
                nonce: &nonce,
                platform,
            });
        }
        let id = self
            .send("connect", &params)
            .map_err(|e| self.pre_hello(e))?;
        let hello = match self.await_response(&id, "connect", deadline) {
            Ok(Ok(v)) => v,
            Ok(Err(f)) if f.is_auth_refusal() || f.message.contains("unauthorized") => {
                return Err(GatewayRpcError::Unauthorized {
                    url: self.url.clone(),
                    reason: match f.detail_code() {
                        Some(c) => format!("{c}: {}", f.message),
                        None => f.message.clone(),
                    },
                    hint: credentials_hint(o),
                })
            }
            Ok(Err(f)) => return Err(self.protocol(format!("connect refused: {}", f.message))),
            Err(e) => return Err(self.pre_hello(e)),
        };
        if hello.get("type").and_then(Value::as_str) != Some("hello-ok") {
            return Err(self.protocol(format!(
                "the connect answer is not hello-ok: {}",
                frame::redact(&hello.to_string())
            )));
        }
        self.methods = hello
            .pointer("/features/methods")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        self.state_dir = hello
            .pointer("/snapshot/stateDir")
            .and_then(Value::as_str)
            .map(String::from);
        Ok(())
    }

    /// A failure before hello-ok: a lost connection there is "unreachable" (nothing sent
    /// that could change anything).
    fn pre_hello(&self, e: GatewayRpcError) -> GatewayRpcError {
        match e {
            GatewayRpcError::Lost { url, reason, .. } => {
                GatewayRpcError::Unreachable { url, reason }
            }
            other => other,
        }
    }

    fn protocol(&self, what: String) -> GatewayRpcError {
        GatewayRpcError::Protocol {
            url: self.url.clone(),
            what,
        }
    }

    /// The gateway's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the gateway offers `method` (an empty list from hello-ok counts as yes).
    pub fn offers(&self, method: &str) -> bool {
        self.methods.is_empty() || self.methods.iter().any(|m| m == method)
    }

    /// The state directory the gateway says it serves (`hello-ok.snapshot.stateDir`).
    pub fn state_dir(&self) -> Option<&str> {
        self.state_dir.as_deref()
    }

    /// The frames exchanged so far, credentials redacted ([`frame::redact`]).
    pub fn trace(&self) -> &[(Direction, String)] {
        &self.trace
    }

    /// Calls `method` with `params` and returns its payload, waiting at most `limit`.
    pub fn call(
        &mut self,
        method: &str,
        params: &Value,
        limit: Duration,
    ) -> Result<Value, GatewayRpcError> {
        if !self.offers(method) {
            return Err(GatewayRpcError::NoMethod {
                url: self.url.clone(),
                method: method.into(),
            });
        }
        let deadline = Instant::now() + limit;
        let id = self.send(method, params)?;
        match self.await_response(&id, method, deadline)? {
            Ok(v) => Ok(v),
            Err(failure) => Err(GatewayRpcError::Failed {
                method: method.into(),
                failure: Box::new(failure),
            }),
        }
    }

    /// Closes the connection politely.
    pub fn close(mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }

    fn send(&mut self, method: &str, params: &Value) -> Result<String, GatewayRpcError> {
        self.next_id += 1;
        let id = format!("{}-{}", self.instance, self.next_id);
        let text = frame::encode_request(&id, method, params);
        self.trace.push((Direction::Sent, frame::redact(&text)));
        self.ws
            .send(Message::Text(text.into()))
            .map_err(|e| GatewayRpcError::Lost {
                url: self.url.clone(),
                method: method.into(),
                reason: e.to_string(),
            })?;
        Ok(id)
    }

    fn await_response(
        &mut self,
        id: &str,
        method: &str,
        deadline: Instant,
    ) -> Result<Result<Value, RpcFailure>, GatewayRpcError> {
        loop {
            match self.read(deadline, method)? {
                Frame::Response { id: rid, outcome } if rid == id => return Ok(outcome),
                _ => continue,
            }
        }
    }

    fn read(&mut self, deadline: Instant, method: &str) -> Result<Frame, GatewayRpcError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(GatewayRpcError::TimedOut {
                    url: self.url.clone(),
                    method: method.into(),
                });
            }
            let _ = self.ws.get_ref().set_read_timeout(Some(left));
            let lost = |reason: String, url: &str| GatewayRpcError::Lost {
                url: url.to_string(),
                method: method.into(),
                reason,
            };
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    self.trace
                        .push((Direction::Received, frame::redact(t.as_str())));
                    return frame::decode(t.as_str()).map_err(|e| self.protocol(e.to_string()));
                }
                Ok(Message::Close(c)) => {
                    let why = c.map_or_else(
                        || "closed".to_string(),
                        |c| format!("closed ({}: {})", u16::from(c.code), c.reason),
                    );
                    return Err(lost(why, &self.url));
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    continue
                }
                Err(e) => return Err(lost(e.to_string(), &self.url)),
            }
        }
    }
}

/// How to pass the right credentials, for a refused connect.
fn credentials_hint(o: &ConnectOptions<'_>) -> String {
    let have = match (&o.address.token, &o.address.password) {
        (Some(_), _) => "A token was sent and refused",
        (None, Some(_)) => "A password was sent and refused",
        (None, None) => "No token or password was found",
    };
    let from = match o.address.source {
        UrlSource::Environment => "with OPENCLAW_GATEWAY_URL set, only OPENCLAW_GATEWAY_TOKEN or OPENCLAW_GATEWAY_PASSWORD are sent".to_string(),
        UrlSource::Config => format!(
            "pass the gateway's token in OPENCLAW_GATEWAY_TOKEN (or its password in OPENCLAW_GATEWAY_PASSWORD), or set gateway.auth.token in {}",
            o.config_path.display()
        ),
    };
    format!("{have}: {from}; or stop the gateway and use --offline")
}

/// The least operator scopes `method` with `params` needs (openclaw@2026.7.1
/// `resolveLeastPrivilegeOperatorScopesForMethod` for the methods clawstate calls).
pub fn least_scopes(method: &str, params: &Value) -> &'static [&'static str] {
    const WRITE_PATCH: &[&str] = &[
        "key", "agentId", "label", "category", "pinned", "archived", "unread",
    ];
    const WRITE_DELETE: &[&str] = &["key", "agentId", "deleteTranscript", "archivedOnly"];
    let only = |allowed: &[&str]| {
        params
            .as_object()
            .is_some_and(|o| o.keys().all(|k| allowed.contains(&k.as_str())))
    };
    match method {
        "sessions.list" => &["operator.read"],
        "sessions.patch" if only(WRITE_PATCH) => &["operator.write"],
        "sessions.delete"
            if params.get("archivedOnly") == Some(&json!(true)) && only(WRITE_DELETE) =>
        {
            &["operator.write"]
        }
        _ => &["operator.admin"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_scopes_follow_the_gateways_method_policy() {
        assert_eq!(least_scopes("sessions.list", &json!({})), ["operator.read"]);
        assert_eq!(
            least_scopes("sessions.cleanup", &json!({"enforce": true})),
            ["operator.admin"]
        );
        assert_eq!(
            least_scopes("sessions.patch", &json!({"key": "k", "label": "x"})),
            ["operator.write"]
        );
        assert_eq!(
            least_scopes("sessions.patch", &json!({"key": "k", "model": "x"})),
            ["operator.admin"]
        );
        assert_eq!(
            least_scopes("sessions.delete", &json!({"key": "k"})),
            ["operator.admin"]
        );
        assert_eq!(
            least_scopes(
                "sessions.delete",
                &json!({"key": "k", "archivedOnly": true})
            ),
            ["operator.write"]
        );
    }

    #[test]
    fn exit_codes_say_refused_77_and_unreachable_75() {
        let u = GatewayRpcError::Unauthorized {
            url: "u".into(),
            reason: "r".into(),
            hint: "h".into(),
        };
        assert_eq!(u.exit_code(), 77);
        let r = GatewayRpcError::Unreachable {
            url: "u".into(),
            reason: "refused".into(),
        };
        assert_eq!(r.exit_code(), 75);
        let l = GatewayRpcError::Lost {
            url: "u".into(),
            method: "m".into(),
            reason: "eof".into(),
        };
        assert_eq!(l.exit_code(), 75);
    }

    #[test]
    fn a_closed_port_is_unreachable() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let address = GatewayAddress {
            url: format!("ws://127.0.0.1:{port}"),
            source: UrlSource::Config,
            token: Some("t".into()),
            password: None,
        };
        let e = GatewayClient::connect(&ConnectOptions {
            address: &address,
            scopes: &["operator.admin"],
            device: None,
            config_path: std::path::Path::new("/x/openclaw.json"),
        })
        .err()
        .expect("nothing listens there");
        assert!(matches!(e, GatewayRpcError::Unreachable { .. }), "{e}");
        assert_eq!(e.exit_code(), 75);
    }
}

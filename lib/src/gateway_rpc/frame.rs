//! The gateway's WebSocket frames (protocol 4 of openclaw@2026.7.1): one JSON object per
//! text message, `{"type":"event"|"req"|"res", …}`.
//!
//! - event: `{"type":"event","event":NAME,"payload":…,"seq"?:N}` (the first one a client
//!   sees is `connect.challenge {nonce, ts}`; `health`, `tick`, `presence` follow at will);
//! - req: `{"type":"req","id":UUID,"method":NAME,"params":…}` (client to gateway);
//! - res: `{"type":"res","id":UUID,"ok":BOOL,"payload"?:…,"error"?:{code,message,details}}`.
//!
//! Decoding keeps what the client needs and ignores the rest, as the gateway's own client
//! does; a frame of another type is [`Frame::Other`], not an error.

use serde_json::{json, Map, Value};
use thiserror::Error;

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A server event.
    Event {
        /// Its name (`connect.challenge`, `health`, `tick`, …).
        event: String,
        /// Its payload (`null` when absent).
        payload: Value,
    },
    /// A response to the request `id`.
    Response {
        /// The request's id.
        id: String,
        /// The payload on success, the error otherwise.
        outcome: Result<Value, RpcFailure>,
    },
    /// A request (what a client sends; decoded for the tests and traces).
    Request {
        /// Its id.
        id: String,
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
    /// A frame of a type this client does not use.
    Other(String),
}

/// The `error` of a failed response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcFailure {
    /// The gateway's error code (`INVALID_REQUEST`, `UNAVAILABLE`, …).
    pub code: Option<String>,
    /// Its message.
    pub message: String,
    /// Its `details` (`null` when absent): for a refused connect, `details.code` says why
    /// (`AUTH_TOKEN_MISMATCH`, `AUTH_TOKEN_MISSING`, `PAIRING_REQUIRED`, …).
    pub details: Value,
}

impl RpcFailure {
    /// `details.code`, when the gateway gave one.
    pub fn detail_code(&self) -> Option<&str> {
        self.details.get("code").and_then(Value::as_str)
    }

    /// Whether this failure refuses the caller's credentials or identity (a connect the
    /// gateway will not authorize), as opposed to a failed method.
    pub fn is_auth_refusal(&self) -> bool {
        let by_detail = self.detail_code().is_some_and(|c| {
            c.starts_with("AUTH_")
                || c.starts_with("PAIRING_")
                || c.contains("DEVICE_IDENTITY")
                || c == "CLIENT_VERSION_MISMATCH"
        });
        by_detail || self.message.starts_with("unauthorized")
    }
}

/// Why a text message is not a frame.
#[derive(Debug, Error, PartialEq)]
pub enum FrameError {
    /// The message is not JSON.
    #[error("a gateway frame that is not JSON: {0}")]
    NotJson(String),
    /// It is JSON but not an object with a string `type`.
    #[error("a gateway frame without a type")]
    NoType,
    /// A field the frame's type needs is missing or of the wrong type.
    #[error("a gateway {kind} frame without a valid {field:?}")]
    Missing {
        /// The frame type.
        kind: &'static str,
        /// The field.
        field: &'static str,
    },
}

/// Decodes one text message.
pub fn decode(text: &str) -> Result<Frame, FrameError> {
    let v: Value = serde_json::from_str(text).map_err(|e| FrameError::NotJson(e.to_string()))?;
    let obj = v.as_object().ok_or(FrameError::NoType)?;
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or(FrameError::NoType)?;
    let string = |kind: &'static str, field: &'static str| {
        obj.get(field)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or(FrameError::Missing { kind, field })
    };
    let field = |name: &str| obj.get(name).cloned().unwrap_or(Value::Null);
    Ok(match kind {
        "event" => Frame::Event {
            event: string("event", "event")?,
            payload: field("payload"),
        },
        "res" => {
            let id = string("res", "id")?;
            let ok = obj
                .get("ok")
                .and_then(Value::as_bool)
                .ok_or(FrameError::Missing {
                    kind: "res",
                    field: "ok",
                })?;
            let outcome = if ok {
                Ok(field("payload"))
            } else {
                let e = field("error");
                Err(RpcFailure {
                    code: e.get("code").and_then(Value::as_str).map(String::from),
                    message: e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error")
                        .to_string(),
                    details: e.get("details").cloned().unwrap_or(Value::Null),
                })
            };
            Frame::Response { id, outcome }
        }
        "req" => Frame::Request {
            id: string("req", "id")?,
            method: string("req", "method")?,
            params: field("params"),
        },
        other => Frame::Other(other.to_string()),
    })
}

/// The text of request `id` calling `method` with `params`.
pub fn encode_request(id: &str, method: &str, params: &Value) -> String {
    json!({"type": "req", "id": id, "method": method, "params": params}).to_string()
}

/// `text` with every credential replaced by `"<redacted>"` (for traces and reports): the
/// values of `token`, `password`, `bootstrapToken`, `deviceToken`, `signature` anywhere.
pub fn redact(text: &str) -> String {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => redact_map(m),
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    fn redact_map(m: &mut Map<String, Value>) {
        for (k, v) in m.iter_mut() {
            let secret = matches!(
                k.as_str(),
                "token" | "password" | "bootstrapToken" | "deviceToken" | "signature"
            );
            if secret && v.is_string() {
                *v = Value::String("<redacted>".into());
            } else {
                walk(v);
            }
        }
    }
    match serde_json::from_str::<Value>(text) {
        Ok(mut v) => {
            walk(&mut v);
            v.to_string()
        }
        Err(_) => "<not JSON>".into(),
    }
}

#[cfg(test)]
mod tests {
    //! On frames recorded between `openclaw sessions cleanup --enforce --json` and a real
    //! openclaw@2026.7.1 gateway (`recorded/`; tokens replaced by `REDACTED`).
    use super::*;

    const CHALLENGE: &str = include_str!("recorded/challenge.json");
    const CONNECT: &str = include_str!("recorded/connect-request.json");
    const HELLO_OK: &str = include_str!("recorded/hello-ok.json");
    const CLEANUP_REQ: &str = include_str!("recorded/cleanup-request.json");
    const HEALTH: &str = include_str!("recorded/health-event.json");
    const CLEANUP_RES: &str = include_str!("recorded/cleanup-response.json");
    const REJECTED: &str = include_str!("recorded/connect-rejected.json");

    #[test]
    fn the_challenge_is_an_event_with_a_nonce() {
        let Frame::Event { event, payload } = decode(CHALLENGE).unwrap() else {
            panic!("not an event")
        };
        assert_eq!(event, "connect.challenge");
        assert_eq!(payload["nonce"], "30d9e415-384d-4f2e-a047-3e1992962761");
    }

    #[test]
    fn hello_ok_is_a_successful_response_listing_the_methods() {
        let Frame::Response { id, outcome } = decode(HELLO_OK).unwrap() else {
            panic!("not a response")
        };
        assert_eq!(id, "b285b6bc-36ee-4a5e-8035-2807f091136a");
        let p = outcome.unwrap();
        assert_eq!(p["type"], "hello-ok");
        assert_eq!(p["protocol"], 4);
        let methods = p["features"]["methods"].as_array().unwrap();
        for m in [
            "sessions.cleanup",
            "sessions.patch",
            "sessions.reset",
            "sessions.delete",
            "sessions.compact",
            "sessions.list",
        ] {
            assert!(methods.iter().any(|x| x == m), "{m}");
        }
    }

    #[test]
    fn a_rejected_connect_is_an_auth_refusal_with_its_reason() {
        let Frame::Response { outcome, .. } = decode(REJECTED).unwrap() else {
            panic!("not a response")
        };
        let e = outcome.unwrap_err();
        assert_eq!(e.code.as_deref(), Some("INVALID_REQUEST"));
        assert_eq!(e.detail_code(), Some("AUTH_TOKEN_MISMATCH"));
        assert!(e
            .message
            .starts_with("unauthorized: gateway token mismatch"));
        assert!(e.is_auth_refusal());
        let method_failure = RpcFailure {
            code: Some("INVALID_REQUEST".into()),
            message: "invalid sessions.patch params".into(),
            details: Value::Null,
        };
        assert!(!method_failure.is_auth_refusal());
    }

    #[test]
    fn the_other_frames_of_a_delegated_cleanup_decode() {
        let Frame::Request { method, params, .. } = decode(CLEANUP_REQ).unwrap() else {
            panic!("not a request")
        };
        assert_eq!(method, "sessions.cleanup");
        assert_eq!(params["enforce"], true);
        assert!(matches!(decode(HEALTH).unwrap(), Frame::Event { event, .. } if event == "health"));
        let Frame::Response { outcome, .. } = decode(CLEANUP_RES).unwrap() else {
            panic!("not a response")
        };
        let p = outcome.unwrap();
        assert_eq!(
            (p["beforeCount"].clone(), p["afterCount"].clone()),
            (json!(4), json!(2))
        );
        let Frame::Request { method, params, .. } = decode(CONNECT).unwrap() else {
            panic!("not a request")
        };
        assert_eq!(method, "connect");
        assert_eq!(params["client"]["mode"], "cli");
    }

    #[test]
    fn a_request_round_trips_and_redaction_hides_credentials() {
        let text = encode_request("1", "sessions.reset", &json!({"key": "main"}));
        assert_eq!(
            decode(&text).unwrap(),
            Frame::Request {
                id: "1".into(),
                method: "sessions.reset".into(),
                params: json!({"key": "main"})
            }
        );
        let red = redact(CONNECT);
        assert!(!red.contains("REDACTED"), "{red}");
        assert!(red.contains("\"token\":\"<redacted>\""), "{red}");
        let signed = redact(r#"{"params":{"device":{"signature":"abc","nonce":"n"}}}"#);
        assert_eq!(
            signed,
            r#"{"params":{"device":{"signature":"<redacted>","nonce":"n"}}}"#
        );
    }

    #[test]
    fn malformed_frames_are_errors_and_unknown_types_are_not() {
        assert!(matches!(decode("{"), Err(FrameError::NotJson(_))));
        assert_eq!(decode("[1]"), Err(FrameError::NoType));
        assert_eq!(
            decode(r#"{"type":"res","id":"x"}"#),
            Err(FrameError::Missing {
                kind: "res",
                field: "ok"
            })
        );
        assert_eq!(
            decode(r#"{"type":"hello"}"#).unwrap(),
            Frame::Other("hello".into())
        );
    }
}

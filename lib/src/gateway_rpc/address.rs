//! Where the gateway of a state dir listens and which credentials to present, resolved as
//! openclaw@2026.7.1's CLI resolves them (`callGateway` → `resolveGatewayCallContext`,
//! `resolveGatewayCredentialsFromConfig`, `resolveGatewayPort`):
//!
//! - **URL.** `OPENCLAW_GATEWAY_URL` when set; otherwise the local gateway,
//!   `ws://127.0.0.1:<port>` (`wss://` with `gateway.tls.enabled`), where the port is the
//!   one the running gateway recorded in its lock file, else `OPENCLAW_GATEWAY_PORT`, else
//!   `gateway.port`, else 18789. A `custom` bind with `gateway.customBindHost` connects there.
//! - **Credentials.** With the URL from the environment, only `OPENCLAW_GATEWAY_TOKEN` /
//!   `OPENCLAW_GATEWAY_PASSWORD` (the config's credentials are intentionally not sent to an
//!   address the config did not name). Otherwise the environment first, then
//!   `gateway.auth.token` / `gateway.auth.password` (a plain string, or a secret reference
//!   `{"source":"env","id":NAME}`).

use serde_json::Value;

use crate::install::paths::Environment;

/// The gateway's default port.
pub const DEFAULT_PORT: u16 = 18789;

/// Where the URL came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlSource {
    /// `OPENCLAW_GATEWAY_URL`.
    Environment,
    /// The config (and the running gateway's lock file).
    Config,
}

/// A gateway to call and how to authenticate to it.
#[derive(Clone, PartialEq, Eq)]
pub struct GatewayAddress {
    /// `ws://host:port` (or `wss://`).
    pub url: String,
    /// Where the URL came from.
    pub source: UrlSource,
    /// The shared token, when one is configured.
    pub token: Option<String>,
    /// The shared password, when one is configured.
    pub password: Option<String>,
}

impl std::fmt::Debug for GatewayAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayAddress")
            .field("url", &self.url)
            .field("source", &self.source)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl GatewayAddress {
    /// Resolves the address from the config root, the caller's environment and the port
    /// the running gateway recorded (see the module doc).
    pub fn resolve(config: &Value, env: &Environment, live_port: Option<u16>) -> GatewayAddress {
        let gateway = config.get("gateway").cloned().unwrap_or(Value::Null);
        let env_token = env
            .meaningful_var("OPENCLAW_GATEWAY_TOKEN")
            .map(String::from);
        let env_password = env
            .meaningful_var("OPENCLAW_GATEWAY_PASSWORD")
            .map(String::from);
        if let Some(url) = env.meaningful_var("OPENCLAW_GATEWAY_URL") {
            return GatewayAddress {
                url: url.to_string(),
                source: UrlSource::Environment,
                token: env_token,
                password: env_password,
            };
        }
        let port = live_port
            .or_else(|| {
                env.meaningful_var("OPENCLAW_GATEWAY_PORT")
                    .and_then(|p| p.parse::<u16>().ok())
                    .filter(|p| *p > 0)
            })
            .or_else(|| {
                gateway
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|p| *p > 0)
            })
            .unwrap_or(DEFAULT_PORT);
        let tls = gateway.pointer("/tls/enabled") == Some(&Value::Bool(true));
        let host = match (
            gateway.get("bind").and_then(Value::as_str),
            gateway.get("customBindHost").and_then(Value::as_str),
        ) {
            (Some("custom"), Some(h)) if !h.trim().is_empty() && h.trim() != "0.0.0.0" => {
                h.trim().to_string()
            }
            _ => "127.0.0.1".to_string(),
        };
        let secret = |name: &str| secret_input(gateway.pointer(&format!("/auth/{name}")), env);
        GatewayAddress {
            url: format!("{}://{host}:{port}", if tls { "wss" } else { "ws" }),
            source: UrlSource::Config,
            token: env_token.or_else(|| secret("token")),
            password: env_password.or_else(|| secret("password")),
        }
    }

    /// Whether the URL's host is this machine (`localhost`, `127.0.0.0/8`, `::1`).
    pub fn is_loopback(&self) -> bool {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = if let Some(v6) = host.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else {
            host.rsplit_once(':').map_or(host, |(h, _)| h)
        };
        let host = host.to_ascii_lowercase();
        host == "localhost"
            || host == "::1"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|a| a.is_loopback())
    }
}

/// A config secret input: a string, or `{"source":"env","id":NAME}`.
fn secret_input(v: Option<&Value>, env: &Environment) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Object(o) if o.get("source").and_then(Value::as_str) == Some("env") => o
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| env.meaningful_var(id))
            .map(String::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(vars: &[(&str, &str)]) -> Environment {
        Environment::from_vars(vars.iter().copied(), "/")
    }

    #[test]
    fn the_local_gateway_from_the_config_with_the_env_token_first() {
        let cfg = json!({"gateway": {"port": 28789, "bind": "loopback", "auth": {"mode": "token", "token": "cfg"}}});
        let a = GatewayAddress::resolve(&cfg, &env(&[]), None);
        assert_eq!(a.url, "ws://127.0.0.1:28789");
        assert_eq!(a.token.as_deref(), Some("cfg"));
        assert!(a.is_loopback());
        let a =
            GatewayAddress::resolve(&cfg, &env(&[("OPENCLAW_GATEWAY_TOKEN", "env")]), Some(4000));
        assert_eq!(
            (a.url.as_str(), a.token.as_deref()),
            ("ws://127.0.0.1:4000", Some("env"))
        );
        let a =
            GatewayAddress::resolve(&json!({}), &env(&[("OPENCLAW_GATEWAY_PORT", "5000")]), None);
        assert_eq!((a.url.as_str(), a.token), ("ws://127.0.0.1:5000", None));
        assert_eq!(
            GatewayAddress::resolve(&json!({}), &env(&[]), None).url,
            "ws://127.0.0.1:18789"
        );
    }

    #[test]
    fn an_env_url_never_gets_the_configs_credentials() {
        let cfg = json!({"gateway": {"auth": {"token": "cfg", "password": "pw"}}});
        let a = GatewayAddress::resolve(
            &cfg,
            &env(&[("OPENCLAW_GATEWAY_URL", "ws://gw.example:1")]),
            None,
        );
        assert_eq!(a.source, UrlSource::Environment);
        assert_eq!((&a.token, &a.password), (&None, &None));
        assert!(!a.is_loopback());
        assert!(!format!("{a:?}").contains("cfg"));
    }

    #[test]
    fn secret_refs_tls_and_custom_binds() {
        let cfg = json!({"gateway": {"bind": "custom", "customBindHost": "127.0.0.2", "tls": {"enabled": true},
            "auth": {"mode": "password", "password": {"source": "env", "id": "GW_PW"}}}});
        let a = GatewayAddress::resolve(&cfg, &env(&[("GW_PW", "s3")]), Some(9));
        assert_eq!(a.url, "wss://127.0.0.2:9");
        assert_eq!(a.password.as_deref(), Some("s3"));
        assert!(a.is_loopback());
        for (url, lo) in [
            ("ws://[::1]:3", true),
            ("ws://localhost", true),
            ("ws://10.0.0.1:3/x", false),
        ] {
            let a = GatewayAddress {
                url: url.into(),
                source: UrlSource::Environment,
                token: None,
                password: None,
            };
            assert_eq!(a.is_loopback(), lo, "{url}");
        }
    }
}

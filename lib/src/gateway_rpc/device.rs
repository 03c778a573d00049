//! The device identity a gateway client signs its connect with, as openclaw@2026.7.1 keeps
//! it: `<stateDir>/identity/device.json`, `{"version":1,"deviceId","publicKeyPem",
//! "privateKeyPem","createdAtMs"}` with an Ed25519 key pair (SPKI and PKCS#8 PEM); the
//! `deviceId` is the hex SHA-256 of the raw 32-byte public key. The legacy shape
//! `{deviceId, publicKey, privateKey}` (raw keys in base64url) is read too.
//!
//! The signature is Ed25519 over the v3 payload
//! `v3|deviceId|clientId|clientMode|role|scopes,…|signedAtMs|token|nonce|platform|deviceFamily`
//! (`buildDeviceAuthPayloadV3`), sent as base64url without padding in the connect's
//! `device` block `{id, publicKey, signature, signedAt, nonce}`.
//!
//! clawstate only reads the identity: it never creates, repairs or migrates the file (the
//! gateway's CLI does that), and an identity that does not check out (keys that do not
//! pair, a `deviceId` that is not the key's) is not used, as the peer's read-only loader
//! (`loadDeviceIdentityIfPresent`) does.

use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey};
use ed25519_dalek::{Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The identity file's largest accepted size.
const MAX_BYTES: u64 = 64 * 1024;

/// A device identity that checked out.
pub struct DeviceIdentity {
    /// The hex SHA-256 of the raw public key.
    pub device_id: String,
    key: SigningKey,
}

impl std::fmt::Debug for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceIdentity({})", self.device_id)
    }
}

/// What the device signs: the fields of the v3 payload.
#[derive(Debug, Clone)]
pub struct SignedConnect<'a> {
    /// `client.id`.
    pub client_id: &'a str,
    /// `client.mode`.
    pub client_mode: &'a str,
    /// `role`.
    pub role: &'a str,
    /// `scopes`.
    pub scopes: &'a [&'a str],
    /// When it was signed (epoch ms).
    pub signed_at_ms: i64,
    /// The shared token sent in `auth.token` (empty when none).
    pub token: &'a str,
    /// The challenge's nonce.
    pub nonce: &'a str,
    /// `client.platform`.
    pub platform: &'a str,
}

/// Where the gateway's CLI keeps the identity of a state dir.
pub fn identity_path(state_dir: &Path) -> PathBuf {
    state_dir.join("identity").join("device.json")
}

impl DeviceIdentity {
    /// The identity at `path`, when it exists and checks out (see the module doc).
    pub fn load(path: &Path) -> Option<DeviceIdentity> {
        let bytes = crate::fs::data_file::open_named(path)
            .and_then(|f| f.read_limited(MAX_BYTES, "a device identity"))
            .ok()?;
        Self::from_json(&serde_json::from_slice(&bytes).ok()?)
    }

    /// The identity in a parsed `device.json`, when it checks out.
    pub fn from_json(v: &Value) -> Option<DeviceIdentity> {
        let stored_id = v.get("deviceId")?.as_str()?;
        let (key, public) = if v.get("version") == Some(&json!(1)) {
            let key = SigningKey::from_pkcs8_pem(v.get("privateKeyPem")?.as_str()?).ok()?;
            let public =
                VerifyingKey::from_public_key_pem(v.get("publicKeyPem")?.as_str()?).ok()?;
            (key, public)
        } else if v.get("version").is_none() {
            let raw = |k: &str| -> Option<[u8; 32]> {
                URL_SAFE_NO_PAD
                    .decode(v.get(k)?.as_str()?.trim_end_matches('='))
                    .ok()?
                    .try_into()
                    .ok()
            };
            let key = SigningKey::from_bytes(&raw("privateKey")?);
            (key, VerifyingKey::from_bytes(&raw("publicKey")?).ok()?)
        } else {
            return None;
        };
        // The pair must match (the peer's keyPairMatches self-check), and the id must be the key's.
        let probe = b"openclaw-device-identity-self-check";
        public.verify(probe, &key.sign(probe)).ok()?;
        let device_id = hex(&Sha256::digest(public.as_bytes()));
        (device_id == stored_id).then_some(DeviceIdentity { device_id, key })
    }

    /// The raw public key, base64url without padding (`device.publicKey`).
    pub fn public_key_b64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.key.verifying_key().as_bytes())
    }

    /// The v3 payload string this device signs for `c`.
    pub fn payload_v3(&self, c: &SignedConnect<'_>) -> String {
        [
            "v3",
            &self.device_id,
            c.client_id,
            c.client_mode,
            c.role,
            &c.scopes.join(","),
            &c.signed_at_ms.to_string(),
            c.token,
            c.nonce,
            &c.platform.trim().to_ascii_lowercase(),
            "",
        ]
        .join("|")
    }

    /// The connect's `device` block for `c`, signed.
    pub fn block(&self, c: &SignedConnect<'_>) -> Value {
        let signature =
            URL_SAFE_NO_PAD.encode(self.key.sign(self.payload_v3(c).as_bytes()).to_bytes());
        json!({
            "id": self.device_id,
            "publicKey": self.public_key_b64url(),
            "signature": signature,
            "signedAt": c.signed_at_ms,
            "nonce": c.nonce,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An identity as openclaw@2026.7.1's `generateIdentity` wrote it (a throwaway key of
    /// a test state dir).
    const DEVICE_JSON: &str = include_str!("recorded/device.json");

    fn connect<'a>(scopes: &'a [&'a str]) -> SignedConnect<'a> {
        SignedConnect {
            client_id: "cli",
            client_mode: "cli",
            role: "operator",
            scopes,
            signed_at_ms: 1_796_143_676_681,
            token: "",
            nonce: "30d9e415-384d-4f2e-a047-3e1992962761",
            platform: "linux",
        }
    }

    #[test]
    fn the_peers_identity_file_loads_and_signs_a_verifiable_block() {
        let id = DeviceIdentity::from_json(&serde_json::from_str(DEVICE_JSON).unwrap())
            .expect("the peer's identity checks out");
        let scopes = ["operator.admin"];
        let c = connect(&scopes);
        let payload = id.payload_v3(&c);
        assert_eq!(
            payload,
            format!("v3|{}|cli|cli|operator|operator.admin|1796143676681||30d9e415-384d-4f2e-a047-3e1992962761|linux|", id.device_id)
        );
        let block = id.block(&c);
        // Ed25519 is deterministic: the peer's signDevicePayload gave this for the payload.
        assert_eq!(
            block["signature"],
            "_VtelILCbKCgUPk3JrnkbaPvonDqhmmpMe-cU81tEvmMBmDdagX4VAus1O0S2Tjt6x1tAkNpj_BOQk81dzLFBA"
        );
        assert_eq!(block["id"], id.device_id.as_str());
        assert_eq!(block["signedAt"], 1_796_143_676_681_i64);
        let public: [u8; 32] = URL_SAFE_NO_PAD
            .decode(block["publicKey"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        let sig: [u8; 64] = URL_SAFE_NO_PAD
            .decode(block["signature"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        VerifyingKey::from_bytes(&public)
            .unwrap()
            .verify(
                payload.as_bytes(),
                &ed25519_dalek::Signature::from_bytes(&sig),
            )
            .expect("the signature verifies over the v3 payload");
    }

    #[test]
    fn an_identity_whose_id_is_not_its_keys_is_not_used() {
        let mut v: Value = serde_json::from_str(DEVICE_JSON).unwrap();
        v["deviceId"] = json!("0".repeat(64));
        assert!(DeviceIdentity::from_json(&v).is_none());
        let mut v: Value = serde_json::from_str(DEVICE_JSON).unwrap();
        v["version"] = json!(2);
        assert!(DeviceIdentity::from_json(&v).is_none());
    }
}

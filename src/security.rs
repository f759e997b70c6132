//! How connections reach a secured cluster: TLS (with the `tls` feature) and SASL (with the
//! `sasl` feature), configured on [`ConnectionConfig::security`](crate::ConnectionConfig).
//!
//! The settings mirror Kafka's `security.protocol`: [`SecurityProtocol::Plaintext`] (the
//! default), [`SecurityProtocol::Ssl`], [`SecurityProtocol::SaslPlaintext`] and
//! [`SecurityProtocol::SaslSsl`]. Secrets (passwords, tokens, private keys) are held in
//! [`Secret`], whose `Debug` output never shows them.

use std::fmt;
use std::path::PathBuf;

/// Kafka's `security.protocol`: whether the connection uses TLS, and whether it authenticates
/// with SASL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SecurityProtocol {
    /// Neither TLS nor SASL (`PLAINTEXT`).
    #[default]
    Plaintext,
    /// TLS, no SASL (`SSL`); the broker may ask for a client certificate (mTLS).
    Ssl,
    /// SASL over plain TCP (`SASL_PLAINTEXT`).
    SaslPlaintext,
    /// SASL over TLS (`SASL_SSL`).
    SaslSsl,
}

impl SecurityProtocol {
    /// Whether connections start with a TLS handshake.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether connections authenticate with SASL after connecting.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }

    /// The name Kafka's clients use (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }
}

impl std::str::FromStr for SecurityProtocol {
    type Err = String;

    /// Parses Kafka's names, in any case.
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => SecurityProtocol::Plaintext,
            "SSL" => SecurityProtocol::Ssl,
            "SASL_PLAINTEXT" => SecurityProtocol::SaslPlaintext,
            "SASL_SSL" => SecurityProtocol::SaslSsl,
            _ => {
                return Err(format!(
                    "unknown security protocol {s:?} (expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)"
                ))
            }
        })
    }
}

/// A password, token or private key. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself, for the code that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

/// Every security setting of a connection.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SecurityConfig {
    /// TLS and/or SASL.
    pub protocol: SecurityProtocol,
    /// Used when [`SecurityProtocol::uses_tls`].
    pub tls: TlsConfig,
    /// Used when [`SecurityProtocol::uses_sasl`]; required then.
    pub sasl: Option<SaslConfig>,
    /// The rustls configuration built from `tls`, shared by clones.
    #[cfg(feature = "tls")]
    pub(crate) tls_cache: TlsCache,
}

impl SecurityConfig {
    /// Plain TCP, no authentication (the default).
    pub fn plaintext() -> Self {
        SecurityConfig::default()
    }

    /// TLS with these settings, no SASL (`SSL`).
    pub fn ssl(tls: TlsConfig) -> Self {
        SecurityConfig {
            protocol: SecurityProtocol::Ssl,
            tls,
            sasl: None,
            ..SecurityConfig::default()
        }
    }

    /// SASL over plain TCP (`SASL_PLAINTEXT`).
    pub fn sasl_plaintext(sasl: SaslConfig) -> Self {
        SecurityConfig {
            protocol: SecurityProtocol::SaslPlaintext,
            tls: TlsConfig::default(),
            sasl: Some(sasl),
            ..SecurityConfig::default()
        }
    }

    /// SASL over TLS (`SASL_SSL`).
    pub fn sasl_ssl(tls: TlsConfig, sasl: SaslConfig) -> Self {
        SecurityConfig {
            protocol: SecurityProtocol::SaslSsl,
            tls,
            sasl: Some(sasl),
            ..SecurityConfig::default()
        }
    }
}

/// Where the certificates that may sign the broker's certificate come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustAnchors {
    /// The operating system's certificate store (the default).
    #[default]
    System,
    /// A PEM file of one or more CA certificates (`ssl.ca.location`,
    /// `ssl.truststore.location` with `ssl.truststore.type=PEM`).
    PemFile(PathBuf),
    /// PEM text of one or more CA certificates (`ssl.truststore.certificates`).
    Pem(String),
}

/// A PEM source: a file, or the text itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PemSource {
    /// A file holding PEM text.
    File(PathBuf),
    /// PEM text; a secret when it holds a private key.
    Inline(Secret),
}

/// TLS settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsConfig {
    /// Who may sign the broker's certificate.
    pub trust: TrustAnchors,
    /// A client certificate chain (PEM) for mTLS; requires [`TlsConfig::client_key`].
    pub client_cert: Option<PemSource>,
    /// The private key (PEM, PKCS#8, PKCS#1 or SEC1) of [`TlsConfig::client_cert`].
    pub client_key: Option<PemSource>,
    /// The password of an encrypted client key (`ssl.key.password`). Encrypted keys are not
    /// supported yet: with an encrypted key, setting one is an error; with a key that is not
    /// encrypted (a store converted to PEM, the password line left in the file, as Java
    /// users do), it is ignored.
    pub client_key_password: Option<Secret>,
    /// Whether the broker's certificate must name the host connected to (Kafka's
    /// `ssl.endpoint.identification.algorithm=https`, the default). Turning it off logs a
    /// warning on every connection.
    pub verify_hostname: bool,
    /// The TLS versions offered (`ssl.enabled.protocols`, `ssl.protocol`): TLS 1.2 and 1.3 by
    /// default, as Java's client.
    pub versions: TlsVersions,
}

/// The TLS versions a connection may use; at least one is on. rustls speaks 1.2 and 1.3 only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsVersions {
    /// TLS 1.2.
    pub tls12: bool,
    /// TLS 1.3.
    pub tls13: bool,
}

impl Default for TlsVersions {
    fn default() -> Self {
        TlsVersions {
            tls12: true,
            tls13: true,
        }
    }
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            trust: TrustAnchors::System,
            client_cert: None,
            client_key: None,
            client_key_password: None,
            verify_hostname: true,
            versions: TlsVersions::default(),
        }
    }
}

/// The SCRAM hash functions Kafka supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScramMechanism {
    /// `SCRAM-SHA-256` (RFC 7677).
    Sha256,
    /// `SCRAM-SHA-512`.
    Sha512,
}

/// Where an OAUTHBEARER token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenSource {
    /// A fixed token.
    Static(Secret),
    /// A shell command whose standard output (trimmed) is the token; run for every
    /// authentication, so a re-authentication gets a fresh token.
    Command(String),
}

/// A SASL mechanism and its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaslConfig {
    /// `PLAIN` (RFC 4616): the password travels as is, so use it over TLS.
    Plain {
        /// The user name.
        username: String,
        /// The password.
        password: Secret,
    },
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512` (RFC 5802): the password never travels, and the
    /// broker proves it knows it too.
    Scram {
        /// The hash function.
        mechanism: ScramMechanism,
        /// The user name.
        username: String,
        /// The password.
        password: Secret,
    },
    /// `OAUTHBEARER` (RFC 7628, KIP-255) with a bearer token.
    OAuthBearer {
        /// The token, or the command that prints it.
        token: TokenSource,
    },
}

impl SaslConfig {
    /// The mechanism's name as the broker knows it (`PLAIN`, `SCRAM-SHA-512`, ...).
    pub fn mechanism_name(&self) -> &'static str {
        match self {
            SaslConfig::Plain { .. } => "PLAIN",
            SaslConfig::Scram {
                mechanism: ScramMechanism::Sha256,
                ..
            } => "SCRAM-SHA-256",
            SaslConfig::Scram {
                mechanism: ScramMechanism::Sha512,
                ..
            } => "SCRAM-SHA-512",
            SaslConfig::OAuthBearer { .. } => "OAUTHBEARER",
        }
    }
}

/// The built rustls configuration of the last [`TlsConfig`] seen, shared by clones of a
/// connection config (building one reads the system's certificate store).
#[cfg(feature = "tls")]
#[derive(Clone, Default)]
pub(crate) struct TlsCache(pub(crate) std::sync::Arc<std::sync::Mutex<Option<Built>>>);

/// A rustls configuration and the settings it was built from.
#[cfg(feature = "tls")]
type Built = (TlsConfig, std::sync::Arc<rustls::ClientConfig>);

#[cfg(feature = "tls")]
impl std::fmt::Debug for TlsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug() {
        let config = SecurityConfig::sasl_ssl(
            TlsConfig {
                client_key: Some(PemSource::Inline(Secret::new(
                    "-----BEGIN PRIVATE KEY-----",
                ))),
                ..TlsConfig::default()
            },
            SaslConfig::Scram {
                mechanism: ScramMechanism::Sha512,
                username: "alice".into(),
                password: Secret::new("hunter2"),
            },
        );
        let shown = format!("{config:?} {config:#?}");
        assert!(shown.contains("alice"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("PRIVATE KEY"), "{shown}");
    }

    #[test]
    fn protocol_names_round_trip() {
        for p in [
            SecurityProtocol::Plaintext,
            SecurityProtocol::Ssl,
            SecurityProtocol::SaslPlaintext,
            SecurityProtocol::SaslSsl,
        ] {
            assert_eq!(p.name().parse::<SecurityProtocol>(), Ok(p));
            assert_eq!(p.name().to_lowercase().parse::<SecurityProtocol>(), Ok(p));
        }
        assert!("TLS".parse::<SecurityProtocol>().is_err());
    }
}

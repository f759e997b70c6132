//! The settings, one per meaning, applied to a [`ClientConfig`]: servers, timeouts, and the
//! security settings (TLS, SASL) checked against each other and refused with a reason, never
//! dropped.

use std::collections::HashMap;

use crate::client::ClientConfig;
use crate::security::{
    PemSource, SaslConfig, ScramMechanism, Secret, SecurityConfig, SecurityProtocol, TlsConfig,
    TlsVersions, TokenSource, TrustAnchors,
};

use super::jaas::{parse_jaas, Jaas};
use super::names::Setting;
use super::value::Value;
use super::{Error, Result};

pub(super) struct Settings(pub(super) HashMap<Setting, Value>);

impl Settings {
    pub(super) fn get(&self, setting: Setting) -> Option<&Value> {
        self.0.get(&setting)
    }

    /// The one of `settings` that is set; an error if several are.
    pub(super) fn one_of(&self, settings: &[Setting], what: &str) -> Result<Option<&Value>> {
        let mut set = settings.iter().filter_map(|s| self.get(*s));
        let first = set.next();
        if let (Some(a), Some(b)) = (first, set.next()) {
            return Err(Error::Invalid {
                reason: format!(
                    "{} ({}) and {} ({}) both set {what}; keep one",
                    a.key, a.origin, b.key, b.origin
                ),
            });
        }
        Ok(first)
    }

    pub(super) fn apply(&self, config: &mut ClientConfig) -> Result<()> {
        use Setting as S;
        if let Some(v) = self.get(S::Bootstrap) {
            let servers: Vec<String> = v
                .text
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if servers.is_empty() {
                return Err(v.invalid("a comma-separated list of host:port"));
            }
            config.bootstrap = servers;
        }
        if let Some(v) = self.get(S::ClientId) {
            config.connection.client_id = v.trimmed().to_owned();
        }
        if let Some(v) = self.get(S::RequestTimeout) {
            config.connection.request_timeout = v.milliseconds(false)?;
        }
        if let Some(v) = self.get(S::ConnectTimeout) {
            config.connection.connect_timeout = v.milliseconds(false)?;
        }
        if let Some(v) = self.get(S::MetadataMaxAge) {
            config.metadata_max_age = v.milliseconds(true)?;
        }
        if let Some(v) = self.get(S::RetryBackoff) {
            config.retry_backoff = v.milliseconds(true)?;
        }
        if let Some(v) = self.get(S::RetryBackoffMax) {
            config.retry_backoff_max = v.milliseconds(true)?;
        }
        if let Some(v) = self.get(S::RetryDeadline) {
            config.retry_deadline = v.milliseconds(false)?;
        }
        if let Some(security) = self.security()? {
            config.connection.security = std::sync::Arc::new(security);
        }
        Ok(())
    }

    /// The security settings, if any property mentions them.
    pub(super) fn security(&self) -> Result<Option<SecurityConfig>> {
        use Setting as S;
        let protocol = match self.get(S::SecurityProtocol) {
            Some(v) => v
                .trimmed()
                .parse::<SecurityProtocol>()
                .map_err(|_| v.invalid("PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"))?,
            None => SecurityProtocol::Plaintext,
        };
        let sasl = self.sasl(protocol)?;
        let tls = self.tls(protocol)?;
        let mentioned = self.get(S::SecurityProtocol).is_some() || sasl.is_some() || tls.is_some();
        Ok(mentioned.then(|| SecurityConfig {
            protocol,
            tls: tls.unwrap_or_default(),
            sasl,
            ..SecurityConfig::default()
        }))
    }

    pub(super) fn sasl(&self, protocol: SecurityProtocol) -> Result<Option<SaslConfig>> {
        use Setting as S;
        const SASL: &[Setting] = &[
            S::SaslMechanism,
            S::SaslJaasConfig,
            S::SaslUsername,
            S::SaslPassword,
            S::OAuthToken,
            S::OAuthTokenCommand,
        ];
        if !protocol.uses_sasl() {
            if let Some(v) = SASL.iter().find_map(|s| self.get(*s)) {
                return Err(Error::Invalid {
                    reason: format!(
                        "{} ({}) is set, but security.protocol is {}, without SASL; set security.protocol=SASL_SSL (or SASL_PLAINTEXT), or remove it",
                        v.key, v.origin, protocol.name()
                    ),
                });
            }
            return Ok(None);
        }
        let Some(mechanism) = self.get(S::SaslMechanism) else {
            return Err(Error::Invalid {
                reason: format!(
                    "security.protocol {} needs sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER); Kafka's default, GSSAPI, is not supported",
                    protocol.name()
                ),
            });
        };
        let jaas = match self.get(S::SaslJaasConfig) {
            Some(v) => Some((v, parse_jaas(v)?)),
            None => None,
        };
        let name = mechanism.trimmed().to_ascii_uppercase();
        let scram = match name.as_str() {
            "PLAIN" => None,
            "SCRAM-SHA-256" => Some(ScramMechanism::Sha256),
            "SCRAM-SHA-512" => Some(ScramMechanism::Sha512),
            "OAUTHBEARER" => return self.oauthbearer(jaas).map(Some),
            "GSSAPI" => {
                return Err(mechanism.unsupported(
                    "GSSAPI (Kerberos) is not supported; kseek speaks PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER",
                ))
            }
            "AWS_MSK_IAM" => {
                return Err(mechanism.unsupported(
                    "AWS_MSK_IAM is not supported; on MSK use SCRAM-SHA-512 or mTLS",
                ))
            }
            _ => {
                return Err(mechanism
                    .invalid("PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"))
            }
        };
        if let Some(v) = self.one_of(&[S::OAuthToken, S::OAuthTokenCommand], "a token")? {
            return Err(Error::Invalid {
                reason: format!(
                    "{} ({}) is for OAUTHBEARER, but sasl.mechanism is {name}",
                    v.key, v.origin
                ),
            });
        }
        let (username, password) = match (jaas, self.get(S::SaslUsername)) {
            (Some((j, _)), Some(u)) => {
                return Err(Error::Invalid {
                    reason: format!(
                        "{} ({}) and {} ({}) both set the user; keep one",
                        j.key, j.origin, u.key, u.origin
                    ),
                })
            }
            (Some((j, Jaas::Credentials { username, password })), None) => {
                if let Some(p) = self.get(S::SaslPassword) {
                    return Err(Error::Invalid {
                        reason: format!(
                            "{} ({}) and {} ({}) both set the password; keep one",
                            j.key, j.origin, p.key, p.origin
                        ),
                    });
                }
                (username, password)
            }
            (Some((j, Jaas::OAuthBearer)), None) => {
                return Err(j.unsupported(format!(
                    "OAuthBearerLoginModule is for OAUTHBEARER, but sasl.mechanism is {name}"
                )))
            }
            (None, Some(u)) => {
                let Some(p) = self.get(S::SaslPassword) else {
                    return Err(Error::Invalid {
                        reason: format!("{} ({}) is set but sasl.password is not", u.key, u.origin),
                    });
                };
                if u.trimmed().is_empty() {
                    return Err(u.invalid("a user name"));
                }
                if p.text.is_empty() {
                    return Err(p.invalid("a password"));
                }
                (u.trimmed().to_owned(), Secret::new(p.text.clone()))
            }
            (None, None) => {
                if let Some(p) = self.get(S::SaslPassword) {
                    return Err(Error::Invalid {
                        reason: format!("{} ({}) is set but sasl.username is not", p.key, p.origin),
                    });
                }
                return Err(Error::Invalid {
                    reason: format!(
                        "sasl.mechanism {name} needs credentials: sasl.jaas.config (with {}) or sasl.username and sasl.password",
                        if scram.is_some() { "ScramLoginModule" } else { "PlainLoginModule" }
                    ),
                });
            }
        };
        Ok(Some(match scram {
            None => SaslConfig::Plain { username, password },
            Some(mechanism) => SaslConfig::Scram {
                mechanism,
                username,
                password,
            },
        }))
    }

    pub(super) fn oauthbearer(&self, jaas: Option<(&Value, Jaas)>) -> Result<SaslConfig> {
        use Setting as S;
        if let Some((j, Jaas::Credentials { .. })) = &jaas {
            return Err(j.unsupported(
                "PlainLoginModule and ScramLoginModule are not for OAUTHBEARER; use OAuthBearerLoginModule, or no sasl.jaas.config",
            ));
        }
        if let Some(v) = self
            .get(S::SaslUsername)
            .or_else(|| self.get(S::SaslPassword))
        {
            return Err(Error::Invalid {
                reason: format!(
                    "{} ({}) is not used by OAUTHBEARER; give the token with sasl.oauthbearer.token or sasl.oauthbearer.token.command",
                    v.key, v.origin
                ),
            });
        }
        let token = match self.one_of(&[S::OAuthToken, S::OAuthTokenCommand], "the token")? {
            Some(v) if v.trimmed().is_empty() => return Err(v.invalid("a token or a command")),
            Some(v) if v.key == "sasl.oauthbearer.token" => {
                TokenSource::Static(Secret::new(v.trimmed().to_owned()))
            }
            Some(v) => TokenSource::Command(v.text.clone()),
            None => {
                return Err(Error::Invalid {
                    reason: "sasl.mechanism OAUTHBEARER needs sasl.oauthbearer.token or sasl.oauthbearer.token.command".into(),
                })
            }
        };
        Ok(SaslConfig::OAuthBearer { token })
    }

    pub(super) fn tls(&self, protocol: SecurityProtocol) -> Result<Option<TlsConfig>> {
        use Setting as S;
        const TLS: &[Setting] = &[
            S::TruststoreLocation,
            S::TruststoreType,
            S::TruststoreCertificates,
            S::CaLocation,
            S::CaPem,
            S::KeystoreLocation,
            S::KeystoreType,
            S::KeystoreCertificateChain,
            S::KeystoreKey,
            S::CertificateLocation,
            S::CertificatePem,
            S::KeyLocation,
            S::KeyPem,
            S::KeyPassword,
            S::EndpointIdentification,
            S::CertificateVerification,
            S::EnabledProtocols,
            S::Protocol,
        ];
        let first = TLS.iter().find_map(|s| self.get(*s));
        if !protocol.uses_tls() {
            if let Some(v) = first {
                return Err(Error::Invalid {
                    reason: format!(
                        "{} ({}) is set, but security.protocol is {}, without TLS; set security.protocol=SSL (or SASL_SSL), or remove it",
                        v.key, v.origin, protocol.name()
                    ),
                });
            }
            return Ok(None);
        }
        let mut tls = TlsConfig::default();

        // Where the CA certificates come from.
        let truststore_type =
            self.store_type(S::TruststoreType, S::TruststoreLocation, "truststore")?;
        let trust = self.one_of(
            &[
                S::TruststoreLocation,
                S::TruststoreCertificates,
                S::CaLocation,
                S::CaPem,
            ],
            "the CA certificates",
        )?;
        if let Some(v) = trust {
            tls.trust = match v.key.as_str() {
                "ssl.truststore.location" => {
                    self.check_pem_store(v, truststore_type, "ssl.truststore.type", "truststore")?;
                    TrustAnchors::PemFile(v.path()?)
                }
                "ssl.truststore.certificates" => TrustAnchors::Pem(v.pem()?),
                // librdkafka: `probe` looks in the system's usual places.
                "ssl.ca.location" if v.trimmed() == "probe" => TrustAnchors::System,
                "ssl.ca.location" => TrustAnchors::PemFile(v.path()?),
                _ => TrustAnchors::Pem(v.pem()?),
            };
        }

        // The client certificate and key (mTLS).
        let keystore_type = self.store_type(S::KeystoreType, S::KeystoreLocation, "keystore")?;
        let cert = self.one_of(
            &[
                S::KeystoreLocation,
                S::KeystoreCertificateChain,
                S::CertificateLocation,
                S::CertificatePem,
            ],
            "the client certificate",
        )?;
        let key = self.one_of(
            &[
                S::KeystoreLocation,
                S::KeystoreKey,
                S::KeyLocation,
                S::KeyPem,
            ],
            "the client key",
        )?;
        if let Some(v) = cert {
            tls.client_cert = Some(match v.key.as_str() {
                "ssl.keystore.location" => {
                    self.check_pem_store(v, keystore_type, "ssl.keystore.type", "keystore")?;
                    PemSource::File(v.path()?)
                }
                "ssl.keystore.certificate.chain" => PemSource::Inline(Secret::new(v.pem()?)),
                "ssl.certificate.location" => PemSource::File(v.path()?),
                _ => PemSource::Inline(Secret::new(v.pem()?)),
            });
        }
        if let Some(v) = key {
            tls.client_key = Some(match v.key.as_str() {
                // A PEM keystore holds the chain and the key in one file.
                "ssl.keystore.location" => PemSource::File(v.path()?),
                "ssl.keystore.key" => PemSource::Inline(Secret::new(v.pem()?)),
                "ssl.key.location" => PemSource::File(v.path()?),
                _ => PemSource::Inline(Secret::new(v.pem()?)),
            });
        }
        // Each half of the pair names the setting of the other half that goes with it.
        match (cert, key) {
            (Some(c), None) => {
                return Err(half_a_pair(
                    c,
                    "a client certificate but no key",
                    ("ssl.keystore.key", "ssl.key.location"),
                ))
            }
            (None, Some(k)) => {
                return Err(half_a_pair(
                    k,
                    "a client key but no certificate",
                    ("ssl.keystore.certificate.chain", "ssl.certificate.location"),
                ))
            }
            _ => {}
        }
        if let Some(v) = self.get(S::KeyPassword) {
            if key.is_none() {
                return Err(Error::Invalid {
                    reason: format!("{} ({}) is set, but no client key is", v.key, v.origin),
                });
            }
            tls.client_key_password = Some(Secret::new(v.text.clone()));
        }

        if let Some(v) = self.get(S::EndpointIdentification) {
            tls.verify_hostname = match v.trimmed().to_ascii_lowercase().as_str() {
                "https" => true,
                // Java turns it off with an empty value, librdkafka with `none`.
                "" | "none" => false,
                _ => {
                    return Err(
                        v.invalid("https, or empty (or none) to turn hostname verification off")
                    )
                }
            };
        }
        tls.versions = self.tls_versions()?;
        if let Some(v) = self.get(S::CertificateVerification) {
            match v.trimmed().to_ascii_lowercase().as_str() {
                "true" => {}
                "false" => return Err(v.unsupported(
                    "kseek always verifies the broker's certificate; to trust a private CA, give it with ssl.ca.location",
                )),
                _ => return Err(v.invalid("true or false")),
            }
        }
        Ok(Some(tls))
    }

    /// The TLS versions of `ssl.enabled.protocols` (a list) and `ssl.protocol` (Java's
    /// SSLContext protocol: the highest version). Versions rustls doesn't speak (TLSv1.1 and
    /// older) are left out of a list that names a supported one too, since offering fewer old
    /// versions is never weaker; a setting that leaves no supported version is refused.
    pub(super) fn tls_versions(&self) -> Result<TlsVersions> {
        use Setting as S;
        let mut versions = TlsVersions::default();
        if let Some(v) = self.get(S::EnabledProtocols) {
            let (mut tls12, mut tls13) = (false, false);
            for name in v.text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match name.to_ascii_uppercase().as_str() {
                    "TLSV1.2" => tls12 = true,
                    "TLSV1.3" => tls13 = true,
                    "TLSV1.1" | "TLSV1" | "SSLV3" | "SSLV2HELLO" => {}
                    _ => return Err(v.invalid("a list of TLSv1.2 and TLSv1.3")),
                }
            }
            if !(tls12 || tls13) {
                return Err(v.unsupported(
                    "kseek speaks TLSv1.2 and TLSv1.3 only (rustls); add one of them",
                ));
            }
            versions = TlsVersions { tls12, tls13 };
        }
        if let Some(v) = self.get(S::Protocol) {
            match v.trimmed().to_ascii_uppercase().as_str() {
                "TLS" | "TLSV1.3" => {}
                "TLSV1.2" => versions.tls13 = false,
                "TLSV1.1" | "TLSV1" | "SSL" | "SSLV3" => {
                    return Err(v.unsupported(
                        "kseek speaks TLSv1.2 and TLSv1.3 only (rustls); set TLSv1.3 or TLSv1.2",
                    ))
                }
                _ => return Err(v.invalid("TLSv1.3, TLSv1.2 or TLS")),
            }
            if !(versions.tls12 || versions.tls13) {
                return Err(v.unsupported(
                    "ssl.enabled.protocols allows TLSv1.3 only, and this TLSv1.2: no version is left",
                ));
            }
        }
        Ok(versions)
    }

    /// The type `ssl.truststore.type` / `ssl.keystore.type` declares. A JKS or PKCS12 type is
    /// an error here only when no store file is given (with a file, [`Self::check_pem_store`]
    /// names the file in its error, the one that helps).
    pub(super) fn store_type(
        &self,
        setting: Setting,
        location: Setting,
        store: &str,
    ) -> Result<StoreType> {
        let Some(v) = self.get(setting) else {
            return Ok(StoreType::Unset);
        };
        let declared = match v.trimmed().to_ascii_uppercase().as_str() {
            "PEM" => StoreType::Pem,
            "JKS" => StoreType::Jks,
            "PKCS12" => StoreType::Pkcs12,
            _ => return Err(v.invalid("PEM")),
        };
        if matches!(declared, StoreType::Jks | StoreType::Pkcs12) && self.get(location).is_none() {
            return Err(v.unsupported(format!(
                "{} {store}s are not read; convert the store to PEM and set {}=PEM",
                v.trimmed().to_ascii_uppercase(),
                v.key
            )));
        }
        Ok(declared)
    }

    /// A store file needs type PEM; without a type, a `.pem`, `.crt` or `.cer` file is taken
    /// as PEM (Java would read it as JKS, its default). Any other store is refused with one
    /// line that names the file and gives the command that converts it, and the properties
    /// to set instead.
    pub(super) fn check_pem_store(
        &self,
        location: &Value,
        declared: StoreType,
        type_key: &str,
        store: &str,
    ) -> Result<()> {
        let path = location.trimmed();
        let lower = path.to_ascii_lowercase();
        let has = |exts: &[&str]| exts.iter().any(|ext| lower.ends_with(ext));
        let pkcs12 = match declared {
            StoreType::Pem => return Ok(()),
            StoreType::Unset if has(&[".pem", ".crt", ".cer"]) => return Ok(()),
            StoreType::Pkcs12 => true,
            StoreType::Jks => false,
            StoreType::Unset if has(&[".p12", ".pfx"]) => true,
            StoreType::Unset if has(&[".jks", ".keystore", ".truststore"]) => false,
            StoreType::Unset => {
                return Err(location.unsupported(format!(
                    "{path} has no {type_key}, and Java's default, JKS, is not read; if the file is PEM, set {type_key}=PEM, else {}",
                    conversion(store, path, false)
                )))
            }
        };
        let kind = if pkcs12 { "PKCS12" } else { "JKS" };
        Err(location.unsupported(format!(
            "{path} is a {kind} {store}, which kseek doesn't read; {}",
            conversion(store, path, pkcs12)
        )))
    }
}

/// `given` (one half of a client certificate and key) is set without the other half. The
/// error says which setting to add: in `other`, the keystore one first, then the file one,
/// matching the kind of `given`.
fn half_a_pair(given: &Value, what: &str, other: (&str, &str)) -> Error {
    let (keystore, file) = other;
    Error::Invalid {
        reason: format!(
            "{} ({}) gives {what}; set {}",
            given.key,
            given.origin,
            if given.key.starts_with("ssl.keystore") {
                keystore
            } else {
                file
            }
        ),
    }
}

/// The type a truststore or keystore setting declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StoreType {
    /// No `ssl.*store.type`: Java's default is JKS.
    Unset,
    Pem,
    Jks,
    Pkcs12,
}

/// The exact commands that turn the JKS or PKCS12 store `path` into the PEM file kseek
/// reads, and the properties to set then.
pub(super) fn conversion(store: &str, path: &str, pkcs12: bool) -> String {
    match (store, pkcs12) {
        ("truststore", false) => format!(
            "convert it with `keytool -list -rfc -keystore {path} > ca.pem`, then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM (or remove both to trust the system's CA certificates)"
        ),
        ("truststore", true) => format!(
            "convert it with `openssl pkcs12 -in {path} -nokeys -out ca.pem`, then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM (or remove both to trust the system's CA certificates)"
        ),
        (_, false) => format!(
            "convert it with `keytool -importkeystore -srckeystore {path} -destkeystore client.p12 -deststoretype PKCS12` and `openssl pkcs12 -in client.p12 -nodes -out client.pem`, then set ssl.keystore.location=client.pem and ssl.keystore.type=PEM"
        ),
        (_, true) => format!(
            "convert it with `openssl pkcs12 -in {path} -nodes -out client.pem`, then set ssl.keystore.location=client.pem and ssl.keystore.type=PEM"
        ),
    }
}

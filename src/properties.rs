//! Configuration people already have: Java `.properties` files (a Kafka client's
//! `client.properties`), kcat config files, and single `key=value` settings (the CLI's `-X`),
//! applied to a [`ClientConfig`].
//!
//! Both the Java client's property names and librdkafka's are accepted (see the table below);
//! where both name the same setting, the one given last wins, so a `-X` after a file
//! overrides it. A property kseek doesn't know is an error naming it, never silently ignored;
//! those common in client files that mean nothing to a reader are accepted and ignored
//! (producer, consumer-group membership, fetch tuning and Schema Registry settings), and
//! listed by [`Properties::ignored`], so a Java `consumer.properties` works as it is. Its
//! `group.id` is ignored too: a commit goes only to a group named where it is used, never to
//! an application's group by accident. Security settings are honoured or refused with the
//! reason, never dropped.
//!
//! A value may take a secret from the environment with `${env:NAME}` (the syntax of Kafka's
//! `EnvVarConfigProvider`; kseek needs no `config.providers` line for it, and accepts one that
//! declares `EnvVarConfigProvider`). Secrets never appear in errors or `Debug` output.
//!
//! | Setting | Java client | librdkafka |
//! |---|---|---|
//! | bootstrap servers | `bootstrap.servers` | `bootstrap.servers`, `metadata.broker.list` |
//! | client id | `client.id` | `client.id` |
//! | TLS and/or SASL | `security.protocol` | `security.protocol` |
//! | SASL mechanism | `sasl.mechanism` | `sasl.mechanisms` |
//! | user and password | `sasl.jaas.config` (`PlainLoginModule`, `ScramLoginModule`) | `sasl.username`, `sasl.password` |
//! | OAUTHBEARER token | `sasl.oauthbearer.token`, `sasl.oauthbearer.token.command` (kseek's own names) | the same |
//! | CA certificates | `ssl.truststore.location` (type PEM), `ssl.truststore.certificates` | `ssl.ca.location`, `ssl.ca.pem` |
//! | client certificate | `ssl.keystore.location` (type PEM), `ssl.keystore.certificate.chain` | `ssl.certificate.location`, `ssl.certificate.pem` |
//! | client key | `ssl.keystore.location` (type PEM), `ssl.keystore.key` | `ssl.key.location`, `ssl.key.pem` |
//! | key password | `ssl.key.password` | `ssl.key.password` |
//! | hostname verification | `ssl.endpoint.identification.algorithm` (`https`, or empty for off) | the same (`https`, `none`) |
//! | TLS versions (1.2, 1.3) | `ssl.enabled.protocols`, `ssl.protocol` | |
//! | request timeout | `request.timeout.ms` | `socket.timeout.ms` |
//! | connect timeout | `socket.connection.setup.timeout.ms` | the same |
//! | metadata max age | `metadata.max.age.ms` | the same |
//! | retry backoff | `retry.backoff.ms`, `retry.backoff.max.ms` | the same |
//! | retry deadline | `default.api.timeout.ms` | |
//!
//! # References
//! <https://kafka.apache.org/documentation/#consumerconfigs>,
//! <https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md>,
//! `java.util.Properties.load`, KIP-297 (config providers), KIP-651 (PEM stores).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::client::ClientConfig;
use crate::security::{
    PemSource, SaslConfig, ScramMechanism, Secret, SecurityConfig, SecurityProtocol, TlsConfig,
    TlsVersions, TokenSource, TrustAnchors,
};

/// A `Result` whose error is a configuration [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A property accepted but not used ([`Properties::ignored`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ignored {
    /// Where it was set: `file:line` or `-X`.
    pub origin: String,
    /// The property.
    pub key: String,
    /// Why it is ignored, when that is worth a line every time (`group.id`).
    pub notice: Option<&'static str>,
}

/// A property that can't be used. Each names where it came from (`client.properties:12`,
/// `-X`) and the property, never a secret value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text isn't properties syntax (a bad `\u` escape, `-X` without `=`).
    #[error("{origin}: {reason}")]
    Syntax {
        /// Where: `file:line` or `-X`.
        origin: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// kseek doesn't know this property.
    #[error("{origin}: unknown property {key:?}")]
    Unknown {
        /// Where it was set.
        origin: String,
        /// The property.
        key: String,
    },
    /// kseek knows this property (or this value of it) but can't do what it asks.
    #[error("{origin}: {key}: {reason}")]
    Unsupported {
        /// Where it was set.
        origin: String,
        /// The property.
        key: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The value doesn't parse.
    #[error("{origin}: {key}: invalid value{}; expected {expected}", value.as_deref().map(|v| format!(" {v:?}")).unwrap_or_default())]
    InvalidValue {
        /// Where it was set.
        origin: String,
        /// The property.
        key: String,
        /// The value, unless it is a secret.
        value: Option<String>,
        /// What would be accepted.
        expected: String,
    },
    /// A `${env:NAME}` names a variable that isn't set.
    #[error("{origin}: {key}: the environment variable {name} is not set")]
    MissingEnv {
        /// Where it was set.
        origin: String,
        /// The property.
        key: String,
        /// The variable.
        name: String,
    },
    /// The settings don't make a working configuration together (SASL_SSL without a
    /// mechanism, a client key without a certificate, ...).
    #[error("{reason}")]
    Invalid {
        /// What is missing or contradictory, and how to fix it.
        reason: String,
    },
}

/// Properties collected from files and `key=value` settings, in order, to be applied to a
/// [`ClientConfig`] with [`Properties::apply`].
///
/// ```
/// let mut props = kseek::properties::Properties::new();
/// props.add_text("bootstrap.servers=broker-1:9092\nclient.id: reporting\n", "client.properties")?;
/// props.add_assignment("request.timeout.ms=5000")?;
/// let mut config = kseek::ClientConfig::default();
/// props.apply(&mut config)?;
/// assert_eq!(config.bootstrap, ["broker-1:9092"]);
/// # Ok::<(), kseek::properties::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Properties {
    entries: Vec<Entry>,
}

#[derive(Clone)]
struct Entry {
    key: String,
    value: String,
    origin: String,
}

impl fmt::Debug for Properties {
    // Keys and non-secret values only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for e in &self.entries {
            if is_secret(&e.key) {
                map.entry(&e.key, &format_args!("***"));
            } else {
                map.entry(&e.key, &e.value);
            }
        }
        map.finish()
    }
}

impl Properties {
    /// No properties.
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Adds the properties of a Java `.properties` (or kcat config) file's text; `source`
    /// names it in errors (`source:line`).
    ///
    /// The syntax is `java.util.Properties`': `key=value`, `key: value` or `key value`;
    /// lines starting with `#` or `!` are comments; a line ending in `\` continues on the
    /// next; `\t`, `\n`, `\r`, `\f`, `\uXXXX` and `\` before any other character are escapes.
    /// The text is UTF-8 (Java reads ISO-8859-1 unless told otherwise; kcat reads bytes).
    ///
    /// # Errors
    /// [`Error::Syntax`] for a malformed `\u` escape; [`Error::Unknown`] or
    /// [`Error::Unsupported`] for a property kseek can't use.
    pub fn add_text(&mut self, text: &str, source: &str) -> Result<()> {
        for (line, key, value) in parse_properties(text, source)? {
            self.push(key, value, format!("{source}:{line}"))?;
        }
        Ok(())
    }

    /// Adds one `key=value` setting (the CLI's `-X key=value`): split at the first `=`, the
    /// key trimmed, the value taken as it is (no escapes).
    ///
    /// # Errors
    /// [`Error::Syntax`] without `=` or with an empty key; [`Error::Unknown`] or
    /// [`Error::Unsupported`] for a property kseek can't use.
    pub fn add_assignment(&mut self, assignment: &str) -> Result<()> {
        let syntax = |reason| Error::Syntax {
            origin: "-X".into(),
            reason,
        };
        let (key, value) = assignment
            .split_once('=')
            .ok_or(syntax("expected key=value"))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(syntax("the key before = is empty"));
        }
        self.push(key.to_owned(), value.to_owned(), "-X".to_owned())
    }

    /// Adds one property; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error::Unknown`] or [`Error::Unsupported`] for a property kseek can't use.
    pub fn set(&mut self, key: &str, value: &str, origin: &str) -> Result<()> {
        self.push(key.to_owned(), value.to_owned(), origin.to_owned())
    }

    fn push(&mut self, key: String, value: String, origin: String) -> Result<()> {
        match lookup(&key) {
            Some(
                Known::Setting(_)
                | Known::Ignored
                | Known::Noticed(_)
                | Known::DnsLookup
                | Known::Provider,
            ) => {}
            Some(Known::Rejected(reason)) => {
                return Err(Error::Unsupported {
                    origin,
                    key,
                    reason: reason.to_owned(),
                })
            }
            None => return Err(Error::Unknown { origin, key }),
        }
        self.entries.push(Entry { key, value, origin });
        Ok(())
    }

    /// Applies the properties to `config`, taking `${env:NAME}` from the process
    /// environment. Settings not mentioned keep their values in `config`; the security
    /// settings are replaced as a whole when any is mentioned.
    ///
    /// # Errors
    /// Any [`Error`]: a value that doesn't parse, a missing environment variable, settings
    /// that don't work together.
    pub fn apply(&self, config: &mut ClientConfig) -> Result<()> {
        self.apply_with_env(config, &|name| std::env::var(name).ok())
    }

    /// [`Properties::apply`], with `env` looking up the variables of `${env:NAME}`.
    ///
    /// # Errors
    /// As [`Properties::apply`].
    pub fn apply_with_env(
        &self,
        config: &mut ClientConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<()> {
        let providers = self.env_providers()?;
        let mut values: HashMap<Setting, Value> = HashMap::new();
        for entry in &self.entries {
            match lookup(&entry.key) {
                Some(Known::Setting(setting)) => {
                    let text = substitute(entry, &providers, env)?;
                    let value = Value {
                        key: entry.key.clone(),
                        origin: entry.origin.clone(),
                        text,
                    };
                    values.insert(setting, value);
                }
                Some(Known::DnsLookup) => {
                    check_dns_lookup(entry, &substitute(entry, &providers, env)?)?;
                }
                _ => {}
            }
        }
        Settings(values).apply(config)
    }

    /// The properties accepted but not used, in the order given: producer, consumer-group
    /// and Schema Registry settings, and client plumbing kseek doesn't have. A command line
    /// tool lists them on request; those with a [`Ignored::notice`] deserve a line every time.
    pub fn ignored(&self) -> Vec<Ignored> {
        self.entries
            .iter()
            .filter_map(|e| {
                let notice = match lookup(&e.key)? {
                    Known::Ignored => None,
                    Known::Noticed(why) => Some(why),
                    _ => return None,
                };
                Some(Ignored {
                    origin: e.origin.clone(),
                    key: e.key.clone(),
                    notice,
                })
            })
            .collect()
    }

    /// The provider names that read the environment: `env`, and any declared with
    /// `config.providers.NAME.class=...EnvVarConfigProvider`.
    fn env_providers(&self) -> Result<Vec<String>> {
        let mut names = vec!["env".to_owned()];
        for entry in &self.entries {
            let Some(name) = entry
                .key
                .strip_prefix("config.providers.")
                .and_then(|k| k.strip_suffix(".class"))
            else {
                continue;
            };
            if entry.value.trim() != ENV_PROVIDER_CLASS {
                return Err(Error::Unsupported {
                    origin: entry.origin.clone(),
                    key: entry.key.clone(),
                    reason: format!(
                        "config provider {:?} is not supported; kseek reads ${{env:NAME}} only",
                        entry.value.trim()
                    ),
                });
            }
            names.push(name.to_owned());
        }
        Ok(names)
    }
}

const ENV_PROVIDER_CLASS: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// The settings kseek maps, one per meaning (aliases share one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Setting {
    Bootstrap,
    ClientId,
    SecurityProtocol,
    SaslMechanism,
    SaslJaasConfig,
    SaslUsername,
    SaslPassword,
    OAuthToken,
    OAuthTokenCommand,
    TruststoreLocation,
    TruststoreType,
    TruststoreCertificates,
    CaLocation,
    CaPem,
    KeystoreLocation,
    KeystoreType,
    KeystoreCertificateChain,
    KeystoreKey,
    CertificateLocation,
    CertificatePem,
    KeyLocation,
    KeyPem,
    KeyPassword,
    EndpointIdentification,
    CertificateVerification,
    EnabledProtocols,
    Protocol,
    RequestTimeout,
    ConnectTimeout,
    MetadataMaxAge,
    RetryBackoff,
    RetryBackoffMax,
    RetryDeadline,
}

enum Known {
    Setting(Setting),
    /// Accepted and ignored.
    Ignored,
    /// Accepted and ignored, with a notice worth showing every time (the reason).
    Noticed(&'static str),
    /// `client.dns.lookup`: accepted when its value is what kseek does.
    DnsLookup,
    /// Known, and refused with this reason.
    Rejected(&'static str),
    /// `config.providers` and `config.providers.NAME.class`.
    Provider,
}

fn lookup(key: &str) -> Option<Known> {
    use Setting as S;
    let setting = match key {
        "bootstrap.servers" | "metadata.broker.list" => S::Bootstrap,
        "client.id" => S::ClientId,
        "security.protocol" => S::SecurityProtocol,
        "sasl.mechanism" | "sasl.mechanisms" => S::SaslMechanism,
        "sasl.jaas.config" => S::SaslJaasConfig,
        "sasl.username" => S::SaslUsername,
        "sasl.password" => S::SaslPassword,
        "sasl.oauthbearer.token" => S::OAuthToken,
        "sasl.oauthbearer.token.command" => S::OAuthTokenCommand,
        "ssl.truststore.location" => S::TruststoreLocation,
        "ssl.truststore.type" => S::TruststoreType,
        "ssl.truststore.certificates" => S::TruststoreCertificates,
        "ssl.ca.location" => S::CaLocation,
        "ssl.ca.pem" => S::CaPem,
        "ssl.keystore.location" => S::KeystoreLocation,
        "ssl.keystore.type" => S::KeystoreType,
        "ssl.keystore.certificate.chain" => S::KeystoreCertificateChain,
        "ssl.keystore.key" => S::KeystoreKey,
        "ssl.certificate.location" => S::CertificateLocation,
        "ssl.certificate.pem" => S::CertificatePem,
        "ssl.key.location" => S::KeyLocation,
        "ssl.key.pem" => S::KeyPem,
        "ssl.key.password" => S::KeyPassword,
        "ssl.endpoint.identification.algorithm" => S::EndpointIdentification,
        "enable.ssl.certificate.verification" => S::CertificateVerification,
        "ssl.enabled.protocols" => S::EnabledProtocols,
        "ssl.protocol" => S::Protocol,
        "request.timeout.ms" | "socket.timeout.ms" => S::RequestTimeout,
        "socket.connection.setup.timeout.ms" => S::ConnectTimeout,
        "metadata.max.age.ms" => S::MetadataMaxAge,
        "retry.backoff.ms" => S::RetryBackoff,
        "retry.backoff.max.ms" => S::RetryBackoffMax,
        "default.api.timeout.ms" => S::RetryDeadline,
        _ => return ignored_or_rejected(key),
    };
    Some(Known::Setting(setting))
}

fn ignored_or_rejected(key: &str) -> Option<Known> {
    Some(match key {
        // Producer settings: kseek never produces.
        "acks" | "linger.ms" | "batch.size" | "compression.type" | "enable.idempotence"
        | "delivery.timeout.ms" | "key.serializer" | "value.serializer" => Known::Ignored,
        // Java deserializer classes: kseek hands out the raw bytes.
        "key.deserializer" | "value.deserializer" => Known::Ignored,
        // Consumer-group membership: kseek never joins a group (its commits are standalone),
        // never commits unless asked, and takes each read's start position explicitly.
        "session.timeout.ms" | "heartbeat.interval.ms" | "max.poll.interval.ms"
        | "max.poll.records" | "enable.auto.commit" | "auto.offset.reset" => Known::Ignored,
        // Schema Registry settings (in Confluent Cloud's generated files), for serializers.
        "schema.registry.url"
        | "basic.auth.credentials.source"
        | "basic.auth.user.info"
        | "schema.registry.basic.auth.user.info" => Known::Ignored,
        // kseek tries every address a name resolves to; the value is checked.
        "client.dns.lookup" => Known::DnsLookup,
        // Accepted so a consumer.properties works as it is, but never used: a commit must
        // not go to an application's group by accident, so a group is named where it is used.
        "group.id" => Known::Noticed(
            "ignored: a consumer group is named where it is used (kseek's --group), so a commit never goes to an application's group by accident",
        ),
        // The rest of a subscribing Java consumer's settings, and client plumbing kseek
        // doesn't have (metrics, interceptors, rack-aware fetching, socket buffers).
        "group.instance.id" | "group.protocol" | "group.remote.assignor"
        | "partition.assignment.strategy" | "auto.commit.interval.ms"
        | "allow.auto.create.topics" | "exclude.internal.topics" | "check.crcs"
        | "client.rack" | "fetch.min.bytes" | "fetch.max.bytes" | "fetch.max.wait.ms"
        | "max.partition.fetch.bytes" | "receive.buffer.bytes" | "send.buffer.bytes"
        | "reconnect.backoff.ms" | "reconnect.backoff.max.ms"
        | "connections.max.idle.ms" | "socket.connection.setup.timeout.max.ms"
        | "interceptor.classes" | "metric.reporters" | "metrics.num.samples"
        | "metrics.recording.level" | "metrics.sample.window.ms" | "enable.metrics.push"
        | "auto.include.jmx.reporter" | "security.providers" => Known::Ignored,
        "isolation.level" => Known::Rejected(
            "the isolation level is chosen per read (kseek's --isolation), not in configuration",
        ),
        "sasl.login.callback.handler.class" | "sasl.client.callback.handler.class"
        | "sasl.login.class" => Known::Rejected(
            "Java classes can't be loaded; for OAUTHBEARER print a token with sasl.oauthbearer.token.command",
        ),
        "sasl.oauthbearer.token.endpoint.url" => Known::Rejected(
            "fetching OAuth tokens from an endpoint is not supported; print a token with sasl.oauthbearer.token.command",
        ),
        // Passwords of JKS and PKCS12 stores: such a store is refused with the command that
        // converts it (the error that helps, whatever the order of the lines); beside a PEM
        // store, a password left in the file protects nothing and is ignored.
        "ssl.truststore.password" | "ssl.keystore.password" => Known::Ignored,
        "config.providers" => Known::Provider,
        _ if key.starts_with("config.providers.") && key.ends_with(".class") => Known::Provider,
        _ => return None,
    })
}

/// Properties whose values are secrets: never shown.
fn is_secret(key: &str) -> bool {
    matches!(
        key,
        "sasl.jaas.config"
            | "sasl.password"
            | "sasl.oauthbearer.token"
            // A command may carry a credential in its arguments.
            | "sasl.oauthbearer.token.command"
            | "ssl.keystore.key"
            | "ssl.key.pem"
            | "ssl.key.password"
            | "basic.auth.user.info"
            | "schema.registry.basic.auth.user.info"
    ) || key.contains("password")
}

fn check_dns_lookup(entry: &Entry, value: &str) -> Result<()> {
    match value.trim() {
        "use_all_dns_ips" | "default" => Ok(()),
        "resolve_canonical_bootstrap_servers_only" => Err(Error::Unsupported {
            origin: entry.origin.clone(),
            key: entry.key.clone(),
            reason: "kseek does not canonicalize bootstrap names; it tries every address a name resolves to (use_all_dns_ips)".into(),
        }),
        other => Err(Error::InvalidValue {
            origin: entry.origin.clone(),
            key: entry.key.clone(),
            value: Some(other.to_owned()),
            expected: "use_all_dns_ips".into(),
        }),
    }
}

/// Replaces every `${PROVIDER:NAME}` (or `${PROVIDER::NAME}`, with an empty path) whose
/// provider reads the environment by the variable's value.
fn substitute(
    entry: &Entry,
    providers: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String> {
    let mut out = String::new();
    let mut rest = entry.value.as_str();
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + len];
        // Kafka's pattern: `${provider:[path:]key}`; without a colon it is not a variable.
        let Some((provider, path_and_name)) = inner.split_once(':') else {
            out.push_str(&rest[..start + len + 1]);
            rest = &rest[start + len + 1..];
            continue;
        };
        let name = match path_and_name.split_once(':') {
            Some(("", name)) => name,
            Some(_) => {
                return Err(Error::Unsupported {
                    origin: entry.origin.clone(),
                    key: entry.key.clone(),
                    reason: format!(
                        "${{{provider}:PATH:NAME}} with a path is not supported; use ${{env:NAME}}"
                    ),
                })
            }
            None => path_and_name,
        };
        if !providers.iter().any(|p| p == provider) {
            return Err(Error::Unsupported {
                origin: entry.origin.clone(),
                key: entry.key.clone(),
                reason: format!(
                    "config provider {provider:?} is not supported; kseek reads ${{env:NAME}} only"
                ),
            });
        }
        let value = env(name).ok_or_else(|| Error::MissingEnv {
            origin: entry.origin.clone(),
            key: entry.key.clone(),
            name: name.to_owned(),
        })?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A setting's value, with where it came from.
struct Value {
    key: String,
    origin: String,
    text: String,
}

impl Value {
    fn invalid(&self, expected: &str) -> Error {
        Error::InvalidValue {
            origin: self.origin.clone(),
            key: self.key.clone(),
            value: (!is_secret(&self.key)).then(|| self.text.clone()),
            expected: expected.to_owned(),
        }
    }

    fn unsupported(&self, reason: impl Into<String>) -> Error {
        Error::Unsupported {
            origin: self.origin.clone(),
            key: self.key.clone(),
            reason: reason.into(),
        }
    }

    fn trimmed(&self) -> &str {
        self.text.trim()
    }

    fn milliseconds(&self, allow_zero: bool) -> Result<Duration> {
        let expected = if allow_zero {
            "a number of milliseconds"
        } else {
            "a positive number of milliseconds"
        };
        match self.trimmed().parse::<u64>() {
            Ok(0) if !allow_zero => Err(self.invalid(expected)),
            Ok(ms) => Ok(Duration::from_millis(ms)),
            Err(_) => Err(self.invalid(expected)),
        }
    }

    fn path(&self) -> Result<PathBuf> {
        match self.trimmed() {
            "" => Err(self.invalid("a file path")),
            path => Ok(PathBuf::from(path)),
        }
    }

    fn pem(&self) -> Result<String> {
        if self.trimmed().is_empty() {
            return Err(self.invalid("PEM text"));
        }
        Ok(self.text.clone())
    }
}

struct Settings(HashMap<Setting, Value>);

impl Settings {
    fn get(&self, setting: Setting) -> Option<&Value> {
        self.0.get(&setting)
    }

    /// The one of `settings` that is set; an error if several are.
    fn one_of(&self, settings: &[Setting], what: &str) -> Result<Option<&Value>> {
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

    fn apply(&self, config: &mut ClientConfig) -> Result<()> {
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
    fn security(&self) -> Result<Option<SecurityConfig>> {
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

    fn sasl(&self, protocol: SecurityProtocol) -> Result<Option<SaslConfig>> {
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

    fn oauthbearer(&self, jaas: Option<(&Value, Jaas)>) -> Result<SaslConfig> {
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

    fn tls(&self, protocol: SecurityProtocol) -> Result<Option<TlsConfig>> {
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
        match (cert, key) {
            (Some(c), None) => {
                return Err(Error::Invalid {
                    reason: format!(
                        "{} ({}) gives a client certificate but no key; set {}",
                        c.key,
                        c.origin,
                        if c.key.starts_with("ssl.keystore") {
                            "ssl.keystore.key"
                        } else {
                            "ssl.key.location"
                        }
                    ),
                })
            }
            (None, Some(k)) => {
                return Err(Error::Invalid {
                    reason: format!(
                        "{} ({}) gives a client key but no certificate; set {}",
                        k.key,
                        k.origin,
                        if k.key.starts_with("ssl.keystore") {
                            "ssl.keystore.certificate.chain"
                        } else {
                            "ssl.certificate.location"
                        }
                    ),
                })
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
    fn tls_versions(&self) -> Result<TlsVersions> {
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
    fn store_type(&self, setting: Setting, location: Setting, store: &str) -> Result<StoreType> {
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
    fn check_pem_store(
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

/// The type a truststore or keystore setting declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreType {
    /// No `ssl.*store.type`: Java's default is JKS.
    Unset,
    Pem,
    Jks,
    Pkcs12,
}

/// The exact commands that turn the JKS or PKCS12 store `path` into the PEM file kseek
/// reads, and the properties to set then.
fn conversion(store: &str, path: &str, pkcs12: bool) -> String {
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

/// A properties file or `-X` setting that can't be used becomes [`crate::ErrorKind::Config`], with
/// the same one-line message (where it was set, the property; never a secret value).
impl From<Error> for crate::Error {
    fn from(error: Error) -> Self {
        crate::ErrorKind::Config {
            message: error.to_string(),
        }
        .into()
    }
}

/// What a `sasl.jaas.config` says.
enum Jaas {
    /// `PlainLoginModule` or `ScramLoginModule` with `username` and `password`.
    Credentials { username: String, password: Secret },
    /// `OAuthBearerLoginModule` without options (the token comes from kseek's own
    /// properties).
    OAuthBearer,
}

/// Parses a JAAS login configuration entry, the form `sasl.jaas.config` takes:
/// `<LoginModule class> <flag> [<option>=<value> ...];`, values quoted (`"..."` or `'...'`,
/// with `\` escapes) or bare, `//` and `/* */` comments allowed. Exactly one module, as Kafka
/// requires. Errors never show option values.
fn parse_jaas(v: &Value) -> Result<Jaas> {
    let syntax = |reason: &str| v.unsupported(format!("not a JAAS configuration: {reason}"));
    let tokens = jaas_tokens(&v.text).map_err(syntax)?;
    let mut tokens = tokens.into_iter();
    let Some(JaasToken::Word(module)) = tokens.next() else {
        return Err(syntax("expected a login module class first"));
    };
    let Some(JaasToken::Word(flag)) = tokens.next() else {
        return Err(syntax(
            "expected a control flag (required) after the login module",
        ));
    };
    if !["required", "requisite", "sufficient", "optional"]
        .contains(&flag.to_ascii_lowercase().as_str())
    {
        return Err(syntax(
            "the control flag after the login module must be required, requisite, sufficient or optional",
        ));
    }
    let mut options: Vec<(String, String)> = Vec::new();
    loop {
        match tokens.next() {
            Some(JaasToken::Semicolon) => break,
            Some(JaasToken::Word(key)) => {
                if tokens.next() != Some(JaasToken::Equals) {
                    return Err(syntax(&format!("expected = after option {key:?}")));
                }
                match tokens.next() {
                    Some(JaasToken::Word(value) | JaasToken::Quoted(value)) => {
                        options.push((key, value))
                    }
                    _ => return Err(syntax(&format!("expected a value after {key}="))),
                }
            }
            None => return Err(syntax("missing the closing ';'")),
            Some(_) => return Err(syntax("expected an option name=value or ';'")),
        }
    }
    if tokens.next().is_some() {
        return Err(syntax(
            "more than one login module; Kafka's sasl.jaas.config takes exactly one",
        ));
    }

    let class = module.rsplit('.').next().unwrap_or_default();
    match class {
        "PlainLoginModule" | "ScramLoginModule" => {
            let (mut username, mut password) = (None, None);
            for (key, value) in options {
                match key.as_str() {
                    "username" => username = Some(value),
                    "password" => password = Some(Secret::new(value)),
                    "tokenauth" => {
                        return Err(v.unsupported(
                            "delegation tokens (tokenauth) are not supported",
                        ))
                    }
                    _ => {
                        return Err(v.unsupported(format!(
                            "{class} option {key:?} is not supported (only username and password)"
                        )))
                    }
                }
            }
            let username = username
                .filter(|u| !u.is_empty())
                .ok_or_else(|| v.unsupported(format!("{class} has no username")))?;
            let password = password
                .filter(|p| !p.expose().is_empty())
                .ok_or_else(|| v.unsupported(format!("{class} has no password")))?;
            Ok(Jaas::Credentials { username, password })
        }
        "OAuthBearerLoginModule" => match options.first() {
            None => Ok(Jaas::OAuthBearer),
            Some((key, _)) => Err(v.unsupported(format!(
                "OAuthBearerLoginModule option {key:?} is not supported; give the token with sasl.oauthbearer.token or sasl.oauthbearer.token.command"
            ))),
        },
        "Krb5LoginModule" => Err(v.unsupported("Kerberos (Krb5LoginModule, GSSAPI) is not supported")),
        "IAMLoginModule" => Err(v.unsupported(
            "AWS IAM authentication (IAMLoginModule) is not supported; on MSK use SCRAM-SHA-512 or mTLS",
        )),
        _ => Err(v.unsupported(format!(
            "login module {module:?} is not supported (PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule)"
        ))),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum JaasToken {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

fn jaas_tokens(text: &str) -> std::result::Result<Vec<JaasToken>, &'static str> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut previous = ' ';
                loop {
                    match chars.next() {
                        None => return Err("a /* comment is not closed"),
                        Some('/') if previous == '*' => break,
                        Some(c) => previous = c,
                    }
                }
            }
            '=' => tokens.push(JaasToken::Equals),
            ';' => tokens.push(JaasToken::Semicolon),
            '"' | '\'' => {
                let quote = c;
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err("a quoted value is not closed"),
                        Some(c) if c == quote => break,
                        Some('\\') => match chars.next() {
                            None => return Err("a quoted value is not closed"),
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some('r') => value.push('\r'),
                            Some('b') => value.push('\u{8}'),
                            Some('f') => value.push('\u{c}'),
                            Some(other) => value.push(other),
                        },
                        Some(c) => value.push(c),
                    }
                }
                tokens.push(JaasToken::Quoted(value));
            }
            c => {
                let mut word = String::from(c);
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '=' | ';' | '"' | '\'') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(JaasToken::Word(word));
            }
        }
    }
    Ok(tokens)
}

/// `java.util.Properties.load`: the (line, key, value) of every property in `text`, the line
/// being where the property starts.
fn parse_properties(text: &str, source: &str) -> Result<Vec<(usize, String, String)>> {
    let mut out = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((index, first)) = lines.next() {
        let first = first.strip_suffix('\r').unwrap_or(first);
        let trimmed = first.trim_start_matches([' ', '\t', '\u{c}']);
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join continuation lines: a line ending in an odd number of backslashes goes on,
        // the next line's leading whitespace dropped.
        let mut logical = String::from(trimmed);
        while ends_in_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => {
                    let next = next.strip_suffix('\r').unwrap_or(next);
                    logical.push_str(next.trim_start_matches([' ', '\t', '\u{c}']));
                }
                None => break,
            }
        }
        let line = index + 1;
        let (key, value) = split_key_value(&logical);
        let unescape = |s: &str| {
            unescape(s).map_err(|reason| Error::Syntax {
                origin: format!("{source}:{line}"),
                reason,
            })
        };
        out.push((line, unescape(key)?, unescape(value)?));
    }
    Ok(out)
}

fn ends_in_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Splits a logical line at the first unescaped `=`, `:` or whitespace; whitespace around
/// the separator is dropped, one `=` or `:` after whitespace too.
fn split_key_value(line: &str) -> (&str, &str) {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\u{c}');
    let mut escaped = false;
    let mut end = line.len();
    let mut separator = None;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_ws(c) {
            end = i;
            separator = Some(c);
            break;
        }
    }
    let key = &line[..end];
    let mut rest = &line[end..];
    if let Some(sep) = separator {
        rest = &rest[sep.len_utf8()..];
        if is_ws(sep) {
            rest = rest.trim_start_matches(is_ws);
            if let Some(r) = rest.strip_prefix(['=', ':']) {
                rest = r;
            }
        }
        rest = rest.trim_start_matches(is_ws);
    }
    (key, rest)
}

fn unescape(s: &str) -> std::result::Result<String, &'static str> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or("malformed \\uXXXX escape")?;
                // A surrogate (half of a UTF-16 pair) can't stand alone in a Rust string.
                out.push(char::from_u32(code).ok_or("\\u escape of a lone UTF-16 surrogate")?);
            }
            Some(other) => out.push(other),
            // A trailing backslash at the end of the text: Java drops it.
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "KAFKA_PASSWORD" => Some("from-env-s3cret".into()),
            "KAFKA_USER" => Some("env-user".into()),
            _ => None,
        }
    }

    fn load(text: &str) -> Result<ClientConfig> {
        let mut props = Properties::new();
        props.add_text(text, "client.properties")?;
        let mut config = ClientConfig::default();
        props.apply_with_env(&mut config, &env)?;
        Ok(config)
    }

    fn error(text: &str) -> String {
        load(text).unwrap_err().to_string()
    }

    #[test]
    fn java_properties_syntax() {
        let text = "# a comment\n\
            ! another\n\
            \n\
            a=1\n\
            b: 2\n\
            c 3\n\
            \x20\x20d   =   spaced value  \n\
            e\\=x\\:y=colon:and=equals\n\
            f=first \\\n\
            \x20\x20\x20second\\\\\n\
            g=\\u00e9t\\u00C9 \\t tab\\n\n\
            h\n\
            i=a\\\\\\\n\
            continued\r\n\
            j=\\#not a comment\n\
            # k=commented\\\n\
            l=after";
        let parsed = parse_properties(text, "t").unwrap();
        let pairs: Vec<(&str, &str)> = parsed
            .iter()
            .map(|(_, k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("d", "spaced value  "),
                ("e=x:y", "colon:and=equals"),
                ("f", "first second\\"),
                ("g", "étÉ \t tab\n"),
                ("h", ""),
                ("i", "a\\continued"),
                ("j", "#not a comment"),
                ("l", "after"),
            ]
        );
        assert_eq!(parsed[0].0, 4);
        assert_eq!(parsed.last().unwrap().0, 17);
    }

    #[test]
    fn bad_unicode_escapes_name_the_line() {
        let err = parse_properties("a=1\nb=\\u12g4\n", "x.properties").unwrap_err();
        assert_eq!(err.to_string(), "x.properties:2: malformed \\uXXXX escape");
        assert!(parse_properties("b=\\u12", "x").is_err());
        assert!(parse_properties("b=\\ud800", "x").is_err());
    }

    #[test]
    fn confluent_cloud_client_properties() {
        let config = load(
            "# Required connection configs for Kafka producer, consumer, and admin\n\
             bootstrap.servers=pkc-abc12.us-east-1.aws.confluent.cloud:9092\n\
             security.protocol=SASL_SSL\n\
             sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username='ABCDEFGHIJKLMNOP' password='cflt/s3cret+KEY';\n\
             sasl.mechanism=PLAIN\n\
             # Required for correctness in Apache Kafka clients prior to 2.6\n\
             client.dns.lookup=use_all_dns_ips\n\
             # Best practice for higher availability in Apache Kafka clients prior to 3.0\n\
             session.timeout.ms=45000\n\
             # Best practice for Kafka producer to prevent data loss\n\
             acks=all\n\
             # Required connection configs for Confluent Cloud Schema Registry\n\
             schema.registry.url=https://psrc-xyz.us-east-2.aws.confluent.cloud\n\
             basic.auth.credentials.source=USER_INFO\n\
             basic.auth.user.info=SRKEY:SRSECRET\n",
        )
        .unwrap();
        assert_eq!(
            config.bootstrap,
            ["pkc-abc12.us-east-1.aws.confluent.cloud:9092"]
        );
        let security = &config.connection.security;
        assert_eq!(security.protocol, SecurityProtocol::SaslSsl);
        assert_eq!(security.tls, TlsConfig::default());
        assert_eq!(
            security.sasl,
            Some(SaslConfig::Plain {
                username: "ABCDEFGHIJKLMNOP".into(),
                password: Secret::new("cflt/s3cret+KEY"),
            })
        );
        let shown = format!("{config:?}");
        assert!(!shown.contains("cflt/s3cret"), "{shown}");
    }

    #[test]
    fn msk_scram_client_properties() {
        let config = load(
            "security.protocol=SASL_SSL\n\
             sasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n\
             \x20   username=\"alice\" \\\n\
             \x20   password=\"${env:KAFKA_PASSWORD}\";\n\
             ssl.truststore.location=/etc/kafka/ca.pem\n\
             ssl.truststore.type=PEM\n\
             request.timeout.ms=20000\n",
        )
        .unwrap();
        let security = &config.connection.security;
        assert_eq!(security.protocol, SecurityProtocol::SaslSsl);
        assert_eq!(
            security.sasl,
            Some(SaslConfig::Scram {
                mechanism: ScramMechanism::Sha512,
                username: "alice".into(),
                password: Secret::new("from-env-s3cret"),
            })
        );
        assert_eq!(
            security.tls.trust,
            TrustAnchors::PemFile("/etc/kafka/ca.pem".into())
        );
        assert!(security.tls.verify_hostname);
        assert_eq!(config.connection.request_timeout, Duration::from_secs(20));
    }

    #[test]
    fn msk_mtls_with_a_pem_keystore() {
        let config = load(
            "security.protocol=SSL\n\
             ssl.keystore.type=PEM\n\
             ssl.keystore.location=/certs/client.pem\n\
             ssl.key.password=${env:KAFKA_PASSWORD}\n",
        )
        .unwrap();
        let tls = &config.connection.security.tls;
        assert_eq!(config.connection.security.protocol, SecurityProtocol::Ssl);
        assert_eq!(config.connection.security.sasl, None);
        assert_eq!(tls.trust, TrustAnchors::System);
        assert_eq!(
            tls.client_cert,
            Some(PemSource::File("/certs/client.pem".into()))
        );
        assert_eq!(
            tls.client_key,
            Some(PemSource::File("/certs/client.pem".into()))
        );
        assert_eq!(
            tls.client_key_password,
            Some(Secret::new("from-env-s3cret"))
        );
    }

    #[test]
    fn kcat_config_with_librdkafka_names() {
        let config = load(
            "metadata.broker.list=b-1.example.com:9096,b-2.example.com:9096\n\
             security.protocol=sasl_ssl\n\
             sasl.mechanisms=SCRAM-SHA-256\n\
             sasl.username=${env:KAFKA_USER}\n\
             sasl.password=p@ss word\n\
             ssl.ca.location=/etc/ssl/ca.pem\n\
             ssl.certificate.location=/etc/ssl/client.crt\n\
             ssl.key.location=/etc/ssl/client.key\n\
             ssl.endpoint.identification.algorithm=none\n\
             enable.ssl.certificate.verification=true\n\
             socket.timeout.ms=7000\n\
             client.id=kcat-like\n",
        )
        .unwrap();
        assert_eq!(
            config.bootstrap,
            ["b-1.example.com:9096", "b-2.example.com:9096"]
        );
        assert_eq!(config.connection.client_id, "kcat-like");
        assert_eq!(config.connection.request_timeout, Duration::from_secs(7));
        let security = &config.connection.security;
        assert_eq!(
            security.sasl,
            Some(SaslConfig::Scram {
                mechanism: ScramMechanism::Sha256,
                username: "env-user".into(),
                password: Secret::new("p@ss word"),
            })
        );
        assert_eq!(
            security.tls.trust,
            TrustAnchors::PemFile("/etc/ssl/ca.pem".into())
        );
        assert_eq!(
            security.tls.client_cert,
            Some(PemSource::File("/etc/ssl/client.crt".into()))
        );
        assert_eq!(
            security.tls.client_key,
            Some(PemSource::File("/etc/ssl/client.key".into()))
        );
        assert!(!security.tls.verify_hostname);
    }

    #[test]
    fn timeouts_and_retries() {
        let config = load(
            "socket.connection.setup.timeout.ms=2500\n\
             metadata.max.age.ms=0\n\
             retry.backoff.ms=50\n\
             retry.backoff.max.ms=2000\n\
             default.api.timeout.ms=60000\n",
        )
        .unwrap();
        assert_eq!(
            config.connection.connect_timeout,
            Duration::from_millis(2500)
        );
        assert_eq!(config.metadata_max_age, Duration::ZERO);
        assert_eq!(config.retry_backoff, Duration::from_millis(50));
        assert_eq!(config.retry_backoff_max, Duration::from_secs(2));
        assert_eq!(config.retry_deadline, Duration::from_secs(60));
        // Nothing about security: it is left as it was.
        assert_eq!(
            config.connection.security.protocol,
            SecurityProtocol::Plaintext
        );
        assert_eq!(
            error("request.timeout.ms=0"),
            "client.properties:1: request.timeout.ms: invalid value \"0\"; expected a positive number of milliseconds"
        );
        assert!(error("retry.backoff.ms=-1").contains("expected a number of milliseconds"));
    }

    #[test]
    fn x_assignments_override_the_file() {
        let mut props = Properties::new();
        props
            .add_text("bootstrap.servers=a:9092\nsasl.mechanism=PLAIN\n", "f")
            .unwrap();
        props
            .add_assignment("metadata.broker.list= b:9092 , c:9092")
            .unwrap();
        props
            .add_assignment("sasl.mechanisms=SCRAM-SHA-256")
            .unwrap();
        props
            .add_assignment("security.protocol=SASL_PLAINTEXT")
            .unwrap();
        props.add_assignment("sasl.username=u").unwrap();
        props
            .add_assignment("sasl.password= keeps = spaces ")
            .unwrap();
        let mut config = ClientConfig::default();
        props.apply_with_env(&mut config, &env).unwrap();
        assert_eq!(config.bootstrap, ["b:9092", "c:9092"]);
        assert_eq!(
            config.connection.security.sasl,
            Some(SaslConfig::Scram {
                mechanism: ScramMechanism::Sha256,
                username: "u".into(),
                password: Secret::new(" keeps = spaces "),
            })
        );
        let err = Properties::new().add_assignment("no-equals").unwrap_err();
        assert_eq!(err.to_string(), "-X: expected key=value");
        let err = Properties::new().add_assignment("  =v").unwrap_err();
        assert_eq!(err.to_string(), "-X: the key before = is empty");
        let err = Properties::new()
            .add_assignment("fetch.wait.max.ms=5")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "-X: unknown property \"fetch.wait.max.ms\""
        );
    }

    #[test]
    fn unknown_and_rejected_properties_are_errors() {
        assert_eq!(
            error("bootstrap.servers=a:1\nbootstrap.server=a:1"),
            "client.properties:2: unknown property \"bootstrap.server\""
        );
        assert!(error("isolation.level=read_committed").contains("--isolation"));
        assert!(error("sasl.login.callback.handler.class=x.Y").contains("Java classes"));
        assert!(
            error("client.dns.lookup=resolve_canonical_bootstrap_servers_only")
                .contains("tries every address")
        );
        assert!(error("client.dns.lookup=bogus").contains("expected use_all_dns_ips"));
    }

    #[test]
    fn a_properties_error_becomes_a_config_error_with_its_line() {
        let mut props = Properties::new();
        let error: crate::Error = props
            .add_text("security.protocol=SSL\nbogus.key=1\n", "client.properties")
            .unwrap_err()
            .into();
        assert!(
            matches!(error.kind(), crate::ErrorKind::Config { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "invalid connection settings: client.properties:2: unknown property \"bogus.key\""
        );
        assert!(!error.is_retriable());
    }

    #[test]
    fn a_java_consumer_properties_file_works_as_it_is() {
        let text = "bootstrap.servers=b:9092\n\
            group.id=my-app\n\
            client.id=reports\n\
            auto.offset.reset=earliest\n\
            enable.auto.commit=false\n\
            key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
            value.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
            max.poll.records=500\n\
            session.timeout.ms=45000\n\
            heartbeat.interval.ms=3000\n\
            fetch.min.bytes=1\n\
            max.partition.fetch.bytes=1048576\n\
            partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor\n\
            security.protocol=SSL\n\
            ssl.truststore.location=/etc/kafka/ca.pem\n\
            ssl.truststore.type=PEM\n\
            ssl.enabled.protocols=TLSv1.2,TLSv1.3\n\
            ssl.protocol=TLSv1.3\n\
            ssl.endpoint.identification.algorithm=https\n";
        let mut props = Properties::new();
        props.add_text(text, "consumer.properties").unwrap();
        let mut config = ClientConfig::default();
        props.apply_with_env(&mut config, &env).unwrap();
        assert_eq!(config.bootstrap, ["b:9092"]);
        assert_eq!(
            config.connection.security.tls.versions,
            TlsVersions::default()
        );
        let ignored = props.ignored();
        let keys: Vec<&str> = ignored.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "group.id",
                "auto.offset.reset",
                "enable.auto.commit",
                "key.deserializer",
                "value.deserializer",
                "max.poll.records",
                "session.timeout.ms",
                "heartbeat.interval.ms",
                "fetch.min.bytes",
                "max.partition.fetch.bytes",
                "partition.assignment.strategy",
            ]
        );
        // Only the group says why, every time: it never becomes a commit's group.
        assert_eq!(ignored[0].origin, "consumer.properties:2");
        assert!(ignored[0].notice.unwrap().contains("--group"));
        assert!(ignored[1..].iter().all(|i| i.notice.is_none()));
    }

    #[test]
    fn tls_versions_are_honoured_or_refused_with_the_reason() {
        let versions = |lines: &str| {
            load(&format!("security.protocol=SSL\n{lines}"))
                .map(|c| c.connection.security.tls.versions)
                .map_err(|e| e.to_string())
        };
        let v = |tls12, tls13| Ok(TlsVersions { tls12, tls13 });
        assert_eq!(versions(""), v(true, true));
        assert_eq!(versions("ssl.enabled.protocols=TLSv1.3"), v(false, true));
        assert_eq!(versions("ssl.enabled.protocols=tlsv1.2"), v(true, false));
        // Older versions beside a supported one are not offered: never weaker.
        assert_eq!(
            versions("ssl.enabled.protocols=TLSv1.1,TLSv1.2"),
            v(true, false)
        );
        assert_eq!(versions("ssl.protocol=TLSv1.2"), v(true, false));
        assert_eq!(versions("ssl.protocol=TLS"), v(true, true));
        let err = versions("ssl.enabled.protocols=TLSv1.1").unwrap_err();
        assert!(err.contains("TLSv1.2 and TLSv1.3 only"), "{err}");
        let err = versions("ssl.protocol=TLSv1.1").unwrap_err();
        assert!(err.contains("TLSv1.2 and TLSv1.3 only"), "{err}");
        let err = versions("ssl.enabled.protocols=TLSv1.3\nssl.protocol=TLSv1.2").unwrap_err();
        assert!(err.contains("no version is left"), "{err}");
        let err = versions("ssl.enabled.protocols=TLSv9").unwrap_err();
        assert!(
            err.contains("expected a list of TLSv1.2 and TLSv1.3"),
            "{err}"
        );
    }

    #[test]
    fn environment_variables() {
        assert_eq!(
            error("sasl.password=${env:NOT_SET_ANYWHERE}\n"),
            "client.properties:1: sasl.password: the environment variable NOT_SET_ANYWHERE is not set"
        );
        // Kafka's own provider declaration is accepted, under any name.
        let config = load(
            "config.providers=myenv\n\
             config.providers.myenv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
             security.protocol=SASL_PLAINTEXT\n\
             sasl.mechanism=PLAIN\n\
             sasl.username=${myenv:KAFKA_USER}\n\
             sasl.password=pre-${env::KAFKA_PASSWORD}-post\n",
        )
        .unwrap();
        assert_eq!(
            config.connection.security.sasl,
            Some(SaslConfig::Plain {
                username: "env-user".into(),
                password: Secret::new("pre-from-env-s3cret-post"),
            })
        );
        assert!(error(
            "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider"
        )
        .contains("FileConfigProvider\" is not supported"));
        assert!(error("client.id=${vault:secret}").contains("config provider \"vault\""));
        // Not variables: left as they are.
        let config = load("client.id=${notavariable} and ${unclosed:x").unwrap();
        assert_eq!(
            config.connection.client_id,
            "${notavariable} and ${unclosed:x"
        );
    }

    #[test]
    fn validation_errors() {
        for (text, expected) in [
            (
                "security.protocol=SASL_SSL",
                "security.protocol SASL_SSL needs sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER); Kafka's default, GSSAPI, is not supported",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN",
                "sasl.mechanism PLAIN needs credentials: sasl.jaas.config (with PlainLoginModule) or sasl.username and sasl.password",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI",
                "client.properties:2: sasl.mechanism: GSSAPI (Kerberos) is not supported; kseek speaks PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=MD5",
                "client.properties:2: sasl.mechanism: invalid value \"MD5\"; expected PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
            ),
            (
                "sasl.mechanism=PLAIN",
                "sasl.mechanism (client.properties:1) is set, but security.protocol is PLAINTEXT, without SASL; set security.protocol=SASL_SSL (or SASL_PLAINTEXT), or remove it",
            ),
            (
                "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=u\nsasl.password=p\nssl.ca.location=/ca.pem",
                "ssl.ca.location (client.properties:5) is set, but security.protocol is SASL_PLAINTEXT, without TLS; set security.protocol=SSL (or SASL_SSL), or remove it",
            ),
            (
                "security.protocol=SSL\nssl.key.location=/k.pem",
                "ssl.key.location (client.properties:2) gives a client key but no certificate; set ssl.certificate.location",
            ),
            (
                "security.protocol=SSL\nssl.certificate.location=/c.pem",
                "ssl.certificate.location (client.properties:2) gives a client certificate but no key; set ssl.key.location",
            ),
            (
                "security.protocol=SSL\nssl.ca.location=/a.pem\nssl.truststore.location=/b.pem",
                "ssl.truststore.location (client.properties:3) and ssl.ca.location (client.properties:2) both set the CA certificates; keep one",
            ),
            (
                "security.protocol=SSL\nssl.truststore.location=/t.jks\nssl.truststore.type=JKS",
                "client.properties:2: ssl.truststore.location: /t.jks is a JKS truststore, which kseek doesn't read; convert it with `keytool -list -rfc -keystore /t.jks > ca.pem`, then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM (or remove both to trust the system's CA certificates)",
            ),
            (
                // The password line first, as Java users write it: the error is about the store.
                "security.protocol=SSL\nssl.truststore.password=changeit\nssl.truststore.location=/t.p12",
                "client.properties:3: ssl.truststore.location: /t.p12 is a PKCS12 truststore, which kseek doesn't read; convert it with `openssl pkcs12 -in /t.p12 -nokeys -out ca.pem`, then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM (or remove both to trust the system's CA certificates)",
            ),
            (
                "security.protocol=SSL\nssl.keystore.password=changeit\nssl.keystore.location=/k.p12\nssl.keystore.type=PKCS12",
                "client.properties:3: ssl.keystore.location: /k.p12 is a PKCS12 keystore, which kseek doesn't read; convert it with `openssl pkcs12 -in /k.p12 -nodes -out client.pem`, then set ssl.keystore.location=client.pem and ssl.keystore.type=PEM",
            ),
            (
                "security.protocol=SSL\nssl.keystore.location=/k.jks",
                "client.properties:2: ssl.keystore.location: /k.jks is a JKS keystore, which kseek doesn't read; convert it with `keytool -importkeystore -srckeystore /k.jks -destkeystore client.p12 -deststoretype PKCS12` and `openssl pkcs12 -in client.p12 -nodes -out client.pem`, then set ssl.keystore.location=client.pem and ssl.keystore.type=PEM",
            ),
            (
                "security.protocol=SSL\nssl.truststore.location=/etc/truststore",
                "client.properties:2: ssl.truststore.location: /etc/truststore has no ssl.truststore.type, and Java's default, JKS, is not read; if the file is PEM, set ssl.truststore.type=PEM, else convert it with `keytool -list -rfc -keystore /etc/truststore > ca.pem`, then set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM (or remove both to trust the system's CA certificates)",
            ),
            (
                "security.protocol=SSL\nenable.ssl.certificate.verification=false",
                "client.properties:2: enable.ssl.certificate.verification: kseek always verifies the broker's certificate; to trust a private CA, give it with ssl.ca.location",
            ),
            (
                "security.protocol=SSL\nssl.endpoint.identification.algorithm=http",
                "client.properties:2: ssl.endpoint.identification.algorithm: invalid value \"http\"; expected https, or empty (or none) to turn hostname verification off",
            ),
            (
                "security.protocol=SSL\nssl.key.password=x",
                "ssl.key.password (client.properties:2) is set, but no client key is",
            ),
            (
                "security.protocol=TLS",
                "client.properties:1: security.protocol: invalid value \"TLS\"; expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username=u",
                "sasl.username (client.properties:3) is set but sasl.password is not",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.password=p",
                "sasl.password (client.properties:3) is set but sasl.username is not",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username= \nsasl.password=p",
                "client.properties:3: sasl.username: invalid value \"\"; expected a user name",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username=u\nsasl.password=",
                "client.properties:4: sasl.password: invalid value; expected a password",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER",
                "sasl.mechanism OAUTHBEARER needs sasl.oauthbearer.token or sasl.oauthbearer.token.command",
            ),
            (
                "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.oauthbearer.token=t",
                "sasl.oauthbearer.token (client.properties:3) is for OAUTHBEARER, but sasl.mechanism is PLAIN",
            ),
            (
                "bootstrap.servers= , ",
                "client.properties:1: bootstrap.servers: invalid value \", \"; expected a comma-separated list of host:port",
            ),
        ] {
            assert_eq!(error(text), expected, "{text}");
        }
    }

    #[test]
    fn oauthbearer_settings() {
        let config = load(
            "security.protocol=SASL_SSL\n\
             sasl.mechanism=OAUTHBEARER\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;\n\
             sasl.oauthbearer.token.command=vault read -field=token secret/kafka\n",
        )
        .unwrap();
        assert_eq!(
            config.connection.security.sasl,
            Some(SaslConfig::OAuthBearer {
                token: TokenSource::Command("vault read -field=token secret/kafka".into())
            })
        );
        let config = load(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token=${env:KAFKA_PASSWORD}\n",
        )
        .unwrap();
        assert_eq!(
            config.connection.security.sasl,
            Some(SaslConfig::OAuthBearer {
                token: TokenSource::Static(Secret::new("from-env-s3cret"))
            })
        );
        let err = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token=t\nsasl.oauthbearer.token.command=c",
        );
        assert!(err.contains("both set the token"), "{err}");
        let err = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token=t\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"x\" clientSecret=\"hidden\";",
        );
        assert!(
            err.contains("option \"clientId\" is not supported"),
            "{err}"
        );
        assert!(!err.contains("hidden"), "{err}");
    }

    fn jaas(text: &str) -> Result<Jaas> {
        parse_jaas(&Value {
            key: "sasl.jaas.config".into(),
            origin: "t:1".into(),
            text: text.into(),
        })
    }

    fn credentials(text: &str) -> (String, String) {
        match jaas(text) {
            Ok(Jaas::Credentials { username, password }) => {
                (username, password.expose().to_owned())
            }
            Ok(Jaas::OAuthBearer) => panic!("{text}: OAuthBearer"),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    #[test]
    fn jaas_grammar() {
        let plain = "org.apache.kafka.common.security.plain.PlainLoginModule";
        assert_eq!(
            credentials(&format!(
                r#"{plain} required username="alice" password="a \"quoted\" \\ pass;word";"#
            )),
            ("alice".into(), r#"a "quoted" \ pass;word"#.into())
        );
        assert_eq!(
            credentials(&format!(
                "{plain}  REQUIRED\n  username=bare_user\tpassword = 'single=quoted' ; "
            )),
            ("bare_user".into(), "single=quoted".into())
        );
        assert_eq!(
            credentials(&format!(
                "/* c */ {plain} required // note\n username=\"u\" password=\"p\";"
            )),
            ("u".into(), "p".into())
        );
        // Kafka's relocated (shaded) classes name the same module.
        assert_eq!(
            credentials(
                "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";"
            ),
            ("u".into(), "p".into())
        );
        for (text, expected) in [
            (format!(r#"{plain} required username="u" password="secretpw""#), "missing the closing ';'"),
            (format!(r#"{plain} required username "u";"#), "expected = after option \"username\""),
            (format!(r#"{plain} always username="u" password="secretpw";"#), "control flag"),
            (format!(r#"{plain} required username="u" password="secretpw;"#), "a quoted value is not closed"),
            (format!(r#"{plain} required username="u" password=;"#), "expected a value after password="),
            (format!(r#"{plain} required username="u" password="secretpw"; {plain} required;"#), "more than one login module"),
            (format!(r#"{plain} required username="u";"#), "PlainLoginModule has no password"),
            (format!(r#"{plain} required password="secretpw";"#), "PlainLoginModule has no username"),
            (format!(r#"{plain} required username="u" password="secretpw" user_bob="secretpw";"#), "option \"user_bob\" is not supported"),
            ("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"secretpw\" tokenauth=true;".into(), "delegation tokens"),
            ("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;".into(), "Kerberos"),
            ("software.amazon.msk.auth.iam.IAMLoginModule required;".into(), "IAM"),
            ("com.example.Custom required;".into(), "login module \"com.example.Custom\" is not supported"),
            ("".into(), "expected a login module class first"),
            (format!("/* {plain}"), "not closed"),
        ] {
            let err = match jaas(&text) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{text}: accepted"),
            };
            assert!(err.contains(expected), "{text}: {err}");
            assert!(!err.contains("secretpw"), "{err}");
            assert!(err.starts_with("t:1: sasl.jaas.config: "), "{err}");
        }
    }

    #[test]
    fn jaas_and_librdkafka_credentials_conflict() {
        let err = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username=u\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";",
        );
        assert!(err.contains("both set the user"), "{err}");
        // A SCRAM mechanism with PlainLoginModule works, as in Kafka's Java client (both
        // modules only carry the user name and password).
        let config = load(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";",
        )
        .unwrap();
        assert!(matches!(
            config.connection.security.sasl,
            Some(SaslConfig::Scram {
                mechanism: ScramMechanism::Sha256,
                ..
            })
        ));
    }

    #[test]
    fn inline_pem() {
        let config = load(
            "security.protocol=SSL\n\
             ssl.truststore.type=PEM\n\
             ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\n\\\n  MIIB\\n\\\n  -----END CERTIFICATE-----\n\
             ssl.keystore.type=PEM\n\
             ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----\\nMIIC\\n-----END CERTIFICATE-----\n\
             ssl.keystore.key=-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\n\
             ssl.endpoint.identification.algorithm=\n",
        )
        .unwrap();
        let tls = &config.connection.security.tls;
        assert_eq!(
            tls.trust,
            TrustAnchors::Pem(
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----".into()
            )
        );
        assert_eq!(
            tls.client_key,
            Some(PemSource::Inline(Secret::new(
                "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"
            )))
        );
        assert!(matches!(tls.client_cert, Some(PemSource::Inline(_))));
        assert!(!tls.verify_hostname);
        let err =
            error("security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.certificates=x");
        assert!(err.contains("JKS truststores are not read"), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}", jaas_text in "[a-zA-Z.=;'\"\\\\/* \n]{0,80}") {
            let mut props = Properties::new();
            let _ = props.add_text(&text, "f");
            let _ = props.add_assignment(&text);
            let mut config = ClientConfig::default();
            let _ = props.apply_with_env(&mut config, &env);
            let _ = jaas(&jaas_text);
            let _ = jaas(&format!("org.apache.kafka.common.security.plain.PlainLoginModule required {jaas_text}"));
            let entry = Entry { key: "client.id".into(), value: text.clone(), origin: "f".into() };
            let _ = substitute(&entry, &["env".to_owned()], &env);
        }
    }

    const KEYS: &[&str] = &[
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.username",
        "sasl.password",
        "sasl.oauthbearer.token",
        "sasl.oauthbearer.token.command",
        "ssl.truststore.location",
        "ssl.truststore.type",
        "ssl.ca.location",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "request.timeout.ms",
        "client.dns.lookup",
    ];

    proptest::proptest! {
        #[test]
        fn known_keys_with_arbitrary_values_never_panic(
            entries in proptest::collection::vec(
                (proptest::sample::select(KEYS), "\\PC{0,30}|SASL_SSL|SSL|PLAIN|SCRAM-SHA-512|OAUTHBEARER|PEM|/a.pem"),
                0..12,
            )
        ) {
            let mut props = Properties::new();
            for (key, value) in &entries {
                props.set(key, value, "p").unwrap();
            }
            let mut config = ClientConfig::default();
            let shown = match props.apply_with_env(&mut config, &env) {
                Err(e) => e.to_string(),
                Ok(()) => format!("{config:?}"),
            };
            proptest::prop_assert!(!shown.is_empty());
            for (key, value) in &entries {
                let secret = ["sasl.password", "ssl.key.password", "sasl.oauthbearer.token", "ssl.keystore.key"];
                let fixed = ["SASL_SSL", "SCRAM-SHA-512", "OAUTHBEARER"];
                if secret.contains(key)
                    && value.trim().chars().count() >= 8
                    && !fixed.contains(&value.as_str())
                {
                    proptest::prop_assert!(!shown.contains(value.trim()), "{key}: {shown}");
                }
            }
        }
    }

    #[test]
    fn secrets_stay_out_of_debug_and_errors() {
        let mut props = Properties::new();
        props
            .add_text(
                "sasl.password=hunter2\nsasl.jaas.config=x required password=\"hunter2\";\nssl.key.pem=hunter2\nclient.id=visible\n",
                "f",
            )
            .unwrap();
        let shown = format!("{props:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("visible"), "{shown}");
        // A secret value that doesn't parse is not echoed.
        let err = error(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\"",
        );
        assert!(!err.contains("hunter2"), "{err}");
        let err =
            error("security.protocol=SSL\nssl.keystore.key=   \nssl.keystore.certificate.chain=c");
        assert!(
            err.starts_with("client.properties:2: ssl.keystore.key: invalid value;"),
            "{err}"
        );
    }
}

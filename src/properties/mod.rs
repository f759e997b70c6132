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

mod jaas;
mod names;
mod settings;
mod syntax;
mod value;

use crate::client::ClientConfig;

use names::{is_secret, lookup, Known, Setting, ENV_PROVIDER_CLASS};
use settings::Settings;
use syntax::parse_properties;
use value::Value;

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

    /// The properties whose key starts with `prefix`, with the prefix taken off, as Java's
    /// `originalsWithPrefix` gives a component its settings: `schema.registry.ssl.ca.location`
    /// under `schema.registry.` is `ssl.ca.location`. The environment providers declared
    /// (`config.providers...`) come along, so `${env:NAME}` still works in the values.
    ///
    /// ```
    /// let mut props = kseek::properties::Properties::new();
    /// props.add_assignment("schema.registry.ssl.ca.location=/etc/ca.pem")?;
    /// let registry = props.with_prefix("schema.registry.");
    /// assert_eq!(registry.value("ssl.ca.location")?.as_deref(), Some("/etc/ca.pem"));
    /// # Ok::<(), kseek::properties::Error>(())
    /// ```
    pub fn with_prefix(&self, prefix: &str) -> Properties {
        let entries = self
            .entries
            .iter()
            .filter_map(|e| {
                let key = if e.key.starts_with("config.providers") {
                    e.key.as_str()
                } else {
                    e.key.strip_prefix(prefix)?
                };
                Some(Entry {
                    key: key.to_owned(),
                    value: e.value.clone(),
                    origin: e.origin.clone(),
                })
            })
            .collect();
        Properties { entries }
    }

    /// The value last set for `key`, `${env:NAME}` taken from the process environment; `None`
    /// when `key` is not set. For settings kseek's [`ClientConfig`] has no field for (a
    /// Schema Registry's URL and credentials).
    ///
    /// # Errors
    /// A missing environment variable, or an unsupported config provider.
    pub fn value(&self, key: &str) -> Result<Option<String>> {
        self.value_with_env(key, &|name| std::env::var(name).ok())
    }

    /// [`Properties::value`], with `env` looking up the variables of `${env:NAME}`.
    ///
    /// # Errors
    /// As [`Properties::value`].
    pub fn value_with_env(
        &self,
        key: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>> {
        let Some(entry) = self.entries.iter().rev().find(|e| e.key == key) else {
            return Ok(None);
        };
        let providers = self.env_providers()?;
        substitute(entry, &providers, env).map(Some)
    }

    /// Where `key` was last set (`file:line` or `-X`), for messages.
    pub fn origin(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.key == key)
            .map(|e| e.origin.as_str())
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

#[cfg(test)]
mod tests;

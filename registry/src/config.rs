//! A registry client's settings, from the names Confluent's clients and kcat use.

use std::time::Duration;

use kseek::properties::Properties;
use kseek::security::{Secret, TlsConfig};
use kseek::ClientConfig;
use reqwest::Url;

/// How requests authenticate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Auth {
    /// No credentials (or those in the URL, `https://user:password@host`).
    #[default]
    None,
    /// HTTP basic auth.
    Basic {
        /// The user.
        user: String,
        /// The password.
        password: Secret,
    },
    /// A bearer token.
    Bearer(Secret),
}

/// A registry client's settings. Its `Debug` shows no secret: URLs without their credentials.
#[derive(Clone)]
#[non_exhaustive]
pub struct RegistryConfig {
    /// The registry's URLs (`http://` or `https://`), tried in turn.
    pub urls: Vec<Url>,
    /// Credentials.
    pub auth: Auth,
    /// TLS for `https://` URLs: kseek's settings, from `schema.registry.ssl.*`.
    pub tls: TlsConfig,
    /// How long one request may take.
    pub request_timeout: Duration,
    /// How long a registry that fails (unreachable, 5xx, 429) is retried.
    pub retry_deadline: Duration,
}

impl std::fmt::Debug for RegistryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryConfig")
            .field("urls", &self.urls.iter().map(shown).collect::<Vec<_>>())
            .field("auth", &self.auth)
            .field("tls", &self.tls)
            .field("request_timeout", &self.request_timeout)
            .field("retry_deadline", &self.retry_deadline)
            .finish()
    }
}

/// Settings that can't be used. Names the property and where it was set; never a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl RegistryConfig {
    /// Settings for the registry at `urls` (a comma-separated list), defaults otherwise.
    ///
    /// # Errors
    /// A URL that doesn't parse or isn't `http` or `https`.
    pub fn new(urls: &str) -> Result<RegistryConfig, ConfigError> {
        Ok(RegistryConfig {
            urls: parse_urls(urls, "the registry URL")?,
            auth: Auth::None,
            tls: TlsConfig::default(),
            request_timeout: Duration::from_secs(30),
            retry_deadline: Duration::from_secs(60),
        })
    }

    /// Settings from Kafka client properties in Confluent's names, as a consumer's
    /// `client.properties` holds them:
    ///
    /// - `schema.registry.url`: the registry's URLs, comma-separated (`url` overrides it:
    ///   kcat's `-r URL`);
    /// - `basic.auth.credentials.source`: `USER_INFO` (the default when a user info is set)
    ///   or `URL` (credentials in the URL); `basic.auth.user.info` or
    ///   `schema.registry.basic.auth.user.info`: `user:password`;
    /// - `bearer.auth.credentials.source=STATIC_TOKEN` and `bearer.auth.token`;
    /// - `schema.registry.ssl.*`: the `ssl.*` settings of kseek's Kafka connections
    ///   (`ssl.ca.location`, `ssl.truststore.location` in PEM, `ssl.certificate.location`,
    ///   `ssl.key.location`, `ssl.endpoint.identification.algorithm`, ...).
    ///
    /// `${env:NAME}` works in every value. `kafka` gives the timeouts (its request timeout
    /// and retry deadline).
    ///
    /// # Errors
    /// No URL, a URL that doesn't parse, a credentials source kseek doesn't support, a user
    /// info without `:`, TLS settings that don't parse.
    pub fn from_properties(
        properties: &Properties,
        url: Option<&str>,
        kafka: &ClientConfig,
    ) -> Result<RegistryConfig, ConfigError> {
        let value = |key: &str| {
            properties
                .value(key)
                .map_err(|e| ConfigError(e.to_string()))
        };
        let urls = match url {
            Some(url) => parse_urls(url, "-r")?,
            None => match value("schema.registry.url")? {
                Some(urls) => parse_urls(&urls, "schema.registry.url")?,
                None => {
                    return Err(ConfigError(
                        "no Schema Registry URL: give -r URL or set schema.registry.url".into(),
                    ))
                }
            },
        };
        let user_info = match value("basic.auth.user.info")? {
            Some(v) => Some(v),
            None => value("schema.registry.basic.auth.user.info")?,
        };
        let source = value("basic.auth.credentials.source")?.map(|s| s.trim().to_ascii_uppercase());
        let mut auth = match (source.as_deref(), user_info) {
            (Some("URL"), _) | (None, None) => Auth::None,
            (Some("USER_INFO") | None, Some(info)) => {
                let (user, password) = info.split_once(':').ok_or_else(|| {
                    ConfigError(format!(
                        "{}: basic.auth.user.info must be user:password",
                        properties.origin("basic.auth.user.info").unwrap_or("-X")
                    ))
                })?;
                Auth::Basic {
                    user: user.to_owned(),
                    password: Secret::new(password),
                }
            }
            (Some("USER_INFO"), None) => {
                return Err(ConfigError(
                    "basic.auth.credentials.source=USER_INFO needs basic.auth.user.info=user:password".into(),
                ))
            }
            (Some(other), _) => {
                return Err(ConfigError(format!(
                    "basic.auth.credentials.source={other} is not supported; use USER_INFO (with basic.auth.user.info) or URL"
                )))
            }
        };
        if let Some(source) = value("bearer.auth.credentials.source")? {
            if !source.trim().eq_ignore_ascii_case("STATIC_TOKEN") {
                return Err(ConfigError(format!(
                    "bearer.auth.credentials.source={source} is not supported; use STATIC_TOKEN with bearer.auth.token"
                )));
            }
        }
        if let Some(token) = value("bearer.auth.token")? {
            if auth != Auth::None {
                return Err(ConfigError(
                    "both basic.auth.user.info and bearer.auth.token are set; keep one".into(),
                ));
            }
            auth = Auth::Bearer(Secret::new(token));
        }
        let tls = tls_settings(properties)?;
        Ok(RegistryConfig {
            urls,
            auth,
            tls,
            request_timeout: kafka.connection.request_timeout,
            retry_deadline: kafka.retry_deadline,
        })
    }
}

/// The `schema.registry.ssl.*` settings, read by kseek's own parser of `ssl.*`.
fn tls_settings(properties: &Properties) -> Result<TlsConfig, ConfigError> {
    let mut ssl = properties.with_prefix("schema.registry.");
    ssl.set("security.protocol", "SSL", "(schema.registry.ssl.*)")
        .map_err(|e| ConfigError(e.to_string()))?;
    let mut config = ClientConfig::default();
    ssl.apply(&mut config)
        .map_err(|e| ConfigError(format!("{e} (a schema.registry. setting)")))?;
    Ok(config.connection.security.tls.clone())
}

fn parse_urls(text: &str, what: &str) -> Result<Vec<Url>, ConfigError> {
    let urls = text
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(|u| {
            let url = Url::parse(u).map_err(|e| {
                ConfigError(format!(
                    "{what}: {u:?} is not a URL ({e}); give http://HOST:PORT or https://HOST:PORT"
                ))
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ConfigError(format!(
                    "{what}: {u:?} is not http:// or https://"
                )));
            }
            Ok(url)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if urls.is_empty() {
        return Err(ConfigError(format!("{what} names no URL")));
    }
    Ok(urls)
}

/// `url` without credentials, for messages.
pub(crate) fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(lines: &str) -> Properties {
        let mut p = Properties::new();
        p.add_text(lines, "client.properties").unwrap();
        p
    }

    #[test]
    fn confluent_names() {
        let p = props(
            "schema.registry.url=https://a:8081,https://b:8081\n\
             basic.auth.credentials.source=USER_INFO\n\
             basic.auth.user.info=alice:s3cr:et\n\
             schema.registry.ssl.ca.location=/etc/ca.pem\n",
        );
        let c = RegistryConfig::from_properties(&p, None, &ClientConfig::default()).unwrap();
        assert_eq!(c.urls.len(), 2);
        assert_eq!(
            c.auth,
            Auth::Basic {
                user: "alice".into(),
                password: Secret::new("s3cr:et")
            }
        );
        assert_eq!(
            c.tls.trust,
            kseek::security::TrustAnchors::PemFile("/etc/ca.pem".into())
        );
        assert!(!format!("{c:?}").contains("s3cr"), "{c:?}");
        // Credentials in a URL are not shown either.
        let c = RegistryConfig::new("http://bob:hunter2@r:8081").unwrap();
        assert!(!format!("{c:?}").contains("hunter2"), "{c:?}");
        let r = crate::Registry::new(&c).unwrap();
        assert!(!format!("{r:?}").contains("hunter2"), "{r:?}");
        // kcat's -r overrides the file's URL.
        let c = RegistryConfig::from_properties(&p, Some("http://c:1"), &ClientConfig::default())
            .unwrap();
        assert_eq!(c.urls[0].as_str(), "http://c:1/");
    }

    #[test]
    fn refusals() {
        let none = RegistryConfig::from_properties(&props(""), None, &ClientConfig::default());
        assert!(none.unwrap_err().to_string().contains("-r URL"));
        let bad = RegistryConfig::from_properties(
            &props("schema.registry.url=ftp://x\n"),
            None,
            &ClientConfig::default(),
        );
        assert!(bad.unwrap_err().to_string().contains("not http"));
        let no_colon = RegistryConfig::from_properties(
            &props("schema.registry.url=http://x\nbasic.auth.user.info=alice\n"),
            None,
            &ClientConfig::default(),
        );
        let e = no_colon.unwrap_err().to_string();
        assert!(
            e.contains("client.properties:2") && e.contains("user:password"),
            "{e}"
        );
        let bearer = RegistryConfig::from_properties(
            &props("schema.registry.url=http://x\nbearer.auth.credentials.source=STATIC_TOKEN\nbearer.auth.token=tok\n"),
            None,
            &ClientConfig::default(),
        )
        .unwrap();
        assert_eq!(bearer.auth, Auth::Bearer(Secret::new("tok")));
    }
}

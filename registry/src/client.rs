//! The Schema Registry client: schemas by id (cached), by subject and version, and the
//! latest of a subject, with their references resolved; Confluent's REST API over HTTP or
//! HTTPS (kseek's rustls stack), with basic auth or a bearer token, retried until a deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde::Deserialize;

use crate::config::{shown, Auth, RegistryConfig};

/// The kind of a registered schema (the registry's `schemaType`; absent means Avro).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaKind {
    /// Apache Avro.
    Avro,
    /// Protocol Buffers.
    Protobuf,
    /// JSON Schema.
    Json,
}

impl SchemaKind {
    /// The registry's name: `AVRO`, `PROTOBUF`, `JSON`.
    pub fn name(self) -> &'static str {
        match self {
            SchemaKind::Avro => "AVRO",
            SchemaKind::Protobuf => "PROTOBUF",
            SchemaKind::Json => "JSON",
        }
    }
}

/// A schema's reference to another schema (an Avro named type defined elsewhere, a
/// Protobuf import).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Reference {
    /// The name the schema uses for it: an Avro full name, a `.proto` import path.
    pub name: String,
    /// The subject it is registered under.
    pub subject: String,
    /// Its version in that subject.
    pub version: i32,
}

/// A schema as the registry returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegisteredSchema {
    /// Its id, when known.
    pub id: Option<u32>,
    /// Its subject and version, when it was asked for by them.
    pub subject: Option<(String, i32)>,
    /// Avro, Protobuf or JSON Schema.
    pub kind: SchemaKind,
    /// The schema's text.
    pub text: String,
    /// The schemas it refers to.
    pub references: Vec<Reference>,
}

impl RegisteredSchema {
    /// An Avro schema's text, nothing else known about it (for tests and tools).
    pub fn avro(text: &str) -> RegisteredSchema {
        RegisteredSchema::of_kind(SchemaKind::Avro, text)
    }

    /// A Protobuf schema's text (`.proto` source or a base64 descriptor), nothing else known.
    pub fn protobuf(text: &str) -> RegisteredSchema {
        RegisteredSchema::of_kind(SchemaKind::Protobuf, text)
    }

    fn of_kind(kind: SchemaKind, text: &str) -> RegisteredSchema {
        RegisteredSchema {
            id: None,
            subject: None,
            kind,
            text: text.to_owned(),
            references: Vec::new(),
        }
    }
}

impl ResolvedSchema {
    /// A schema that refers to no other.
    pub fn new(schema: RegisteredSchema) -> ResolvedSchema {
        ResolvedSchema::with_dependencies(schema, Vec::new())
    }

    /// A schema and the schemas it refers to, each with the name it is referred to by.
    pub fn with_dependencies(
        schema: RegisteredSchema,
        dependencies: Vec<(String, RegisteredSchema)>,
    ) -> ResolvedSchema {
        ResolvedSchema {
            schema,
            dependencies,
        }
    }
}

/// A schema with everything it refers to, fetched recursively.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedSchema {
    /// The schema.
    pub schema: RegisteredSchema,
    /// The schemas it refers to, directly or not, each once, every one after those it
    /// refers to itself, with the name the referring schema used.
    pub dependencies: Vec<(String, RegisteredSchema)>,
}

/// A version of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The latest.
    Latest,
    /// This version number.
    Number(i32),
}

/// A Schema Registry request that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry answered with an error status: 401 and 403 (credentials), 404 (no such
    /// schema or subject), or a 5xx that lasted past the retry deadline.
    #[error("Schema Registry {url} answered {status}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Status {
        /// The URL asked (no credentials in it).
        url: String,
        /// The HTTP status.
        status: u16,
        /// The registry's `error_code` and `message`, when it gave them.
        message: Option<String>,
    },
    /// No registry could be reached (connection refused, TLS failure, timeout) until the
    /// retry deadline.
    #[error("Schema Registry {url} could not be reached: {message}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// The last failure.
        message: String,
    },
    /// The registry's answer isn't what Confluent's API documents, or a schema's references
    /// go round in a circle.
    #[error("Schema Registry {url}: {message}")]
    Invalid {
        /// The URL asked.
        url: String,
        /// What is wrong.
        message: String,
    },
}

/// The most references followed from one schema (a guard against a registry that answers
/// with an endless chain).
const MAX_DEPENDENCIES: usize = 1_000;
/// The largest answer read from a registry.
const MAX_BODY: usize = 16 << 20;

/// A Schema Registry client. Cheap to clone; clones share the connection pool and the cache.
#[derive(Debug, Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    urls: Vec<Url>,
    auth: Auth,
    retry_deadline: Duration,
    by_id: Mutex<HashMap<u32, Arc<ResolvedSchema>>>,
}

impl std::fmt::Debug for Inner {
    // URLs without the credentials they may carry; the auth's secrets are `Secret`s.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("urls", &self.urls.iter().map(shown).collect::<Vec<_>>())
            .field("auth", &self.auth)
            .field("retry_deadline", &self.retry_deadline)
            .finish_non_exhaustive()
    }
}

/// A schema as the REST API returns it (`GET /schemas/ids/{id}`,
/// `GET /subjects/{subject}/versions/{version}`).
#[derive(Deserialize)]
struct Answer {
    schema: String,
    #[serde(rename = "schemaType")]
    schema_type: Option<String>,
    #[serde(default)]
    references: Vec<Reference>,
    id: Option<u32>,
    subject: Option<String>,
    version: Option<i32>,
}

/// The registry's error body.
#[derive(Deserialize)]
struct ErrorAnswer {
    error_code: Option<i64>,
    message: Option<String>,
}

impl Registry {
    /// A client for `config`. Nothing is sent until a schema is asked for.
    ///
    /// # Errors
    /// [`RegistryError::Invalid`] when the TLS settings can't be used.
    pub fn new(config: &RegistryConfig) -> Result<Registry, RegistryError> {
        let invalid = |message: String| RegistryError::Invalid {
            url: config.urls.first().map(Url::to_string).unwrap_or_default(),
            message,
        };
        let mut builder = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.request_timeout)
            .user_agent(concat!("kseek-registry/", env!("CARGO_PKG_VERSION")));
        // reqwest is built without a TLS provider of its own: it always gets kseek's (ring).
        let tls = if config.urls.iter().any(|u| u.scheme() == "https") {
            let tls = config
                .tls
                .rustls_client_config()
                .map_err(|e| invalid(e.to_string()))?;
            (*tls).clone()
        } else {
            // Only http:// URLs: a configuration that trusts nothing, never used.
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(e.to_string()))?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
        };
        builder = builder.tls_backend_preconfigured(tls);
        let http = builder
            .build()
            .map_err(|e| invalid(format!("cannot make an HTTP client: {e}")))?;
        Ok(Registry {
            inner: Arc::new(Inner {
                http,
                urls: config.urls.clone(),
                auth: config.auth.clone(),
                retry_deadline: config.retry_deadline,
                by_id: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The schema with `id` and everything it refers to; cached, so each id is asked once.
    ///
    /// # Errors
    /// Any [`RegistryError`].
    pub async fn schema_by_id(&self, id: u32) -> Result<Arc<ResolvedSchema>, RegistryError> {
        if let Some(hit) = self.cached(id) {
            return Ok(hit);
        }
        let answer = self.get(&["schemas", "ids", &id.to_string()]).await?;
        let mut schema = answer.into_schema(&self.inner.urls[0])?;
        schema.id = Some(id);
        let resolved = Arc::new(self.resolve(schema).await?);
        self.inner
            .by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, resolved.clone());
        Ok(resolved)
    }

    /// The schema of `subject` at `version`, and everything it refers to (not cached: the
    /// latest version changes).
    ///
    /// # Errors
    /// Any [`RegistryError`].
    pub async fn schema_by_version(
        &self,
        subject: &str,
        version: Version,
    ) -> Result<ResolvedSchema, RegistryError> {
        let schema = self.subject_version(subject, version).await?;
        self.resolve(schema).await
    }

    fn cached(&self, id: u32) -> Option<Arc<ResolvedSchema>> {
        let cache = self.inner.by_id.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(&id).cloned()
    }

    async fn subject_version(
        &self,
        subject: &str,
        version: Version,
    ) -> Result<RegisteredSchema, RegistryError> {
        let v = match version {
            Version::Latest => "latest".to_owned(),
            Version::Number(n) => n.to_string(),
        };
        let answer = self.get(&["subjects", subject, "versions", &v]).await?;
        let (id, number) = (answer.id, answer.version);
        let mut schema = answer.into_schema(&self.inner.urls[0])?;
        schema.id = id;
        schema.subject = Some((subject.to_owned(), number.unwrap_or(-1)));
        Ok(schema)
    }

    /// Fetches every schema `schema` refers to, depth first, each once.
    async fn resolve(&self, schema: RegisteredSchema) -> Result<ResolvedSchema, RegistryError> {
        let mut dependencies: Vec<(String, RegisteredSchema)> = Vec::new();
        // (reference, whether its own references are already in `dependencies`)
        let mut stack: Vec<(Reference, Option<RegisteredSchema>)> = schema
            .references
            .iter()
            .rev()
            .map(|r| (r.clone(), None))
            .collect();
        let mut visiting: Vec<(String, i32)> = Vec::new();
        while let Some((reference, fetched)) = stack.pop() {
            let key = (reference.subject.clone(), reference.version);
            match fetched {
                Some(done) => {
                    visiting.retain(|k| *k != key);
                    dependencies.push((reference.name, done));
                }
                None => {
                    if dependencies
                        .iter()
                        .any(|(_, d)| d.subject.as_ref() == Some(&key))
                    {
                        continue;
                    }
                    if visiting.contains(&key) {
                        return Err(RegistryError::Invalid {
                            url: self.inner.urls[0].to_string(),
                            message: format!(
                                "the references of schema {:?} go round in a circle through subject {:?} version {}",
                                schema.id, key.0, key.1
                            ),
                        });
                    }
                    if dependencies.len() + stack.len() > MAX_DEPENDENCIES {
                        return Err(RegistryError::Invalid {
                            url: self.inner.urls[0].to_string(),
                            message: format!("more than {MAX_DEPENDENCIES} schema references"),
                        });
                    }
                    let dep = self
                        .subject_version(&reference.subject, Version::Number(reference.version))
                        .await?;
                    visiting.push(key);
                    let children: Vec<Reference> = dep.references.clone();
                    stack.push((reference, Some(dep)));
                    stack.extend(children.into_iter().rev().map(|r| (r, None)));
                }
            }
        }
        Ok(ResolvedSchema {
            schema,
            dependencies,
        })
    }

    /// GET of the path `segments` (each percent-encoded), tried on each URL in turn and
    /// retried (connection failures, 408, 429, 5xx) until the retry deadline.
    async fn get(&self, segments: &[&str]) -> Result<Answer, RegistryError> {
        let deadline = tokio::time::Instant::now() + self.inner.retry_deadline;
        let mut backoff = Duration::from_millis(100);
        let mut attempt = 0usize;
        loop {
            let base = &self.inner.urls[attempt % self.inner.urls.len()];
            attempt += 1;
            let url = join(base, segments);
            let shown = shown(&url);
            let failure = match self.get_once(url).await {
                Ok(answer) => return Ok(answer),
                Err(Attempt::Final(e)) => return Err(e),
                Err(Attempt::Retry(e)) => e,
            };
            // Tried until the deadline: the last wait is cut short to end at it.
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(match failure {
                    Failure::Status(status, message) => RegistryError::Status {
                        url: shown,
                        status,
                        message,
                    },
                    Failure::Network(message) => RegistryError::Unreachable {
                        url: shown,
                        message,
                    },
                });
            }
            tokio::time::sleep(backoff.min(deadline - now)).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    async fn get_once(&self, mut url: Url) -> Result<Answer, Attempt> {
        let shown = shown(&url);
        let mut request = self.inner.http.get(url.clone()).header(
            "Accept",
            "application/vnd.schemaregistry.v1+json, application/json",
        );
        match &self.inner.auth {
            Auth::None if !url.username().is_empty() => {
                let user = percent_decoded(url.username());
                let password = url.password().map(percent_decoded);
                let _ = url.set_username("");
                let _ = url.set_password(None);
                request = self.inner.http.get(url).basic_auth(user, password);
            }
            Auth::None => {}
            Auth::Basic { user, password } => {
                request = request.basic_auth(user, Some(password.expose()));
            }
            Auth::Bearer(token) => request = request.bearer_auth(token.expose()),
        }
        let response = request
            .send()
            .await
            .map_err(|e| Attempt::Retry(Failure::Network(error_chain(&e))))?;
        let status = response.status();
        let body = read_body(response)
            .await
            .map_err(|e| Attempt::Retry(Failure::Network(e)))?;
        if status.is_success() {
            return serde_json::from_slice::<Answer>(&body).map_err(|e| {
                Attempt::Final(RegistryError::Invalid {
                    url: shown.clone(),
                    message: format!("the answer is not a schema: {e}"),
                })
            });
        }
        let message = serde_json::from_slice::<ErrorAnswer>(&body)
            .ok()
            .and_then(|e| match (e.error_code, e.message) {
                (Some(code), Some(m)) => Some(format!("{m} (error code {code})")),
                (None, Some(m)) => Some(m),
                (Some(code), None) => Some(format!("error code {code}")),
                (None, None) => None,
            });
        let retriable = status.is_server_error()
            || status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT;
        if retriable {
            Err(Attempt::Retry(Failure::Status(status.as_u16(), message)))
        } else {
            Err(Attempt::Final(RegistryError::Status {
                url: shown,
                status: status.as_u16(),
                message,
            }))
        }
    }
}

enum Attempt {
    Retry(Failure),
    Final(RegistryError),
}

enum Failure {
    Status(u16, Option<String>),
    Network(String),
}

impl Answer {
    /// The schema; `registry` names the registry in an error.
    fn into_schema(self, registry: &Url) -> Result<RegisteredSchema, RegistryError> {
        let kind = match self.schema_type.as_deref() {
            None | Some("AVRO") => SchemaKind::Avro,
            Some("PROTOBUF") => SchemaKind::Protobuf,
            Some("JSON") => SchemaKind::Json,
            Some(other) => {
                return Err(RegistryError::Invalid {
                    url: shown(registry),
                    message: format!(
                        "unknown schemaType {other:?} (kseek reads AVRO, PROTOBUF and JSON)"
                    ),
                })
            }
        };
        Ok(RegisteredSchema {
            id: self.id,
            subject: self.subject.zip(self.version),
            kind,
            text: self.schema,
            references: self.references,
        })
    }
}

/// `base` with `segments` appended to its path, each percent-encoded.
fn join(base: &Url, segments: &[&str]) -> Url {
    let mut url = base.clone();
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}

fn percent_decoded(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The body, at most [`MAX_BODY`] bytes.
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("an answer larger than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error and its causes on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_percent_encoded() {
        let base = Url::parse("http://r:8081/ccompat/").unwrap();
        let url = join(&base, &["subjects", "a/b c-value", "versions", "latest"]);
        assert_eq!(
            url.as_str(),
            "http://r:8081/ccompat/subjects/a%2Fb%20c-value/versions/latest"
        );
        let base = Url::parse("https://u:p%40ss@r").unwrap();
        assert_eq!(
            shown(&join(&base, &["schemas", "ids", "7"])),
            "https://r/schemas/ids/7"
        );
        assert_eq!(percent_decoded("p%40ss%2"), "p@ss%2");
    }
}

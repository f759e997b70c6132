//! The property names kseek knows: the Java client's and librdkafka's, each mapped to one
//! [`Setting`]; those accepted and ignored, and those refused with a reason; which ones hold
//! secrets.

pub(super) const ENV_PROVIDER_CLASS: &str =
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// The settings kseek maps, one per meaning (aliases share one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Setting {
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

pub(super) enum Known {
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

pub(super) fn lookup(key: &str) -> Option<Known> {
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

pub(super) fn ignored_or_rejected(key: &str) -> Option<Known> {
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
        // Schema Registry settings (Confluent's names, in Confluent Cloud's generated files):
        // for the registry client of kseek-registry (`Properties::with_prefix`), not for
        // Kafka connections.
        "basic.auth.credentials.source" | "basic.auth.user.info" | "bearer.auth.credentials.source"
        | "bearer.auth.token" => Known::Ignored,
        _ if key.starts_with("schema.registry.") => Known::Ignored,
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
pub(super) fn is_secret(key: &str) -> bool {
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
            | "bearer.auth.token"
    ) || key.contains("password")
        || key
            .strip_prefix("schema.registry.")
            .is_some_and(|k| k != "url" && is_secret(k))
}

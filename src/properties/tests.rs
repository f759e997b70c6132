//! The properties parser's tests: files and `-X` settings of both clients' names, secrets,
//! `${env:NAME}`, TLS and SASL settings and their errors.

use super::jaas::{parse_jaas, Jaas};
use super::*;
use crate::security::{
    PemSource, SaslConfig, ScramMechanism, Secret, SecurityProtocol, TlsConfig, TlsVersions,
    TokenSource, TrustAnchors,
};
use std::time::Duration;

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
        Ok(Jaas::Credentials { username, password }) => (username, password.expose().to_owned()),
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
        TrustAnchors::Pem("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----".into())
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

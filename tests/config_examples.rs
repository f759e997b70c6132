//! The example config files of the README (`examples/config/`) are what users have: each one
//! loads unchanged and gives the settings it says, with its secret from the environment.

use kseek::properties::Properties;
use kseek::security::{PemSource, SaslConfig, ScramMechanism, SecurityProtocol, TrustAnchors};
use kseek::ClientConfig;

fn load(name: &str, text: &str) -> ClientConfig {
    let mut properties = Properties::new();
    properties.add_text(text, name).unwrap();
    let mut config = ClientConfig::default();
    let env = |var: &str| Some(format!("secret-of-{var}"));
    properties.apply_with_env(&mut config, &env).unwrap();
    config
}

#[test]
fn confluent_cloud() {
    let config = load(
        "confluent-cloud.properties",
        include_str!("../examples/config/confluent-cloud.properties"),
    );
    let security = &config.connection.security;
    assert_eq!(security.protocol, SecurityProtocol::SaslSsl);
    assert_eq!(security.tls.trust, TrustAnchors::System);
    match &security.sasl {
        Some(SaslConfig::Plain { username, password }) => {
            assert_eq!(username, "ABCDEFGHIJKLMNOP");
            assert_eq!(password.expose(), "secret-of-CONFLUENT_API_SECRET");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(config.bootstrap.len(), 1);
}

#[test]
fn msk_scram_and_mtls() {
    let config = load(
        "msk-scram.properties",
        include_str!("../examples/config/msk-scram.properties"),
    );
    match &config.connection.security.sasl {
        Some(SaslConfig::Scram {
            mechanism: ScramMechanism::Sha512,
            username,
            password,
        }) => {
            assert_eq!(username, "reporting");
            assert_eq!(password.expose(), "secret-of-MSK_PASSWORD");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(config.bootstrap.join(",").matches(":9096").count(), 2);

    let config = load(
        "msk-mtls.properties",
        include_str!("../examples/config/msk-mtls.properties"),
    );
    let security = &config.connection.security;
    assert_eq!(security.protocol, SecurityProtocol::Ssl);
    let keystore = PemSource::File("/etc/kafka/client-keystore.pem".into());
    assert_eq!(security.tls.client_cert.as_ref(), Some(&keystore));
    assert_eq!(security.tls.client_key.as_ref(), Some(&keystore));
}

#[test]
fn a_kcat_config_file() {
    let config = load("kcat.conf", include_str!("../examples/config/kcat.conf"));
    let security = &config.connection.security;
    assert_eq!(security.protocol, SecurityProtocol::SaslSsl);
    assert_eq!(
        security.tls.trust,
        TrustAnchors::PemFile("/etc/ssl/internal-ca.pem".into())
    );
    assert!(matches!(
        &security.sasl,
        Some(SaslConfig::Scram { mechanism: ScramMechanism::Sha256, username, .. }) if username == "reporting"
    ));
}

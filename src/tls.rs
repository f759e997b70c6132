//! TLS for broker connections (the `tls` feature): rustls with the ring provider.
//!
//! A [`TlsConfig`] becomes one rustls client configuration, built on first use and shared by
//! every connection made with an equal [`TlsConfig`]. The broker's certificate is checked by
//! webpki against the trust anchors; a failure names the certificate's subject and issuer
//! and, for a name mismatch, the names it holds and the one expected. With
//! [`TlsConfig::verify_hostname`] off, only the name check is skipped (the chain is still
//! verified), and every handshake logs a warning.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::security::{PemSource, TlsCache, TlsConfig, TlsVersions, TrustAnchors};

impl TlsCache {
    /// The rustls configuration for `tls`, built now unless the cached one is for an equal
    /// config.
    pub(crate) fn get(&self, tls: &TlsConfig) -> Result<Arc<rustls::ClientConfig>, String> {
        let mut cached = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((config, built)) = cached.as_ref() {
            if config == tls {
                return Ok(built.clone());
            }
        }
        let built = Arc::new(client_config(tls)?);
        *cached = Some((tls.clone(), built.clone()));
        Ok(built)
    }
}

impl TlsConfig {
    /// The rustls client configuration kseek's own broker connections use for these settings
    /// (ring, the trust anchors, the client certificate, the name check), for other
    /// connections of the same program to go through the same TLS stack: a Schema Registry
    /// client, for example.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config): a CA, certificate or key file that
    /// can't be read or doesn't parse, an encrypted key.
    pub fn rustls_client_config(&self) -> crate::Result<Arc<rustls::ClientConfig>> {
        client_config(self)
            .map(Arc::new)
            .map_err(|message| crate::ErrorKind::Config { message }.into())
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the rustls configuration: trust anchors, the verifier, the client certificate.
fn client_config(tls: &TlsConfig) -> Result<rustls::ClientConfig, String> {
    // A password for a key that is not encrypted is ignored, as Java's client does.
    if let (Some(_), Some(key)) = (&tls.client_key_password, &tls.client_key) {
        if is_encrypted(key)? {
            return Err(
                "encrypted client keys (ssl.key.password) are not supported: decrypt the key \
                 (openssl pkcs8 -in key.pem -out plain.pem) and leave the password out"
                    .to_owned(),
            );
        }
    }
    let roots = Arc::new(root_store(&tls.trust)?);
    let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider())
        .build()
        .map_err(|e| format!("cannot use the trusted certificates: {e}"))?;
    let verifier = Arc::new(Verifier {
        webpki,
        verify_hostname: tls.verify_hostname,
    });
    let versions: &[&rustls::SupportedProtocolVersion] = match tls.versions {
        TlsVersions {
            tls12: true,
            tls13: true,
        } => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersions { tls13: true, .. } => &[&rustls::version::TLS13],
        TlsVersions { tls12: true, .. } => &[&rustls::version::TLS12],
        _ => return Err("no TLS version is enabled: enable TLSv1.2 or TLSv1.3".to_owned()),
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match (&tls.client_cert, &tls.client_key) {
        (None, None) => Ok(builder.with_no_client_auth()),
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "client certificate")?;
            let key = private_key(key)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("cannot use the client certificate and key: {e}"))
        }
        (Some(_), None) => Err(
            "a client certificate needs its private key (ssl.key.location or \
             ssl.keystore.location)"
                .to_owned(),
        ),
        (None, Some(_)) => Err(
            "a client key needs its certificate (ssl.certificate.location or \
             ssl.keystore.location)"
                .to_owned(),
        ),
    }
}

fn root_store(trust: &TrustAnchors) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match trust {
        TrustAnchors::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _ignored) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                return Err(format!(
                    "no trusted certificates found in the system's store{why}; name a CA file \
                     (ssl.ca.location)"
                ));
            }
        }
        TrustAnchors::PemFile(path) => {
            let source = PemSource::File(path.clone());
            add_all(&mut store, certificates(&source, "CA file")?)?;
        }
        TrustAnchors::Pem(text) => {
            let source = PemSource::Inline(text.as_str().into());
            add_all(&mut store, certificates(&source, "CA certificates")?)?;
        }
    }
    Ok(store)
}

fn add_all(store: &mut RootCertStore, certs: Vec<CertificateDer<'static>>) -> Result<(), String> {
    for cert in certs {
        store
            .add(cert)
            .map_err(|e| format!("a trusted certificate is not usable: {e}"))?;
    }
    Ok(())
}

fn describe(source: &PemSource) -> String {
    match source {
        PemSource::File(path) => path.display().to_string(),
        PemSource::Inline(_) => "the inline PEM text".to_owned(),
    }
}

/// Every certificate in a PEM source; none is an error.
fn certificates(source: &PemSource, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Result<Vec<_>, _> = match source {
        PemSource::File(path) => CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))?
            .collect(),
        PemSource::Inline(text) => {
            CertificateDer::pem_slice_iter(text.expose().as_bytes()).collect()
        }
    };
    let certs =
        certs.map_err(|e| format!("the {what} {} is not valid PEM: {e}", describe(source)))?;
    if certs.is_empty() {
        return Err(format!(
            "the {what} {} holds no PEM certificate (BEGIN CERTIFICATE)",
            describe(source)
        ));
    }
    Ok(certs)
}

/// Whether a PEM key is encrypted: PKCS#8 `ENCRYPTED PRIVATE KEY`, or OpenSSL's legacy
/// `Proc-Type: 4,ENCRYPTED` header. Errors never show the key.
fn is_encrypted(source: &PemSource) -> Result<bool, String> {
    let text = match source {
        PemSource::File(path) => std::borrow::Cow::Owned(
            std::fs::read(path)
                .map_err(|e| format!("the client key {} cannot be read: {e}", describe(source)))?,
        ),
        // Not copied: a copy of a secret would outlive its owner's care.
        PemSource::Inline(text) => std::borrow::Cow::Borrowed(text.expose().as_bytes()),
    };
    let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    Ok(has(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || has(b"Proc-Type: 4,ENCRYPTED"))
}

/// The private key of a PEM source. Errors never show the key.
fn private_key(source: &PemSource) -> Result<PrivateKeyDer<'static>, String> {
    let key = match source {
        PemSource::File(path) => PrivateKeyDer::from_pem_file(path),
        PemSource::Inline(text) => PrivateKeyDer::from_pem_slice(text.expose().as_bytes()),
    };
    key.map_err(|e| {
        let why = match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "holds no unencrypted private key (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC \
                 PRIVATE KEY)"
                    .to_owned()
            }
            rustls::pki_types::pem::Error::Io(e) => format!("cannot be read: {e}"),
            _ => "is not valid PEM".to_owned(),
        };
        format!("the client key {} {why}", describe(source))
    })
}

/// The host of a `host:port` address (IPv6 in brackets), as rustls names servers.
pub(crate) fn server_name(broker: &str) -> Result<ServerName<'static>, String> {
    let host = match broker.rsplit_once(':') {
        Some((host, _port)) => host,
        None => broker,
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    ServerName::try_from(host.to_owned())
        .map_err(|_| format!("{host:?} is not a valid host name for TLS"))
}

/// Runs the TLS handshake over `tcp`.
pub(crate) async fn handshake(
    config: Arc<rustls::ClientConfig>,
    broker: &str,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, String> {
    let name = server_name(broker)?;
    let connector = tokio_rustls::TlsConnector::from(config);
    connector
        .connect(name, tcp)
        .await
        .map_err(|e| handshake_error(&e))
}

/// What a failed handshake tells the user: the verifier's own words, or the likely cause.
fn handshake_error(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let inner = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match (e.kind(), inner) {
        (_, Some(rustls::Error::General(message))) => message.clone(),
        (_, Some(rustls::Error::InvalidMessage(_))) => {
            "TLS handshake failed: the broker did not answer in TLS (is this a PLAINTEXT or \
             SASL_PLAINTEXT listener? then use security.protocol PLAINTEXT or SASL_PLAINTEXT)"
                .to_owned()
        }
        (_, Some(rustls::Error::AlertReceived(alert))) => format!(
            "TLS handshake failed: the broker refused it ({alert:?}); if the listener requires \
             a client certificate (ssl.client.auth=required), set ssl.certificate.location \
             and ssl.key.location"
        ),
        (_, Some(other)) => format!("TLS handshake failed: {other}"),
        (ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset, None) => {
            "TLS handshake failed: the broker closed the connection (is this a PLAINTEXT or \
             SASL_PLAINTEXT listener? then use security.protocol PLAINTEXT or SASL_PLAINTEXT)"
                .to_owned()
        }
        (_, None) => format!("TLS handshake failed: {e}"),
    }
}

/// webpki's verification, with errors that name the certificate, and the name check skipped
/// when hostname verification is off.
#[derive(Debug)]
struct Verifier {
    webpki: Arc<WebPkiServerVerifier>,
    verify_hostname: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let result = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        let error = match result {
            Ok(verified) => return Ok(verified),
            Err(error) => error,
        };
        let names = cert_names(end_entity);
        let subject = names
            .as_ref()
            .map_or("(unparsable certificate)", |(subject, _)| subject.as_str());
        let message = match &error {
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            ) if !self.verify_hostname => {
                crate::log::warning!(
                    server = ?server_name,
                    %subject,
                    "hostname verification is off: accepting a certificate not issued for this host"
                );
                return Ok(ServerCertVerified::assertion());
            }
            rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                expected,
                presented,
            }) => format!(
                "the broker's certificate ({subject}) is not valid for {}: it names {} (set \
                 ssl.endpoint.identification.algorithm to empty only if you accept that)",
                show_name(expected),
                if presented.is_empty() {
                    "no host".to_owned()
                } else {
                    presented
                        .iter()
                        .map(|name| plain_name(name))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => format!(
                "the broker's certificate ({subject}) is not valid for {}",
                show_name(server_name)
            ),
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                let issuer = names
                    .as_ref()
                    .map_or("an unknown issuer", |(_, issuer)| issuer.as_str());
                format!(
                    "the broker's certificate ({subject}, issued by {issuer}) is not signed by a \
                     trusted CA: name its CA in ssl.ca.location (or ssl.truststore.location)"
                )
            }
            rustls::Error::InvalidCertificate(other) => {
                format!("the broker's certificate ({subject}) is not acceptable: {other:?}")
            }
            other => format!("the broker's certificate ({subject}) is not acceptable: {other}"),
        };
        Err(rustls::Error::General(message))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// `wrong.example` of rustls' `DnsName("wrong.example")`; other text as it is.
fn plain_name(name: &str) -> &str {
    match (name.find('"'), name.rfind('"')) {
        (Some(a), Some(b)) if a < b => &name[a + 1..b],
        _ => name,
    }
}

fn show_name(name: &ServerName<'_>) -> String {
    match name {
        ServerName::DnsName(dns) => dns.as_ref().to_owned(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

/// The subject and issuer of a DER certificate, as `CN=...,O=...`; `None` if it doesn't
/// parse. Only what an error message needs: a walk of the tbsCertificate's outer fields.
fn cert_names(der: &[u8]) -> Option<(String, String)> {
    let (_, cert, _) = der_item(der)?;
    let (_, tbs, _) = der_item(cert)?;
    let mut rest = tbs;
    // [0] EXPLICIT version, optional.
    if rest.first() == Some(&0xa0) {
        rest = der_item(rest)?.2;
    }
    let rest = der_item(rest)?.2; // serialNumber
    let rest = der_item(rest)?.2; // signature algorithm
    let (_, issuer, rest) = der_item(rest)?;
    let rest = der_item(rest)?.2; // validity
    let (_, subject, _) = der_item(rest)?;
    Some((dn(subject)?, dn(issuer)?))
}

/// One DER item: its tag, contents and what follows it.
fn der_item(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// A Name (SEQUENCE OF SET OF AttributeTypeAndValue) as `CN=a,O=b`.
fn dn(mut name: &[u8]) -> Option<String> {
    let mut parts = Vec::new();
    while !name.is_empty() {
        let (_, set, rest) = der_item(name)?;
        name = rest;
        let mut set = set;
        while !set.is_empty() {
            let (_, attribute, rest) = der_item(set)?;
            set = rest;
            let (_, oid, value) = der_item(attribute)?;
            let (_, value, _) = der_item(value)?;
            let key = match oid {
                [0x55, 0x04, 0x03] => "CN",
                [0x55, 0x04, 0x06] => "C",
                [0x55, 0x04, 0x07] => "L",
                [0x55, 0x04, 0x08] => "ST",
                [0x55, 0x04, 0x0a] => "O",
                [0x55, 0x04, 0x0b] => "OU",
                _ => continue,
            };
            parts.push(format!("{key}={}", String::from_utf8_lossy(value)));
        }
    }
    if parts.is_empty() {
        Some("an empty name".to_owned())
    } else {
        Some(parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::Secret;

    #[test]
    fn server_names_from_addresses() {
        assert!(matches!(
            server_name("broker-1.example.com:9093"),
            Ok(ServerName::DnsName(_))
        ));
        assert!(matches!(
            server_name("127.0.0.1:9093"),
            Ok(ServerName::IpAddress(_))
        ));
        assert!(matches!(
            server_name("[::1]:9093"),
            Ok(ServerName::IpAddress(_))
        ));
        assert!(server_name("bad host:1").is_err());
    }

    #[test]
    fn der_walk_never_panics_on_junk() {
        for len in 0..64 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 + 0x30) as u8).collect();
            let _ = cert_names(&junk);
        }
        // A length that claims more than there is.
        assert_eq!(der_item(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(der_item(&[0x30, 0x05, 1, 2]), None);
    }

    #[test]
    fn a_key_password_matters_only_for_an_encrypted_key() {
        let inline = |text: &str| PemSource::Inline(Secret::new(text.to_owned()));
        let plain = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
        assert_eq!(is_encrypted(&inline(plain)), Ok(false));
        let pkcs8 =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert_eq!(is_encrypted(&inline(pkcs8)), Ok(true));
        let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nMIIE\n-----END RSA PRIVATE KEY-----\n";
        assert_eq!(is_encrypted(&inline(legacy)), Ok(true));
        // With an encrypted key the password is refused with what to do; with a plain one
        // it is ignored and the error (a junk key here) is about the key itself.
        let tls = |key: &str| TlsConfig {
            client_cert: Some(inline(
                "-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----\n",
            )),
            client_key: Some(inline(key)),
            client_key_password: Some(Secret::new("changeit".to_owned())),
            trust: TrustAnchors::Pem(String::new()),
            ..TlsConfig::default()
        };
        let err = client_config(&tls(pkcs8)).unwrap_err();
        assert!(err.contains("openssl pkcs8"), "{err}");
        let err = client_config(&tls(plain)).unwrap_err();
        assert!(!err.contains("ssl.key.password"), "{err}");
    }

    #[test]
    fn missing_files_are_named() {
        let tls = TlsConfig {
            trust: TrustAnchors::PemFile("/nonexistent/ca.pem".into()),
            ..TlsConfig::default()
        };
        let err = client_config(&tls).unwrap_err();
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
        let tls = TlsConfig {
            trust: TrustAnchors::Pem("not pem".into()),
            ..TlsConfig::default()
        };
        let err = client_config(&tls).unwrap_err();
        assert!(err.contains("no PEM certificate"), "{err}");
    }

    #[test]
    fn a_key_never_shows_in_its_error() {
        let key = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0*\n-----END PRIVATE KEY-----\n";
        let err = private_key(&PemSource::Inline(key.into())).unwrap_err();
        assert!(!err.contains("c2VjcmV0"), "{err}");
    }
}

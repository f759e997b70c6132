//! The socket under a connection: TCP, with TLS when the security settings ask for it, and
//! how its failures read (a TLS alert, an answer in TLS to a plaintext request).

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

#[cfg(test)]
use super::sim_net;
use super::ConnectionConfig;
use crate::error::{Error, ErrorKind, Result};

/// Why a connection closes when a broker answers a plaintext request in TLS.
pub(super) const TLS_ANSWER: &str = "the broker answered in TLS";

/// Marks a connection closed by a TLS alert from the broker (see [`refused_tls`]).
const TLS_REFUSED: &str = "TLS session refused: ";

/// Why a read failed. A TLS alert means the broker refused the session: with TLS 1.3 a
/// client certificate it rejects (or one it requires and didn't get) shows only now, on the
/// first read after the handshake.
pub(super) fn read_error(e: &std::io::Error, has_client_cert: bool) -> String {
    #[cfg(feature = "tls")]
    if let Some(rustls::Error::AlertReceived(alert)) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        use rustls::AlertDescription as A;
        let hint = match alert {
            A::CertificateRequired => {
                "the listener requires a client certificate (ssl.client.auth=required): set \
                 ssl.certificate.location and ssl.key.location (or ssl.keystore.location)"
            }
            A::BadCertificate | A::UnknownCA | A::CertificateUnknown | A::HandshakeFailure
                if !has_client_cert =>
            {
                "the listener requires a client certificate (ssl.client.auth=required): set \
                 ssl.certificate.location and ssl.key.location (or ssl.keystore.location)"
            }
            A::BadCertificate | A::UnknownCA | A::CertificateUnknown => {
                "the broker does not trust our client certificate: use one signed by a CA in \
                 its truststore"
            }
            _ => "see the broker's log",
        };
        return format!("{TLS_REFUSED}the broker sent the alert {alert:?}; {hint}");
    }
    let _ = has_client_cert;
    format!("read failed: {e}")
}

/// A connection the broker closed with a TLS alert while connecting is a TLS error (not
/// retriable), not a closed connection.
pub(super) fn refused_tls(e: Error) -> Error {
    match e.kind() {
        ErrorKind::ConnectionClosed { broker, reason }
            if reason.starts_with(TLS_REFUSED) || reason.starts_with(TLS_ANSWER) =>
        {
            ErrorKind::Tls {
                broker: broker.clone(),
                message: reason.clone(),
            }
            .into()
        }
        _ => e,
    }
}

/// Whether the first bytes from a broker are a TLS record (a handshake or an alert) rather
/// than a Kafka size prefix: one that large (over 350 MB) is never a real answer.
pub(super) fn looks_like_tls(buf: &[u8]) -> bool {
    matches!(buf, [0x15 | 0x16, 0x03, 0x00..=0x04, ..])
}

/// The socket, with TLS when the security settings ask for it.
pub(super) enum Transport {
    Tcp(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    /// An in-memory connection to a simulated broker (tests only: [`sim_net`]).
    #[cfg(test)]
    Sim(tokio::io::DuplexStream),
}

impl Transport {
    /// Whether a completed write may leave bytes in a buffer that only a flush sends.
    pub(super) fn buffers_writes(&self) -> bool {
        !matches!(self, Transport::Tcp(_))
    }

    /// The byte stream underneath, whichever it is.
    // Without `tls` (and outside tests) the enum has one variant, and the match is infallible.
    #[allow(clippy::infallible_destructuring_match)]
    fn stream(self: Pin<&mut Self>) -> Pin<&mut dyn ByteStream> {
        let stream: &mut dyn ByteStream = match self.get_mut() {
            Transport::Tcp(s) => s,
            #[cfg(feature = "tls")]
            Transport::Tls(s) => s.as_mut(),
            #[cfg(test)]
            Transport::Sim(s) => s,
        };
        Pin::new(stream)
    }
}

/// What every transport is underneath: bytes both ways.
trait ByteStream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> ByteStream for T {}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.stream().poll_read(cx, buf)
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.stream().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_shutdown(cx)
    }
}

/// Opens the TCP connection and, when the security settings ask for it, runs the TLS
/// handshake over it.
pub(super) async fn connect_transport(
    broker: &str,
    config: &ConnectionConfig,
) -> Result<Transport> {
    #[cfg(test)]
    if let Some(stream) = sim_net::connect(broker) {
        return stream.map(Transport::Sim).map_err(|source| {
            ErrorKind::Io {
                broker: broker.to_owned(),
                source,
            }
            .into()
        });
    }
    let tcp = TcpStream::connect(broker)
        .await
        .map_err(|source| ErrorKind::Io {
            broker: broker.to_owned(),
            source,
        })?;
    let _ = tcp.set_nodelay(true);
    if !config.security.protocol.uses_tls() {
        return Ok(Transport::Tcp(tcp));
    }
    #[cfg(feature = "tls")]
    {
        let tls_error = |message| ErrorKind::Tls {
            broker: broker.to_owned(),
            message,
        };
        let rustls_config = config
            .security
            .tls_cache
            .get(&config.security.tls)
            .map_err(|message| ErrorKind::Config { message })?;
        let stream = crate::tls::handshake(rustls_config, broker, tcp)
            .await
            .map_err(tls_error)?;
        Ok(Transport::Tls(Box::new(stream)))
    }
    #[cfg(not(feature = "tls"))]
    {
        drop(tcp);
        Err(ErrorKind::Config {
            message: "security.protocol SSL and SASL_SSL need TLS, and this kseek was built \
                      without its `tls` feature"
                .to_owned(),
        }
        .into())
    }
}

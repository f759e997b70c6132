//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them: no channel
//! binding (GS2 header `n,,`), the user name as a `saslname` (`=` and `,` escaped), no
//! SASLprep (Kafka's Java client sends the password's UTF-8 bytes as they are), no extensions.
//!
//! # References
//! RFC 5802 sections 3 and 5, RFC 7677, KIP-84.

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

use super::{base64, out_of_order, printable, server_spoke_first, Error, Result, Step};
use crate::security::{ScramMechanism, Secret};

/// Kafka's minimum iteration count (`ScramMechanism.minIterations`); fewer is refused.
pub(super) const MIN_ITERATIONS: u32 = 4096;
/// The most iterations accepted: Kafka stores at most 16384, and a hostile server must not
/// make us compute for minutes. A million PBKDF2 rounds take about a second.
pub(super) const MAX_ITERATIONS: u32 = 1_000_000;

/// The GS2 header: no channel binding, no authorization identity.
const GS2_HEADER: &str = "n,,";
/// `c=` of the client's final message: the GS2 header in base64.
const CHANNEL_BINDING: &str = "biws";

/// One SCRAM exchange.
pub(super) struct Scram {
    mechanism: ScramMechanism,
    /// The user name, already escaped as a `saslname`.
    username: String,
    password: Secret,
    nonce: String,
    state: State,
}

enum State {
    Initial,
    /// The client's first message went out; it is part of the AuthMessage.
    SentFirst {
        client_first_bare: String,
    },
    /// The client's proof went out; the server must answer with this signature.
    SentFinal {
        server_signature: Vec<u8>,
    },
    Done,
}

/// A fresh client nonce: 24 random bytes from the OS, in base64 (printable, no comma).
pub(super) fn random_nonce(mechanism: &'static str) -> Result<String> {
    let mut bytes = [0u8; 24];
    getrandom::getrandom(&mut bytes).map_err(|_| Error::NoRandomness { mechanism })?;
    Ok(base64::encode(&bytes))
}

impl Scram {
    pub(super) fn new(
        mechanism: ScramMechanism,
        username: &str,
        password: Secret,
        nonce: String,
    ) -> Result<Scram> {
        let name = name_of(mechanism);
        if username.is_empty() {
            return Err(Error::InvalidCredentials {
                mechanism: name,
                reason: "the user name is empty",
            });
        }
        if password.expose().is_empty() {
            return Err(Error::InvalidCredentials {
                mechanism: name,
                reason: "the password is empty",
            });
        }
        Ok(Scram {
            mechanism,
            username: username.replace('=', "=3D").replace(',', "=2C"),
            password,
            nonce,
            state: State::Initial,
        })
    }

    pub(super) fn name(&self) -> &'static str {
        name_of(self.mechanism)
    }

    /// The server's message is malformed: `reason`.
    fn malformed(&self, reason: &'static str) -> Error {
        Error::Malformed {
            mechanism: self.name(),
            reason,
        }
    }

    /// `n,,n=<user>,r=<nonce>`.
    pub(super) fn initial(&mut self) -> Result<Vec<u8>> {
        if !matches!(self.state, State::Initial) {
            return Err(out_of_order(
                self.name(),
                "the first message was already sent",
            ));
        }
        let client_first_bare = format!("n={},r={}", self.username, self.nonce);
        let message = format!("{GS2_HEADER}{client_first_bare}").into_bytes();
        self.state = State::SentFirst { client_first_bare };
        Ok(message)
    }

    pub(super) fn step(&mut self, server: &[u8]) -> Result<Step> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Initial => {
                self.state = State::Initial;
                Err(server_spoke_first(self.name()))
            }
            State::SentFirst { client_first_bare } => {
                let (client_final, server_signature) =
                    self.client_final(&client_first_bare, server)?;
                self.state = State::SentFinal { server_signature };
                Ok(Step::Send(client_final.into_bytes()))
            }
            State::SentFinal { server_signature } => {
                self.verify_server_final(&server_signature, server)?;
                Ok(Step::Done)
            }
            State::Done => Err(out_of_order(
                self.name(),
                "the server sent a message after the exchange ended",
            )),
        }
    }

    /// Parses the server's first message (`r=<nonce>,s=<salt>,i=<count>[,ext...]`) and
    /// returns the client's final message and the server signature to expect.
    fn client_final(&self, client_first_bare: &str, server: &[u8]) -> Result<(String, Vec<u8>)> {
        let name = self.name();
        let server_first = std::str::from_utf8(server)
            .map_err(|_| self.malformed("the first message is not UTF-8"))?;
        let mut attributes = server_first.split(',');
        if let Some(message) = attributes.clone().next().and_then(|a| a.strip_prefix("e=")) {
            return Err(Error::Refused {
                mechanism: name,
                message: printable(message),
            });
        }
        if attributes
            .clone()
            .next()
            .is_some_and(|a| a.starts_with("m="))
        {
            return Err(self.malformed("the server requires an extension (m=) we don't know"));
        }
        let nonce = next_attribute(&mut attributes, "r=")
            .ok_or(self.malformed("the first message does not start with the nonce (r=)"))?;
        let salt = next_attribute(&mut attributes, "s=")
            .ok_or(self.malformed("the first message has no salt (s=) after the nonce"))?;
        let iterations = next_attribute(&mut attributes, "i=").ok_or(
            self.malformed("the first message has no iteration count (i=) after the salt"),
        )?;
        // Further attributes are extensions, which RFC 5802 says to ignore unless known.

        if !nonce.bytes().all(|c| c.is_ascii_graphic() && c != b',') {
            return Err(self.malformed("the nonce has characters a nonce can't have"));
        }
        if nonce.len() <= self.nonce.len() || !nonce.starts_with(self.nonce.as_str()) {
            return Err(Error::NonceMismatch { mechanism: name });
        }
        let salt = base64::decode(salt).ok_or(self.malformed("the salt is not base64"))?;
        if salt.is_empty() {
            return Err(self.malformed("the salt is empty"));
        }
        if iterations.is_empty() || !iterations.bytes().all(|c| c.is_ascii_digit()) {
            return Err(self.malformed("the iteration count is not a number"));
        }
        let iterations: u64 = iterations.parse().unwrap_or(u64::MAX);
        let iterations = match u32::try_from(iterations) {
            Ok(i) if (MIN_ITERATIONS..=MAX_ITERATIONS).contains(&i) => i,
            _ => {
                return Err(Error::IterationCount {
                    mechanism: name,
                    iterations,
                    min: MIN_ITERATIONS,
                    max: MAX_ITERATIONS,
                })
            }
        };

        let without_proof = format!("c={CHANNEL_BINDING},r={nonce}");
        let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
        let password = self.password.expose().as_bytes();
        let keys = match self.mechanism {
            ScramMechanism::Sha256 => {
                proof::<Hmac<Sha256>, Sha256>(password, &salt, iterations, &auth_message)
            }
            ScramMechanism::Sha512 => {
                proof::<Hmac<Sha512>, Sha512>(password, &salt, iterations, &auth_message)
            }
        };
        let Some((proof, server_signature)) = keys else {
            return Err(self.malformed("HMAC refused its key"));
        };
        Ok((
            format!("{without_proof},p={}", base64::encode(&proof)),
            server_signature,
        ))
    }

    /// Checks the server's final message: `v=<signature>`, or `e=<error>`.
    fn verify_server_final(&self, expected: &[u8], server: &[u8]) -> Result<()> {
        let name = self.name();
        let server_final = std::str::from_utf8(server)
            .map_err(|_| self.malformed("the final message is not UTF-8"))?;
        let first = server_final.split(',').next().unwrap_or_default();
        if let Some(message) = first.strip_prefix("e=") {
            return Err(Error::Refused {
                mechanism: name,
                message: printable(message),
            });
        }
        let signature = first.strip_prefix("v=").ok_or(
            self.malformed("the final message has neither a signature (v=) nor an error (e=)"),
        )?;
        let signature = base64::decode(signature)
            .ok_or(self.malformed("the server signature is not base64"))?;
        if !constant_time_eq(&signature, expected) {
            return Err(Error::ServerSignature { mechanism: name });
        }
        Ok(())
    }
}

/// The value of the next attribute of a server message, if that attribute is `prefix`'s.
fn next_attribute<'a>(attributes: &mut std::str::Split<'a, char>, prefix: &str) -> Option<&'a str> {
    attributes.next().and_then(|a| a.strip_prefix(prefix))
}

fn name_of(mechanism: ScramMechanism) -> &'static str {
    match mechanism {
        ScramMechanism::Sha256 => "SCRAM-SHA-256",
        ScramMechanism::Sha512 => "SCRAM-SHA-512",
    }
}

/// The client proof and the server signature (RFC 5802 section 3), with `M` the HMAC of hash
/// `D`. `None` only if HMAC refuses a key, which it never does.
fn proof<M, D>(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    auth_message: &str,
) -> Option<(Vec<u8>, Vec<u8>)>
where
    M: Mac + KeyInit + Clone,
    D: Digest,
{
    let salted_password = hi::<M>(password, salt, iterations)?;
    let client_key = hmac::<M>(&salted_password, b"Client Key")?;
    let stored_key = D::digest(&client_key);
    let client_signature = hmac::<M>(&stored_key, auth_message.as_bytes())?;
    let proof = client_key
        .iter()
        .zip(&client_signature)
        .map(|(k, s)| k ^ s)
        .collect();
    let server_key = hmac::<M>(&salted_password, b"Server Key")?;
    let server_signature = hmac::<M>(&server_key, auth_message.as_bytes())?;
    Some((proof, server_signature))
}

/// `Hi(str, salt, i)`: PBKDF2 with HMAC as the PRF and one block of output (RFC 5802
/// section 2.2, RFC 8018 section 5.2). The keyed HMAC state is cloned for every round rather
/// than keyed anew.
fn hi<M: Mac + KeyInit + Clone>(password: &[u8], salt: &[u8], iterations: u32) -> Option<Vec<u8>> {
    let prf = <M as KeyInit>::new_from_slice(password).ok()?;
    let mut mac = prf.clone();
    mac.update(salt);
    mac.update(&1u32.to_be_bytes());
    let mut u = mac.finalize().into_bytes();
    let mut result = u.clone();
    for _ in 1..iterations {
        let mut mac = prf.clone();
        mac.update(&u);
        u = mac.finalize().into_bytes();
        for (r, b) in result.iter_mut().zip(u.iter()) {
            *r ^= b;
        }
    }
    Some(result.to_vec())
}

fn hmac<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let mut mac = <M as KeyInit>::new_from_slice(key).ok()?;
    mac.update(data);
    Some(mac.finalize().into_bytes().to_vec())
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6070's PBKDF2-HMAC-SHA1 vectors need SHA-1; this pins `hi` against RFC 7914's
    /// PBKDF2-HMAC-SHA256 vector (P="passwd", S="salt", c=1, the first 32 bytes).
    #[test]
    fn hi_matches_rfc_7914() {
        let out = hi::<Hmac<Sha256>>(b"passwd", b"salt", 1).unwrap();
        assert_eq!(
            out,
            [
                0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f, 0xec, 0x16, 0x91, 0xc2, 0x25, 0x44,
                0xb6, 0x05, 0xf9, 0x41, 0x85, 0x21, 0x6d, 0xde, 0x04, 0x65, 0xe6, 0x8b, 0x9d, 0x57,
                0xc2, 0x0d, 0xac, 0xbc
            ]
        );
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}

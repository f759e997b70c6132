//! One setting's value with where it was set, read as the types settings take (milliseconds,
//! paths, PEM text), its errors naming the property and never a secret value.

use std::path::PathBuf;
use std::time::Duration;

use super::names::is_secret;
use super::{Error, Result};

/// A setting's value, with where it came from.
pub(super) struct Value {
    pub(super) key: String,
    pub(super) origin: String,
    pub(super) text: String,
}

impl Value {
    pub(super) fn invalid(&self, expected: &str) -> Error {
        Error::InvalidValue {
            origin: self.origin.clone(),
            key: self.key.clone(),
            value: (!is_secret(&self.key)).then(|| self.text.clone()),
            expected: expected.to_owned(),
        }
    }

    pub(super) fn unsupported(&self, reason: impl Into<String>) -> Error {
        Error::Unsupported {
            origin: self.origin.clone(),
            key: self.key.clone(),
            reason: reason.into(),
        }
    }

    pub(super) fn trimmed(&self) -> &str {
        self.text.trim()
    }

    pub(super) fn milliseconds(&self, allow_zero: bool) -> Result<Duration> {
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

    pub(super) fn path(&self) -> Result<PathBuf> {
        match self.trimmed() {
            "" => Err(self.invalid("a file path")),
            path => Ok(PathBuf::from(path)),
        }
    }

    pub(super) fn pem(&self) -> Result<String> {
        if self.trimmed().is_empty() {
            return Err(self.invalid("PEM text"));
        }
        Ok(self.text.clone())
    }
}

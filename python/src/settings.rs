//! What Python passes in: client settings from `bootstrap` and `properties`, topics,
//! positions and isolation levels.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kseek::position::{self, Position};
use kseek::properties::Properties;
use kseek::{ClientConfig, IsolationLevel};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::ConfigError;

/// The command line's retry deadline: how long a request is retried before it fails.
pub(crate) const RETRY_DEADLINE: Duration = Duration::from_secs(30);

/// How long a topic not (yet) in the metadata is waited for.
pub(crate) const MISSING_TOPIC_WAIT: Duration = Duration::from_secs(3);

/// The current time in ms since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A property value given from Python: a string, or a number or bool written as Kafka's
/// configuration files write it.
pub(crate) fn property_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = value.extract::<bool>() {
        return Ok(if b { "true" } else { "false" }.to_owned());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(s.to_str()?.to_owned());
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(n.to_string());
    }
    Err(ConfigError::new_err(format!(
        "property value {} is not a string, an integer or a bool",
        value.repr()?
    )))
}

/// The client settings of `bootstrap` and `properties` (Kafka's property names, the command
/// line's `-X`): properties first, then `bootstrap`, else `bootstrap.servers`, else
/// `$KSEEK_BOOTSTRAP`, else `localhost:9092`.
pub(crate) fn client_config(
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<ClientConfig> {
    settings(bootstrap, properties).map(|(config, _)| config)
}

/// [`client_config`], and the properties it was made from (the Schema Registry's settings
/// are among them, in Confluent's names).
pub(crate) fn settings(
    bootstrap: Option<&str>,
    properties: Option<&Bound<'_, PyDict>>,
) -> PyResult<(ClientConfig, Properties)> {
    let mut config = ClientConfig::default();
    config.retry_deadline = RETRY_DEADLINE;
    config.missing_topic_wait = MISSING_TOPIC_WAIT;
    let mut props = Properties::new();
    if let Some(dict) = properties {
        for (key, value) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| ConfigError::new_err("property names must be strings"))?
                .to_str()?
                .to_owned();
            props
                .set(&key, &property_text(&value)?, "properties")
                .map_err(|e| ConfigError::new_err(e.to_string()))?;
        }
    }
    let given = props
        .value("bootstrap.servers")
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    let (servers, origin) = match (bootstrap, given) {
        (Some(b), _) => (b.to_owned(), "bootstrap"),
        (None, Some(b)) => (b, "properties"),
        (None, None) => match std::env::var("KSEEK_BOOTSTRAP") {
            Ok(b) if !b.trim().is_empty() => (b, "KSEEK_BOOTSTRAP"),
            _ => ("localhost:9092".to_owned(), "the default"),
        },
    };
    props
        .set("bootstrap.servers", &servers, origin)
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    props
        .apply(&mut config)
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    Ok((config, props))
}

/// `read_uncommitted` or `read_committed`.
pub(crate) fn isolation(text: &str) -> PyResult<IsolationLevel> {
    match text.to_ascii_lowercase().replace('-', "_").as_str() {
        "read_uncommitted" => Ok(IsolationLevel::READ_UNCOMMITTED),
        "read_committed" => Ok(IsolationLevel::READ_COMMITTED),
        _ => Err(ConfigError::new_err(format!(
            "isolation {text:?} is not read_uncommitted or read_committed"
        ))),
    }
}

/// A topic name or a list of them.
pub(crate) fn topic_list(topics: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let names: Vec<String> = if let Ok(s) = topics.cast::<PyString>() {
        vec![s.to_str()?.to_owned()]
    } else {
        topics
            .extract()
            .map_err(|_| ConfigError::new_err("topics must be a name or a list of names"))?
    };
    if names.is_empty() || names.iter().any(|n| n.trim().is_empty()) {
        return Err(ConfigError::new_err(
            "topic names can't be empty. Give a topic name",
        ));
    }
    Ok(names)
}

/// A position given as text (the command line's forms) or as epoch milliseconds.
pub(crate) fn position_of(what: &str, value: &Bound<'_, PyAny>, now: i64) -> PyResult<Position> {
    if let Ok(ms) = value.extract::<i64>() {
        if value.extract::<bool>().is_err() {
            return if ms >= 0 {
                Ok(Position::Time(ms))
            } else {
                Err(ConfigError::new_err(format!(
                    "invalid {what} {ms}: epoch milliseconds can't be negative"
                )))
            };
        }
    }
    let text: String = value.extract().map_err(|_| {
        ConfigError::new_err(format!(
            "{what} must be a position (text such as \"earliest\" or \"-1h\") or epoch milliseconds"
        ))
    })?;
    position::parse(&text, now)
        .map_err(|why| ConfigError::new_err(format!("invalid {what} {text:?}: {why}")))
}

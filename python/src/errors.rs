//! The module's exceptions, and Rust errors as one-line Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    kseek,
    KseekError,
    PyException,
    "An error of kseek; its message is one line that says what failed and why."
);
create_exception!(
    kseek,
    ConfigError,
    KseekError,
    "A bad argument, position, property or split: nothing was sent to Kafka."
);
create_exception!(
    kseek,
    KafkaError,
    KseekError,
    "Kafka, the network or the data failed the read (or resolving it)."
);

/// An error and its sources on one line, after what was being done.
pub(crate) fn one_line(doing: &str, error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("{doing}: {error}");
    let mut source = error.source();
    while let Some(e) = source {
        let more = e.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = e.source();
    }
    text.replace('\n', " ")
}

/// A failure of Kafka, the network or the data, as [`KafkaError`] (or [`ConfigError`] for a
/// setting or a read the library refused before sending it).
pub(crate) fn kafka_error(doing: &str, error: &kseek::Error) -> PyErr {
    let message = if error.to_string().starts_with(doing) {
        one_line("", error).trim_start_matches(": ").to_owned()
    } else {
        one_line(doing, error)
    };
    match error.kind() {
        kseek::ErrorKind::Config { .. }
        | kseek::ErrorKind::InvalidSpec { .. }
        | kseek::ErrorKind::NoBootstrapServers => ConfigError::new_err(message),
        _ => KafkaError::new_err(message),
    }
}

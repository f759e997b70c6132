//! Diagnostics through `tracing` when the `tracing` feature is on (the default), and nothing
//! at all when it is off: no `tracing` dependency, no call sites, no formatting code.
//!
//! The macros take `tracing`'s own syntax and forward it unchanged (`warning!` is
//! `tracing::warn!`: `warn` is taken by the lint attribute).

#[cfg(feature = "tracing")]
macro_rules! debug {
    ($($t:tt)*) => { ::tracing::debug!($($t)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! debug {
    ($($t:tt)*) => {};
}

#[cfg(feature = "tracing")]
macro_rules! info {
    ($($t:tt)*) => { ::tracing::info!($($t)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! info {
    ($($t:tt)*) => {};
}

#[cfg(feature = "tracing")]
macro_rules! warning {
    ($($t:tt)*) => { ::tracing::warn!($($t)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! warning {
    ($($t:tt)*) => {};
}

#[cfg(feature = "tracing")]
macro_rules! trace {
    ($($t:tt)*) => { ::tracing::trace!($($t)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! trace {
    ($($t:tt)*) => {};
}

pub(crate) use {debug, info, trace, warning};

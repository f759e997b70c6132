//! Diagnostics through `tracing` when the `tracing` feature is on (the default), and nothing
//! at all when it is off: no `tracing` dependency, no call sites, no formatting code.
//!
//! The macros take `tracing`'s own syntax: with the feature on they are `tracing`'s own
//! (`warning!` is `tracing::warn!`: `warn` is taken by the lint attribute), with it off they
//! expand to nothing.

#[cfg(feature = "tracing")]
pub(crate) use ::tracing::{debug, info, trace, warn as warning};

/// With the feature off, every level is this: nothing.
#[cfg(not(feature = "tracing"))]
macro_rules! nothing {
    ($($t:tt)*) => {};
}

#[cfg(not(feature = "tracing"))]
pub(crate) use {nothing as debug, nothing as info, nothing as trace, nothing as warning};

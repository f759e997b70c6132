//! The process's tokio runtime, and blocking on it from Python with Ctrl-C still heard.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::errors::KseekError;

/// How often a blocked call looks for Ctrl-C.
pub(crate) const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// The process's runtime, made again after a fork (a forked child has none of the parent's
/// threads: Spark's Python workers are forked).
pub(crate) fn runtime() -> PyResult<Arc<Runtime>> {
    static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some((owner, rt)) = slot.as_ref() {
        if *owner == pid {
            return Ok(rt.clone());
        }
    }
    if let Some((_, inherited)) = slot.take() {
        // Its threads are in the parent: dropping it would wait for them forever.
        std::mem::forget(inherited);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kseek")
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| KseekError::new_err(format!("cannot start kseek's runtime: {e}")))?;
    *slot = Some((pid, rt.clone()));
    Ok(rt)
}

/// Runs `fut` to its end without the GIL, looking for Ctrl-C (and other signals Python
/// handles) every [`SIGNAL_POLL`]: a handler's exception (KeyboardInterrupt) ends the wait,
/// dropping `fut`.
pub(crate) fn block_on<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    py.detach(|| {
        rt.block_on(async move {
            let mut fut = std::pin::pin!(fut);
            loop {
                match tokio::time::timeout(SIGNAL_POLL, fut.as_mut()).await {
                    Ok(out) => return Ok(out),
                    Err(_) => Python::attach(|py| py.check_signals())?,
                }
            }
        })
    })
}

//! The one async runtime: every caller (the command line, the TUI, attach's
//! engine check) builds it here, the same way.

/// Each worker thread's stack.
const WORKER_STACK: usize = 16 * 1024 * 1024;

/// A multi-threaded tokio runtime with I/O and timers enabled.
pub fn runtime() -> crate::error::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A candidate's layers are one deep future (gate, evidence runs,
        // cross-tests); unoptimised builds need more than the default 2 MiB.
        .thread_stack_size(WORKER_STACK)
        .build()
        .map_err(|e| crate::Error::Runtime(format!("starting the async runtime: {e}")))
}

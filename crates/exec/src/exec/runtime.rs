//! The one async runtime: every caller (the command line, the TUI, attach's
//! engine check) builds it here, the same way.

/// A multi-threaded tokio runtime with I/O and timers enabled.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))
}

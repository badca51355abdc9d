//! Waiting on an event, never on luck: every poll in the tests has a
//! deadline and, when it passes, says what it waited for.

use std::time::{Duration, Instant};

/// How often a wait looks again.
const EVERY: Duration = Duration::from_millis(20);

/// Wait until `cond` holds, at most `within`; a test failure naming
/// `what` when it never does.
pub fn until(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {within:?} waiting until {what}"
        );
        std::thread::sleep(EVERY);
    }
}

/// [`until`] on the tokio runtime.
pub async fn until_async(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {within:?} waiting until {what}"
        );
        tokio::time::sleep(EVERY).await;
    }
}

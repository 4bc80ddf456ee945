//! How long the AM rides out an RM that does not answer.

use std::time::Duration;

/// Allocate calls that failed in a row without an answer from the RM. A short outage (an RM
/// restart) is ridden out, requests kept; a long one ends the AM with an error (exit 1, no
/// unregistration: YARN can start another attempt when the RM is back), rather than
/// heartbeating into the void for ever.
#[derive(Debug, Clone)]
pub struct RmOutage {
    since_ms: Option<u64>,
    failures: u32,
    min_failures: u32,
    max_time_ms: u64,
}

impl RmOutage {
    /// Give up after `min_failures` failed calls in a row spanning at least `max_time`.
    pub fn new(min_failures: u32, max_time: Duration) -> Self {
        Self {
            since_ms: None,
            failures: 0,
            min_failures,
            max_time_ms: max_time.as_millis() as u64,
        }
    }

    /// An allocate call failed at `now_ms`. `Some(why)` when it is time to give up.
    pub fn failed(&mut self, now_ms: u64, error: &str) -> Option<String> {
        let since = *self.since_ms.get_or_insert(now_ms);
        self.failures += 1;
        let down = now_ms.saturating_sub(since);
        (self.failures >= self.min_failures && down >= self.max_time_ms).then(|| {
            format!(
                "no answer for {} s ({} allocate calls failed in a row); last error: {error}",
                down / 1000,
                self.failures
            )
        })
    }

    /// The RM answered.
    pub fn answered(&mut self) {
        self.since_ms = None;
        self.failures = 0;
    }
}

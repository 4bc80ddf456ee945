//! How long to wait between allocate calls.
//!
//! While requests are outstanding we poll fast (YARN hands out grants on the heartbeat after
//! it schedules them), starting at `initial` and doubling up to `max`, as Spark does with
//! `spark.yarn.scheduler.initial-allocation.interval` (200 ms) and
//! `spark.yarn.scheduler.heartbeat.interval-ms` (3 s). With nothing outstanding we wait the
//! full `max`. A new demand resets to `initial`, so the first ask goes out at once.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Interval {
    initial: Duration,
    max: Duration,
    next_fast: Duration,
}

impl Interval {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            next_fast: initial,
        }
    }

    /// The wait after a heartbeat, given whether requests are still outstanding.
    pub fn next(&mut self, pending: bool) -> Duration {
        if !pending {
            self.next_fast = self.initial;
            return self.max;
        }
        let wait = self.next_fast;
        self.next_fast = (self.next_fast * 2).min(self.max);
        wait
    }

    /// Something changed (new demand, killed executors): poll soon again.
    pub fn reset(&mut self) {
        self.next_fast = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_while_pending_and_idles_at_max() {
        let ms = Duration::from_millis;
        let mut i = Interval::new(ms(200), ms(3000));
        let waits: Vec<_> = (0..6).map(|_| i.next(true)).collect();
        assert_eq!(
            waits,
            [ms(200), ms(400), ms(800), ms(1600), ms(3000), ms(3000)]
        );
        assert_eq!(i.next(false), ms(3000));
        assert_eq!(i.next(true), ms(200));
        i.next(true);
        i.reset();
        assert_eq!(i.next(true), ms(200));
    }
}

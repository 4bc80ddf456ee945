//! How long to wait between allocate calls.
//!
//! While requests are outstanding we poll fast (YARN hands out grants on the heartbeat after
//! it schedules them), starting at `initial` and doubling up to `max`, as Spark does with
//! `spark.yarn.scheduler.initial-allocation.interval` (200 ms) and
//! `spark.yarn.scheduler.heartbeat.interval-ms` (3 s). With nothing outstanding we wait the
//! full `max`. A new demand resets to `initial`, so the first ask goes out at once.
//!
//! Before the doubling, [`Interval::with_steady`] keeps `initial` for a few calls: the RM
//! hands out grants on NodeManager heartbeats (500 ms on the test cluster, one second by
//! default), so on an idle cluster a grant is ready within one NM interval of the ask, and
//! it waits at the RM until our next call. Spark's 200, 400, 800 ms left the first grant
//! there for up to 0.4 s when it missed the 0.2 s call (as the AM's start-up timeline showed); the AM
//! polls every 100 ms for one NM interval instead (`AmCore::with_grant_window`: 6 calls in
//! the first 0.6 s on the test cluster where Spark makes 2).

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Interval {
    initial: Duration,
    max: Duration,
    next_fast: Duration,
    /// Waits of `initial` before the doubling starts (at least 1).
    steady: u32,
    /// Waits of `initial` left since the last reset.
    steady_left: u32,
}

impl Interval {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            next_fast: initial,
            steady: 1,
            steady_left: 1,
        }
    }

    /// `waits` waits of `initial` (at least 1) before the doubling starts.
    pub fn with_steady(mut self, waits: u32) -> Self {
        self.steady = waits.max(1);
        self.steady_left = self.steady;
        self
    }

    /// The wait after a heartbeat, given whether requests are still outstanding.
    pub fn next(&mut self, pending: bool) -> Duration {
        if !pending {
            self.reset();
            return self.max;
        }
        if self.steady_left > 1 {
            self.steady_left -= 1;
            return self.initial;
        }
        let wait = self.next_fast;
        self.next_fast = (self.next_fast * 2).min(self.max);
        wait
    }

    /// Something changed (new demand, killed executors): poll soon again.
    pub fn reset(&mut self) {
        self.next_fast = self.initial;
        self.steady_left = self.steady;
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

    #[test]
    fn steady_waits_come_before_the_doubling_and_again_after_a_reset() {
        let ms = Duration::from_millis;
        let mut i = Interval::new(ms(100), ms(3000)).with_steady(3);
        let waits: Vec<_> = (0..7).map(|_| i.next(true)).collect();
        assert_eq!(
            waits,
            [
                ms(100),
                ms(100),
                ms(100),
                ms(200),
                ms(400),
                ms(800),
                ms(1600)
            ]
        );
        i.reset();
        assert_eq!(i.next(true), ms(100));
        assert_eq!(i.next(true), ms(100));
        assert_eq!(i.next(false), ms(3000), "nothing pending: the idle wait");
        let again: Vec<_> = (0..4).map(|_| i.next(true)).collect();
        assert_eq!(again, [ms(100), ms(100), ms(100), ms(200)]);
        // 0 is taken as 1: Spark's plain doubling.
        let mut plain = Interval::new(ms(200), ms(3000)).with_steady(0);
        assert_eq!((plain.next(true), plain.next(true)), (ms(200), ms(400)));
    }
}

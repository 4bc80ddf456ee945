//! [`AmCore`](super::AmCore)'s deadlines: one table, one slot per kind, of which
//! `poll_timeout` is the earliest armed.

/// The kinds of deadline [`AmCore`](super::AmCore) keeps, one slot each in [`Timers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// The next allocate call is due (disarmed while one is in flight or the AM is ending).
    Heartbeat,
    /// The embedded driver's next tick (its own deadline, no sooner than
    /// `MIN_TICK_GAP_MS` after the last tick).
    DriverTick,
    /// No executor of the embedded job can have been silent for the limit before this.
    Silence,
    /// An ending AM stops waiting for its executors to hear "shut down".
    Drain,
}

impl Timer {
    const ALL: [Timer; 4] = [
        Timer::Heartbeat,
        Timer::DriverTick,
        Timer::Silence,
        Timer::Drain,
    ];
}

/// One deadline (ms since the AM started) per [`Timer`] kind; `None`: not armed.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    at: [Option<u64>; Timer::ALL.len()],
}

impl Timers {
    pub fn get(&self, t: Timer) -> Option<u64> {
        self.at[t as usize]
    }

    pub fn set(&mut self, t: Timer, at: Option<u64>) {
        self.at[t as usize] = at;
    }

    /// Whether `t` is armed and has come due at `now_ms`.
    pub fn expired(&self, t: Timer, now_ms: u64) -> bool {
        self.get(t).is_some_and(|at| at <= now_ms)
    }

    /// The earliest armed deadline.
    pub fn next(&self) -> Option<u64> {
        self.at.iter().flatten().copied().min()
    }
}

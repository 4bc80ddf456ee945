//! The cluster gate: the tests of this binary share one YARN cluster and run concurrently, so
//! each cluster test first takes its turn here, for its whole length.
//!
//! - [`shared`]: the test only adds its own apps, files and processes, and asserts on them;
//!   up to [`shared_limit`] such tests run side by side (more would only queue in YARN, whose
//!   three small nodes hold a few apps at once, and run into their tests' time limits).
//! - [`alone`]: the test disturbs the cluster or needs it to itself: it restarts, stops,
//!   pauses, kills or decommissions a daemon or node, fills the nodes, labels a node, switches
//!   the profile, waits for an empty cluster, asserts where YARN places containers across the
//!   nodes, or measures latencies that other tests' load would skew. It waits until no shared
//!   test runs or waits, and no test starts while it runs.
//!
//! Shared tests go first: an alone test waits while any shared test is running or waiting for
//! a slot. `scripts/test.sh` gives the harness a thread for every test, so every test is
//! waiting here from the start: the shared ones run `shared_limit` at a time, then the alone
//! ones one after another, and the run takes about the alone tests' sum plus the shared
//! tests' share of the slots. (With the harness's first-come order instead, each alone test
//! cut the shared ones into small batches that could not overlap.) With fewer threads the
//! gate is as safe, only slower; an alone test still runs once the shared ones before it end.
//!
//! Waiting blocks the test's thread: the harness runs each test on a thread of its own, and
//! the gate is the first thing a test does, before its runtime has any other work.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct State {
    shared_running: usize,
    shared_waiting: usize,
    alone_running: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    shared_running: 0,
    shared_waiting: 0,
    alone_running: false,
});
static CHANGED: Condvar = Condvar::new();

fn state() -> MutexGuard<'static, State> {
    // A test that panicked while holding the lock left the counts consistent (every change
    // is one statement).
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many shared tests may run at once: `YARN_AM_SHARED_TESTS`, else 4.
pub fn shared_limit() -> usize {
    std::env::var("YARN_AM_SHARED_TESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(4)
}

/// A turn beside other shared tests (since when); ends when dropped.
#[must_use = "the turn ends when dropped"]
pub struct Shared(Instant);

/// A turn with the cluster to itself (since when); ends when dropped.
#[must_use = "the turn ends when dropped"]
pub struct Alone(Instant);

/// Waits for a turn beside the other shared tests.
pub fn shared() -> Shared {
    let asked = Instant::now();
    let limit = shared_limit();
    let mut s = state();
    s.shared_waiting += 1;
    while s.alone_running || s.shared_running >= limit {
        s = CHANGED.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    s.shared_waiting -= 1;
    s.shared_running += 1;
    drop(s);
    waited("shared", asked.elapsed());
    Shared(Instant::now())
}

/// Waits until the cluster is this test's alone.
pub fn alone() -> Alone {
    let asked = Instant::now();
    let mut s = state();
    while s.alone_running || s.shared_running > 0 || s.shared_waiting > 0 {
        s = CHANGED.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    s.alone_running = true;
    drop(s);
    waited("alone", asked.elapsed());
    Alone(Instant::now())
}

impl Drop for Shared {
    fn drop(&mut self) {
        held("shared", self.0.elapsed());
        state().shared_running -= 1;
        CHANGED.notify_all();
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        held("alone", self.0.elapsed());
        state().alone_running = false;
        CHANGED.notify_all();
    }
}

/// Says how long a test queued for its turn, and how long it held it (each test runs on a
/// thread named after it), so that a run's log (`--nocapture`) shows where the time went.
fn waited(kind: &str, wait: Duration) {
    if wait >= Duration::from_secs(1) {
        say(&format!(
            "waited {:.1} s for its {kind} turn",
            wait.as_secs_f64()
        ));
    }
}

fn held(kind: &str, turn: Duration) {
    say(&format!("held its {kind} turn {:.1} s", turn.as_secs_f64()));
}

fn say(what: &str) {
    let me = std::thread::current();
    eprintln!("[gate] {} {what}", me.name().unwrap_or("?"));
}

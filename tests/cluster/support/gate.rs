//! The cluster gate: the tests of this binary share one YARN cluster and run concurrently
//! (`scripts/test.sh` gives the harness several threads), so each cluster test first takes
//! its turn here, for its whole length.
//!
//! - [`shared`]: the test only adds its own apps, files and processes, and asserts on them;
//!   any number of such tests run side by side (YARN queues what does not fit).
//! - [`alone`]: the test disturbs the cluster or needs it to itself: it restarts, stops,
//!   pauses, kills or decommissions a daemon or node, fills the nodes, labels a node, switches
//!   the profile, waits for an empty cluster, asserts where YARN places containers across the
//!   nodes, or measures latencies that other tests' load would skew. It waits until every
//!   running test has ended, and no test starts while it runs.
//!
//! The lock is tokio's, which is fair: once an `alone` test waits, later `shared` tests queue
//! behind it, so it is not starved by a stream of readers. A test that panics drops its turn
//! like any other value (no poisoning).

use std::time::{Duration, Instant};

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static GATE: RwLock<()> = RwLock::const_new(());

/// A turn beside other shared tests.
pub type Shared = RwLockReadGuard<'static, ()>;
/// A turn with the cluster to itself.
pub type Alone = RwLockWriteGuard<'static, ()>;

/// Waits for a turn beside the other shared tests.
pub async fn shared() -> Shared {
    let asked = Instant::now();
    let turn = GATE.read().await;
    waited("shared", asked.elapsed());
    turn
}

/// Waits until the cluster is this test's alone.
pub async fn alone() -> Alone {
    let asked = Instant::now();
    let turn = GATE.write().await;
    waited("alone", asked.elapsed());
    turn
}

/// [`shared`] for a plain `#[test]` (no runtime to await in).
pub fn shared_blocking() -> Shared {
    let asked = Instant::now();
    let turn = GATE.blocking_read();
    waited("shared", asked.elapsed());
    turn
}

/// [`alone`] for a plain `#[test]` (no runtime to await in).
pub fn alone_blocking() -> Alone {
    let asked = Instant::now();
    let turn = GATE.blocking_write();
    waited("alone", asked.elapsed());
    turn
}

/// Says how long a test queued for its turn (each test runs on a thread named after it), so
/// that a run's log shows where the time went.
fn waited(kind: &str, wait: Duration) {
    if wait >= Duration::from_secs(1) {
        let me = std::thread::current();
        eprintln!(
            "[gate] {} waited {:.1} s for its {kind} turn",
            me.name().unwrap_or("?"),
            wait.as_secs_f64()
        );
    }
}

//! `GET /metrics`: the state as Prometheus gauges (text format 0.0.4), for machines. Like
//! every `/v1` call it needs the driver's secret.

use std::fmt::Write;

use yarn_am_wire::driver_api::{ExecutorState, StateView};

/// The gauges for this state, and the process's memory and descriptors.
pub fn metrics(s: &StateView) -> String {
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, samples: &[(&str, u64)]| {
        let _ = writeln!(
            out,
            "# HELP yarn_am_{name} {help}\n# TYPE yarn_am_{name} gauge"
        );
        for (labels, v) in samples {
            let _ = writeln!(out, "yarn_am_{name}{labels} {v}");
        }
    };
    gauge(
        "target_executors",
        "Executors the driver wants.",
        &[("", s.demand.target_executors.into())],
    );
    gauge(
        "executors",
        "Executors by state.",
        &[
            ("{state=\"starting\"}", s.starting.into()),
            ("{state=\"running\"}", s.running.into()),
        ],
    );
    gauge(
        "pending_requests",
        "Outstanding container requests by placement.",
        &[
            ("{placement=\"locality\"}", s.pending.locality.into()),
            ("{placement=\"any\"}", s.pending.any_host.into()),
        ],
    );
    gauge(
        "executor_failures",
        "Executor exits that count against the application.",
        &[("", s.executor_failures.into())],
    );
    if let Some(rss) = resident_bytes() {
        gauge(
            "process_resident_memory_bytes",
            "Resident memory of the ApplicationMaster process.",
            &[("", rss)],
        );
    }
    if let Some(fds) = super::server::open_fds() {
        gauge(
            "open_fds",
            "File descriptors the ApplicationMaster process has open.",
            &[("", fds)],
        );
    }
    let mut by_level = [0u64; 3];
    for e in s
        .executors
        .iter()
        .filter(|e| e.state == ExecutorState::Running)
    {
        by_level[e.locality as usize] += 1;
    }
    gauge(
        "running_executors_by_locality",
        "Running executors by the level their container matched at.",
        &[
            ("{level=\"node\"}", by_level[0]),
            ("{level=\"rack\"}", by_level[1]),
            ("{level=\"any\"}", by_level[2]),
        ],
    );
    out
}

/// VmRSS of this process, from /proc (Linux only; `None` elsewhere).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_count_open_descriptors() {
        let text = metrics(&StateView::default());
        let line = text
            .lines()
            .find(|l| l.starts_with("yarn_am_open_fds "))
            .expect(&text);
        let n: u64 = line.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(n >= 3, "{line}");
    }
}

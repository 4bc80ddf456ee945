//! Why a container ended, and whether the application should be blamed for it.
//!
//! An app gives up after too many executor failures, so the count has to leave out what was
//! not the executor's doing: preemption, a lost or disk-failed node, kills by the AM or RM.
//! Memory-limit kills do count (the executor asked for too little overhead), as do crashes
//! with an ordinary exit code. Containers we released ourselves never reach this: the
//! tracker recognises them first.

use std::fmt;

/// YARN's `ContainerExitStatus` values.
pub mod codes {
    pub const SUCCESS: i32 = 0;
    pub const INVALID: i32 = -1000;
    pub const ABORTED: i32 = -100;
    pub const DISKS_FAILED: i32 = -101;
    pub const PREEMPTED: i32 = -102;
    pub const KILLED_EXCEEDED_VMEM: i32 = -103;
    pub const KILLED_EXCEEDED_PMEM: i32 = -104;
    pub const KILLED_BY_APPMASTER: i32 = -105;
    pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
    pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
    pub const KILLED_BY_CONTAINER_SCHEDULER: i32 = -108;
    pub const KILLED_FOR_EXCESS_LOGS: i32 = -109;
}

/// What ended a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitCause {
    /// Exit status 0: the executor process ended on its own.
    Exited,
    /// Taken back by the scheduler for another queue.
    Preempted,
    /// Aborted: typically the node was lost or the container was released.
    Aborted,
    /// The node's local disks failed.
    DisksFailed,
    /// Killed for exceeding its virtual memory limit.
    VirtualMemory,
    /// Killed for exceeding its physical memory limit.
    PhysicalMemory,
    KilledByAppMaster,
    KilledByResourceManager,
    KilledAfterAppCompletion,
    /// Opportunistic container killed to make room.
    KilledByContainerScheduler,
    /// The container wrote more logs than allowed.
    ExcessLogs,
    /// YARN did not know the status.
    Invalid,
    /// Any other exit code: the process failed.
    Failed(i32),
}

impl ExitCause {
    pub fn from_status(status: i32) -> ExitCause {
        use codes::*;
        match status {
            SUCCESS => ExitCause::Exited,
            PREEMPTED => ExitCause::Preempted,
            ABORTED => ExitCause::Aborted,
            DISKS_FAILED => ExitCause::DisksFailed,
            KILLED_EXCEEDED_VMEM => ExitCause::VirtualMemory,
            KILLED_EXCEEDED_PMEM => ExitCause::PhysicalMemory,
            KILLED_BY_APPMASTER => ExitCause::KilledByAppMaster,
            KILLED_BY_RESOURCEMANAGER => ExitCause::KilledByResourceManager,
            KILLED_AFTER_APP_COMPLETION => ExitCause::KilledAfterAppCompletion,
            KILLED_BY_CONTAINER_SCHEDULER => ExitCause::KilledByContainerScheduler,
            KILLED_FOR_EXCESS_LOGS => ExitCause::ExcessLogs,
            INVALID => ExitCause::Invalid,
            other => ExitCause::Failed(other),
        }
    }

    /// Does this exit count towards the application's executor-failure limit?
    pub fn counts_against_app(self) -> bool {
        match self {
            ExitCause::Exited
            | ExitCause::Preempted
            | ExitCause::Aborted
            | ExitCause::DisksFailed
            | ExitCause::KilledByAppMaster
            | ExitCause::KilledByResourceManager
            | ExitCause::KilledAfterAppCompletion
            | ExitCause::KilledByContainerScheduler => false,
            ExitCause::VirtualMemory
            | ExitCause::PhysicalMemory
            | ExitCause::ExcessLogs
            | ExitCause::Invalid
            | ExitCause::Failed(_) => true,
        }
    }

    /// Is the node itself suspect (worth excluding after repeated failures)? Only for failures
    /// that say nothing about the cluster's own actions.
    pub fn suspects_node(self) -> bool {
        matches!(self, ExitCause::Invalid | ExitCause::Failed(_))
    }
}

impl fmt::Display for ExitCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitCause::Exited => f.write_str("the executor exited on its own (status 0)"),
            ExitCause::Preempted => f.write_str("preempted by the scheduler (-102)"),
            ExitCause::Aborted => f.write_str("aborted, e.g. its node was lost (-100)"),
            ExitCause::DisksFailed => f.write_str("its node's disks failed (-101)"),
            ExitCause::VirtualMemory => f.write_str(
                "killed for exceeding its virtual memory limit (-103); consider more memory overhead",
            ),
            ExitCause::PhysicalMemory => f.write_str(
                "killed for exceeding its physical memory limit (-104); consider more memory overhead",
            ),
            ExitCause::KilledByAppMaster => f.write_str("killed by the ApplicationMaster (-105)"),
            ExitCause::KilledByResourceManager => f.write_str("killed by the ResourceManager (-106)"),
            ExitCause::KilledAfterAppCompletion => f.write_str("killed after the application completed (-107)"),
            ExitCause::KilledByContainerScheduler => f.write_str("killed by the container scheduler (-108)"),
            ExitCause::ExcessLogs => f.write_str("killed for writing too many logs (-109)"),
            ExitCause::Invalid => f.write_str("ended with an unknown status (-1000)"),
            ExitCause::Failed(126) => f.write_str(
                "the executor's command could not be run (exit code 126: not executable)",
            ),
            ExitCause::Failed(127) => f.write_str(
                "the executor's command was not found (exit code 127): check the command and PATH on the node",
            ),
            ExitCause::Failed(137) => f.write_str(
                "the executor was killed by SIGKILL (exit code 137), often the kernel's out-of-memory killer or a memory cgroup: consider more memory",
            ),
            ExitCause::Failed(143) => {
                f.write_str("the executor was killed by SIGTERM (exit code 143)")
            }
            ExitCause::Failed(code) => write!(f, "the executor failed with exit code {code}"),
        }
    }
}

/// The verdict on one completed container, for the driver and the failure count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitVerdict {
    pub cause: ExitCause,
    pub counts_against_app: bool,
    /// One line a human can act on, with YARN's diagnostics appended when there are any.
    pub reason: String,
}

/// Classifies a completed container we did not release ourselves.
pub fn classify(exit_status: i32, diagnostics: &str) -> ExitVerdict {
    let cause = ExitCause::from_status(exit_status);
    let diagnostics = diagnostics.trim();
    let reason = if diagnostics.is_empty() {
        cause.to_string()
    } else {
        format!("{cause}: {diagnostics}")
    };
    ExitVerdict {
        cause,
        counts_against_app: cause.counts_against_app(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_side_exits_do_not_count() {
        for s in [0, -100, -101, -102, -105, -106, -107, -108] {
            assert!(!classify(s, "").counts_against_app, "status {s}");
        }
    }

    #[test]
    fn app_side_exits_count() {
        for s in [-103, -104, -109, -1000, 1, 137, 143] {
            assert!(classify(s, "").counts_against_app, "status {s}");
        }
    }

    #[test]
    fn reasons_are_specific() {
        let v = classify(
            codes::KILLED_EXCEEDED_PMEM,
            "Container killed: 2.1 GB of 2 GB physical memory used",
        );
        assert_eq!(v.cause, ExitCause::PhysicalMemory);
        assert!(v.reason.contains("physical memory limit"));
        assert!(v.reason.ends_with("2.1 GB of 2 GB physical memory used"));
        assert_eq!(
            classify(1, "").reason,
            "the executor failed with exit code 1"
        );
        assert!(classify(-102, "").reason.contains("preempted"));
        assert!(classify(127, "").reason.contains("not found"));
        assert!(classify(137, "").reason.contains("out-of-memory"));
        assert!(classify(143, "").reason.contains("SIGTERM"));
    }

    #[test]
    fn only_plain_failures_suspect_the_node() {
        assert!(ExitCause::from_status(1).suspects_node());
        assert!(ExitCause::from_status(codes::INVALID).suspects_node());
        assert!(!ExitCause::from_status(codes::PREEMPTED).suspects_node());
        assert!(!ExitCause::from_status(codes::KILLED_EXCEEDED_PMEM).suspects_node());
    }
}

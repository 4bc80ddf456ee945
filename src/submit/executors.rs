//! The executors a submit asks for: their container sizes (checked against the cluster's
//! maximum before anything is staged), their kinds and the host exclusion settings.

use anyhow::Context;
use yarn_client::rest::Resource;

use super::limits;
use crate::cli::SubmitArgs;
use yarn_am_wire::spec::ExecutorKind;

/// The executors' container size: the job's, else the flags'.
pub(super) fn executor_size(
    args: &SubmitArgs,
    job: Option<&yarn_am_core::driver::job::Job>,
) -> anyhow::Result<Resource> {
    Ok(match job {
        Some(j) => Resource {
            memory: i64::from(j.executor.memory_mb),
            vcores: i32::try_from(j.executor.cores).context("executor.cores above i32::MAX")?,
        },
        None => Resource {
            memory: args.executor_memory,
            vcores: args.executor_vcores,
        },
    })
}

/// The AM's and the executors' container sizes, with the flag or job field that sets each.
pub(super) fn container_sizes(
    args: &SubmitArgs,
    job: Option<&yarn_am_core::driver::job::Job>,
) -> anyhow::Result<Vec<limits::Asked>> {
    let am = limits::Asked {
        who: "AM".into(),
        size: Resource {
            memory: args.am_memory,
            vcores: args.am_vcores,
        },
        memory_flag: "--am-memory".into(),
        vcores_flag: "--am-vcores".into(),
    };
    let (memory_flag, vcores_flag) = match job {
        Some(_) => (
            "executor.memory_mb in the job file",
            "executor.cores in the job file",
        ),
        None => ("--executor-memory", "--executor-vcores"),
    };
    let executor = limits::Asked {
        who: "executor".into(),
        size: executor_size(args, job)?,
        memory_flag: memory_flag.into(),
        vcores_flag: vcores_flag.into(),
    };
    let mut all = vec![am, executor];
    for k in executor_kinds(args, job)? {
        let (memory_flag, vcores_flag) = match job {
            Some(_) => (
                format!("kinds.{}.memory_mb in the job file", k.name),
                format!("kinds.{}.cores in the job file", k.name),
            ),
            None => (
                format!("--executor-kind {}:memory=", k.name),
                format!("--executor-kind {}:vcores=", k.name),
            ),
        };
        all.push(limits::Asked {
            who: format!("executor kind {}", k.name),
            size: Resource {
                memory: k.memory_mb,
                vcores: k.vcores,
            },
            memory_flag,
            vcores_flag,
        });
    }
    Ok(all)
}

/// The host exclusion settings when any flag sets one (the others keep their defaults).
pub(super) fn host_exclusion(args: &SubmitArgs) -> Option<yarn_am_wire::spec::HostExclusion> {
    use yarn_am_core::am::held_back as d;
    if args.host_exclusion_failures.is_none()
        && args.host_exclusion_window.is_none()
        && args.host_exclusion_timeout.is_none()
    {
        return None;
    }
    Some(yarn_am_wire::spec::HostExclusion {
        max_failures: args
            .host_exclusion_failures
            .unwrap_or(d::DEFAULT_MAX_FAILURES_PER_HOST),
        window_ms: args
            .host_exclusion_window
            .map_or(d::DEFAULT_FAILURE_WINDOW_MS, |s| s * 1000),
        exclude_ms: args
            .host_exclusion_timeout
            .map_or(d::DEFAULT_EXCLUDE_MS, |s| s * 1000),
    })
}

/// The app's further executor kinds: the job file's `kinds`, else `--executor-kind`s (their
/// commands as typed, not yet staged).
pub(super) fn executor_kinds(
    args: &SubmitArgs,
    job: Option<&yarn_am_core::driver::job::Job>,
) -> anyhow::Result<Vec<ExecutorKind>> {
    let Some(j) = job else {
        let mut seen = std::collections::HashSet::new();
        if let Some(k) = args.executor_kind.iter().find(|k| !seen.insert(&k.name)) {
            anyhow::bail!("--executor-kind {} is given twice", k.name);
        }
        if let Some(max) = args.max_executor_kinds {
            let declared = 1 + args.executor_kind.len();
            if (max as usize) < declared {
                anyhow::bail!(
                    "--max-executor-kinds {max} is fewer than the {declared} kinds the app starts with (the default and each --executor-kind)"
                );
            }
        }
        return Ok(args.executor_kind.clone());
    };
    if !args.executor_kind.is_empty() {
        anyhow::bail!("--executor-kind does not apply to a job: declare the job file's `kinds`");
    }
    if args.max_executor_kinds.is_some() {
        anyhow::bail!(
            "--max-executor-kinds does not apply to a job: a job's kinds are all in its file"
        );
    }
    j.kinds
        .iter()
        .map(|(name, e)| {
            Ok(ExecutorKind {
                name: name.clone(),
                memory_mb: i64::from(e.memory_mb),
                vcores: i32::try_from(e.cores)
                    .with_context(|| format!("kinds.{name}.cores above i32::MAX"))?,
                initial: e.initial_executors.unwrap_or(e.min_executors),
                min: e.min_executors,
                max: e.max_executors,
                node_label: e.node_label.clone(),
                resources: e.resources.clone(),
                command: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::submit::test_support::args;

    /// The reserve must hold the kinds the app starts with, and a job has all its kinds in
    /// its file.
    #[test]
    fn the_kinds_reserve_holds_the_starting_kinds_and_not_with_a_job() {
        let a = args(&[
            "--executor-kind",
            "accel:memory=512,vcores=1",
            "--max-executor-kinds",
            "1",
        ]);
        let err = executor_kinds(&a, None).unwrap_err().to_string();
        assert!(err.contains("fewer than the 2 kinds"), "{err}");
        let a = args(&[
            "--executor-kind",
            "accel:memory=512,vcores=1",
            "--max-executor-kinds",
            "2",
        ]);
        assert_eq!(executor_kinds(&a, None).unwrap().len(), 1);
        let job = yarn_am_core::driver::job::Job::from_json(
            r#"{"name": "j", "executor": {"cores": 1, "memory_mb": 256}, "tasks": [{"id": "a", "command": "true"}]}"#,
        )
        .unwrap();
        let a = args(&["--max-executor-kinds", "4"]);
        let err = executor_kinds(&a, Some(&job)).unwrap_err().to_string();
        assert!(err.contains("does not apply to a job"), "{err}");
        for bad in ["0", "65"] {
            use clap::Parser;
            let argv = ["yarn-am", "submit", "--max-executor-kinds", bad];
            assert!(crate::cli::Cli::try_parse_from(argv).is_err(), "{bad}");
        }
    }
}

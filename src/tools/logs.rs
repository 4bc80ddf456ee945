//! `yarn-am logs`: an application's container logs, found and read through the
//! NodeManagers' web services ([`yarn_client::node_logs`]), narrowed to the AM, one
//! container, one task or one file, once or following what is appended.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use yarn_client::node_logs::NodeLogs;

use crate::cli::LogsArgs;
use crate::tools::rm::rm_rest;
use crate::tools::status::check_app_id;

/// How often `--follow` reads again.
const FOLLOW_EVERY: Duration = Duration::from_secs(2);

/// One log file to print: its container, node and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Target {
    container: String,
    node: String,
    file: String,
}

/// A task's files are `task-<id>.<attempt>.<stdout|stderr>` in its executor's log folder
/// (`crate::executor`): the attempt number of `name` if it is `kind` of task `task`.
fn task_attempt(name: &str, task: &str, kind: &str) -> Option<u32> {
    let rest = name
        .strip_prefix("task-")?
        .strip_prefix(task)?
        .strip_prefix('.')?;
    let (attempt, k) = rest.split_once('.')?;
    (k == kind).then(|| attempt.parse().ok()).flatten()
}

/// What `args` selects now, in container and file order.
async fn targets(logs: &NodeLogs<'_>, args: &LogsArgs) -> anyhow::Result<Vec<Target>> {
    let containers: BTreeMap<String, Option<String>> = if args.am {
        logs.am_containers()
            .await
            .context("asking the RM for the app's attempts")?
            .into_iter()
            .map(|(c, n)| (c, Some(n).filter(|n| !n.is_empty())))
            .collect()
    } else if let Some(c) = &args.container {
        BTreeMap::from([(c.clone(), None)])
    } else {
        logs.containers()
            .await
            .context("finding the app's containers")?
    };
    let mut out = Vec::new();
    let mut task_best: Option<(u32, Target)> = None;
    for (container, known) in &containers {
        let Some((node, files)) = logs.locate(container, known.as_deref()).await else {
            continue;
        };
        for file in files {
            let t = Target {
                container: container.clone(),
                node: node.clone(),
                file: file.clone(),
            };
            if let Some(task) = &args.task {
                let kind = args.file.as_deref().unwrap_or("stdout");
                if let Some(n) = task_attempt(&file, task, kind) {
                    if task_best.as_ref().is_none_or(|(best, _)| n > *best) {
                        task_best = Some((n, t));
                    }
                }
            } else if args.file.as_ref().is_none_or(|f| *f == file) {
                out.push(t);
            }
        }
    }
    if let Some((_, t)) = task_best {
        out.push(t);
    }
    Ok(out)
}

/// What was asked, for messages.
fn asked(args: &LogsArgs) -> String {
    let what = match (&args.task, &args.container, args.am) {
        (Some(t), _, _) => format!("task {t}"),
        (_, Some(c), _) => format!("container {c}"),
        (_, _, true) => "the AM".to_string(),
        _ => "any container".to_string(),
    };
    match &args.file {
        Some(f) => format!("{what} (file {f})"),
        None => what,
    }
}

/// Prints what each target has beyond what was printed before (`printed`: bytes per
/// target read, so it names every file found); headers when more than one file is
/// selected.
async fn print_new(logs: &NodeLogs<'_>, targets: &[Target], printed: &mut BTreeMap<Target, usize>) {
    let headers = targets.len() > 1;
    for t in targets {
        let Ok(text) = logs.read(&t.node, &t.container, &t.file).await else {
            continue;
        };
        let seen = printed.entry(t.clone()).or_insert(0);
        // A file that shrank was replaced (a new attempt's): print it whole.
        let from = if text.len() < *seen { 0 } else { *seen };
        let Some(new) = text.get(from..).filter(|s| !s.is_empty()) else {
            continue;
        };
        if headers {
            println!("==> {}/{} <==", t.container, t.file);
        }
        print!("{new}");
        if headers && !new.ends_with('\n') {
            println!();
        }
        *seen = text.len();
    }
}

pub fn logs(args: LogsArgs) -> anyhow::Result<ExitCode> {
    check_app_id(&args.app.app_id)?;
    let app = args.app.app_id.clone();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.app.rm)?;
        let report = rest
            .app(&app)
            .await
            .with_context(|| format!("asking the RM about {app}"))?;
        let logs = NodeLogs::new(&rest, &app)
            .await
            .context("asking the RM for its NodeManagers")?;
        let mut printed = BTreeMap::new();
        let mut ended = report.is_final();
        loop {
            let targets = targets(&logs, &args).await?;
            print_new(&logs, &targets, &mut printed).await;
            if !args.follow || ended {
                break;
            }
            tokio::time::sleep(FOLLOW_EVERY).await;
            // One more pass after the end, for what was written last.
            ended = rest.app(&app).await.map(|r| r.is_final()).unwrap_or(false);
        }
        if !printed.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "yarn-am: no NodeManager has logs of {} for {app} ({}): a container that has not \
             started has none, the NodeManagers delete them yarn.nodemanager.log.retain-seconds \
             after the app ends, and with log aggregation on they move to HDFS when it ends",
            asked(&args),
            report.state
        );
        Ok(ExitCode::from(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tasks_files_are_told_apart_from_others() {
        assert_eq!(task_attempt("task-t1.0.stdout", "t1", "stdout"), Some(0));
        assert_eq!(task_attempt("task-t1.12.stderr", "t1", "stderr"), Some(12));
        assert_eq!(task_attempt("task-t1.0.stdout", "t1", "stderr"), None);
        assert_eq!(task_attempt("task-t10.0.stdout", "t1", "stdout"), None);
        assert_eq!(task_attempt("task-t1.x.stdout", "t1", "stdout"), None);
        assert_eq!(task_attempt("stdout", "t1", "stdout"), None);
        // A task id with dots is matched whole.
        assert_eq!(task_attempt("task-a.b.3.stdout", "a.b", "stdout"), Some(3));
    }
}

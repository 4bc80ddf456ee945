//! `yarn-am logs`: an application's container logs, narrowed to the AM, one container, one
//! task or one file, once or following what is appended. While the app runs they are read
//! through the NodeManagers' web services ([`yarn_client::node_logs`]); once it has ended
//! with log aggregation on, from the files the NodeManagers wrote to HDFS
//! ([`crate::tools::aggregated_logs`]), after waiting (bounded) for them to be written.
//! Without aggregation, or when it failed, the NodeManagers are asked after the end too.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use yarn_client::node_logs::NodeLogs;
use yarn_client::rest::{AppReport, RmRest};

use crate::cli::LogsArgs;
use crate::cluster::rm::{hadoop_conf, rm_rest};
use crate::tools::aggregated_logs::{self as agg, RemoteLayout};
use crate::tools::status::check_app_id;

/// How often `--follow` reads again.
const FOLLOW_EVERY: Duration = Duration::from_secs(2);

/// One log file to print: its container, where it is (a NodeManager's web address, or the
/// HDFS path of an aggregated file) and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Target {
    container: String,
    node: String,
    file: String,
}

/// Bytes printed so far per (container, file), whatever source they came from: a follow
/// that saw the app end goes on from there in the aggregated file.
type Printed = BTreeMap<(String, String), usize>;

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

/// What `args` selects among `found` (already narrowed to the asked containers), in
/// container and file order: a task's last attempt, or the files named `--file`, or all.
/// A task is found by its file names wherever it ran, so this works the same on the
/// NodeManagers and in the aggregated files, with or without the AM.
fn select(args: &LogsArgs, found: Vec<Target>) -> Vec<Target> {
    if let Some(task) = &args.task {
        let kind = args.file.as_deref().unwrap_or("stdout");
        let best = found
            .into_iter()
            .filter_map(|t| task_attempt(&t.file, task, kind).map(|n| (n, t)))
            .max_by(|(a, x), (b, y)| a.cmp(b).then_with(|| y.cmp(x)));
        return best.map(|(_, t)| t).into_iter().collect();
    }
    found
        .into_iter()
        .filter(|t| args.file.as_ref().is_none_or(|f| *f == t.file))
        .collect()
}

/// The live files `args` selects now, from the NodeManagers.
async fn live_targets(logs: &NodeLogs<'_>, args: &LogsArgs) -> anyhow::Result<Vec<Target>> {
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
    let mut found = Vec::new();
    for (container, known) in &containers {
        let Some((node, files)) = logs.locate(container, known.as_deref()).await else {
            continue;
        };
        found.extend(files.into_iter().map(|file| Target {
            container: container.clone(),
            node: node.clone(),
            file,
        }));
    }
    Ok(select(args, found))
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

/// Prints what `text` has beyond what was printed of its (container, file) before (a
/// shorter text was replaced, by a new attempt's: printed whole); a header first when
/// `headers`.
fn emit(printed: &mut Printed, t: &Target, text: &str, headers: bool) {
    let seen = printed
        .entry((t.container.clone(), t.file.clone()))
        .or_insert(0);
    let from = if text.len() < *seen { 0 } else { *seen };
    // A cut inside a UTF-8 sequence (lossy text differs from the bytes) prints it whole.
    let Some(new) = text.get(from..).or(Some(text)).filter(|s| !s.is_empty()) else {
        return;
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

/// Prints what each live target has beyond what was printed before (`printed` then
/// names every file found); headers when more than one file is selected.
async fn print_live(logs: &NodeLogs<'_>, targets: &[Target], printed: &mut Printed) {
    let headers = targets.len() > 1;
    for t in targets {
        let Ok(text) = logs.read(&t.node, &t.container, &t.file).await else {
            continue;
        };
        emit(printed, t, &text, headers);
    }
}

/// After the end with aggregation on: waits for the NodeManagers to finish, then prints
/// what `args` selects from the app's aggregated files. `Ok(Err(status))`: aggregation did
/// not finish within `--aggregation-wait` (`status` is the last the RM said, for the
/// caller's message); `Ok(Ok(status))` when it did, whatever was found.
async fn print_aggregated(
    rest: &RmRest,
    logs: &NodeLogs<'_>,
    args: &LogsArgs,
    report: &AppReport,
    printed: &mut Printed,
) -> anyhow::Result<Result<String, String>> {
    let app = &report.id;
    let wait = Duration::from_secs(args.aggregation_wait);
    let status =
        agg::wait_for_aggregation(rest, app, report.log_aggregation_status.clone(), wait).await?;
    if !agg::aggregation_done(&status) {
        return Ok(Err(status));
    }
    let conf = hadoop_conf()?;
    let layout = RemoteLayout::from_conf(conf.as_ref())?;
    let client = agg::webhdfs_client(args, conf.as_ref())?;
    let (dir, files) = agg::read_app(&client, &layout, &report.user, app).await?;
    let am: BTreeSet<String> = if args.am {
        logs.am_containers()
            .await
            .context("asking the RM for the app's attempts")?
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut found = Vec::new();
    let mut texts = BTreeMap::new();
    for nf in &files {
        for (container, list) in &nf.log.containers {
            let wanted = match (&args.container, args.am) {
                (Some(c), _) => c == container,
                (None, true) => am.contains(container),
                (None, false) => true,
            };
            if !wanted {
                continue;
            }
            for f in list {
                let t = Target {
                    container: container.clone(),
                    node: nf.path.clone(),
                    file: f.name.clone(),
                };
                texts.insert(t.clone(), String::from_utf8_lossy(&f.data).into_owned());
                found.push(t);
            }
        }
    }
    found.sort();
    found.dedup();
    let targets = select(args, found);
    let headers = targets.len() > 1;
    for t in &targets {
        emit(printed, t, &texts[t], headers);
    }
    if !targets.is_empty() {
        eprintln!("yarn-am: read from the aggregated logs in {dir} ({status})");
    }
    Ok(Ok(status))
}

pub fn logs(args: LogsArgs) -> anyhow::Result<ExitCode> {
    check_app_id(&args.app.app_id)?;
    let app = args.app.app_id.clone();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.app.rm)?;
        let mut report = rest
            .app(&app)
            .await
            .with_context(|| format!("asking the RM about {app}"))?;
        let logs = NodeLogs::new(&rest, &app)
            .await
            .context("asking the RM for its NodeManagers")?;
        let mut printed = Printed::new();
        let mut ended = report.is_final();
        // Live: while it runs (once, or following to the end and one pass after).
        if !ended || !agg::aggregation_on(&report.log_aggregation_status) {
            loop {
                let targets = live_targets(&logs, &args).await?;
                print_live(&logs, &targets, &mut printed).await;
                if !args.follow || ended {
                    break;
                }
                tokio::time::sleep(FOLLOW_EVERY).await;
                // One more pass after the end, for what was written last.
                if let Ok(r) = rest.app(&app).await {
                    ended = r.is_final();
                    report = r;
                }
            }
        }
        let mut unfinished = None;
        if ended && agg::aggregation_on(&report.log_aggregation_status) {
            match print_aggregated(&rest, &logs, &args, &report, &mut printed).await? {
                Ok(status) if status == "SUCCEEDED" => {}
                // Failed or timed out uploads leave what they could not move on the nodes.
                Ok(_) => {
                    let targets = live_targets(&logs, &args).await?;
                    print_live(&logs, &targets, &mut printed).await;
                }
                Err(status) => unfinished = Some(status),
            }
        }
        if !printed.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(status) = unfinished {
            anyhow::bail!(
                "the NodeManagers have not finished aggregating the logs of {app} after {}s \
                 (log aggregation {status}); try again later or with a longer --aggregation-wait",
                args.aggregation_wait
            );
        }
        let aggregated = if agg::aggregation_on(&report.log_aggregation_status) {
            "its aggregated logs have none"
        } else {
            "log aggregation is off and the NodeManagers delete logs \
             yarn.nodemanager.log.retain-seconds after the app ends"
        };
        eprintln!(
            "yarn-am: no logs of {} for {app} ({}): no NodeManager has them now and {aggregated} \
             (a container that has not started has none)",
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

    fn args(extra: &[&str]) -> LogsArgs {
        use clap::Parser;
        let mut argv = vec!["yarn-am", "logs", "application_1_0001"];
        argv.extend_from_slice(extra);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Logs(a) => a,
            _ => unreachable!(),
        }
    }

    fn t(container: &str, file: &str) -> Target {
        Target {
            container: container.into(),
            node: "/tmp/logs/u/bucket-logs-tfile/0001/application_1_0001/nm1_45454".into(),
            file: file.into(),
        }
    }

    /// The same selection for the NodeManagers' files and the aggregated ones: a task's
    /// last attempt wherever it ran, its stderr with --file, else the named files or all.
    #[test]
    fn a_selection_picks_a_tasks_last_attempt_or_the_named_files() {
        let found = vec![
            t("c_2", "stderr"),
            t("c_2", "task-t1.0.stdout"),
            t("c_3", "task-t1.1.stdout"),
            t("c_3", "task-t1.1.stderr"),
            t("c_3", "task-t10.2.stdout"),
        ];
        assert_eq!(
            select(&args(&["--task", "t1"]), found.clone()),
            [t("c_3", "task-t1.1.stdout")]
        );
        assert_eq!(
            select(&args(&["--task", "t1", "--file", "stderr"]), found.clone()),
            [t("c_3", "task-t1.1.stderr")]
        );
        assert!(select(&args(&["--task", "t2"]), found.clone()).is_empty());
        assert_eq!(
            select(&args(&["--file", "stderr"]), found.clone()),
            [t("c_2", "stderr")]
        );
        assert_eq!(select(&args(&[]), found.clone()), found);
        let a = args(&["--aggregation-wait", "5", "--webhdfs", "http://nn:9870"]);
        assert_eq!(
            (a.aggregation_wait, a.webhdfs.as_deref()),
            (5, Some("http://nn:9870"))
        );
    }

    #[test]
    fn printing_goes_on_where_the_last_source_stopped() {
        let mut printed = Printed::new();
        let a = t("c_2", "stdout");
        emit(&mut printed, &a, "one\n", false);
        assert_eq!(printed[&("c_2".into(), "stdout".into())], 4);
        // The aggregated file of the same container: only what follows is new.
        let mut b = a.clone();
        b.node = "nm1:8042".into();
        emit(&mut printed, &b, "one\ntwo\n", false);
        assert_eq!(printed[&("c_2".into(), "stdout".into())], 8);
    }
}

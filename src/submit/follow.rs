//! `submit --wait`: following the application to its end, riding out an RM restart, and
//! the job summary at the end.

use std::time::Duration;

use yarn_client::rest::{AppReport, RestError, RmRest};

/// How long `--wait` rides out an RM whose REST API fails (an RM restart takes tens of
/// seconds; the application keeps running meanwhile).
const REST_OUTAGE_LIMIT: Duration = Duration::from_secs(120);

/// Whether a failed app report may well succeed a moment later: the RM unreachable or
/// restarting (5xx, or 404 while it has not yet recovered its apps), or an odd reply from
/// a half-started web server. Other statuses (401, 403) will not get better.
fn transient(e: &RestError) -> bool {
    match e {
        // Redirects in a ring: both RMs standby for a moment during an HA failover.
        RestError::Unreachable { .. }
        | RestError::BadReply { .. }
        | RestError::TooManyRedirects { .. } => true,
        RestError::Status { status, .. } => *status >= 500 || *status == 404,
        // A missing or expired ticket does not come back by waiting, nor does a server
        // that redirects to strangers or sends more than the reply limit.
        RestError::Kerberos { .. }
        | RestError::NeedsKerberos { .. }
        | RestError::ForeignRedirect { .. }
        | RestError::TooLarge { .. }
        | RestError::Tls(_) => false,
    }
}

/// What `submit --wait` shows of the app while it waits: elapsed time, state, the progress
/// the AM reports (tasks done for a job) and the containers running.
fn progress_line(elapsed: Duration, app_id: &str, r: &AppReport) -> String {
    format!(
        "[{:>5.1}s] {app_id}: {} {:.0}% ({} container(s) running)",
        elapsed.as_secs_f64(),
        r.state,
        r.progress,
        r.running_containers.max(0)
    )
}

/// Prints a line whenever the state or the number of running containers changes, until the
/// application ends or `limit` passes; returns the last report (not final when `limit`
/// passed: `exit_code_for` makes that 4, "still running"). RM REST errors that may pass
/// are ridden out for [`REST_OUTAGE_LIMIT`].
pub async fn follow(rest: &RmRest, app_id: &str, limit: Duration) -> anyhow::Result<AppReport> {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let start = std::time::Instant::now();
    let mut last = (String::new(), -1, -1);
    let mut failing_since: Option<std::time::Instant> = None;
    loop {
        let r = match rest.app(app_id).await {
            Ok(r) => {
                if failing_since.take().is_some() {
                    eprintln!(
                        "[{:>5.1}s] the ResourceManager answers again",
                        start.elapsed().as_secs_f64()
                    );
                }
                r
            }
            Err(e) if transient(&e) => {
                let since = *failing_since.get_or_insert_with(|| {
                    eprintln!(
                        "[{:>5.1}s] {app_id}: cannot read the app's state ({e}); retrying for up to {} s",
                        start.elapsed().as_secs_f64(),
                        REST_OUTAGE_LIMIT.as_secs()
                    );
                    std::time::Instant::now()
                });
                if since.elapsed() >= REST_OUTAGE_LIMIT {
                    return Err(anyhow::Error::new(e).context(format!(
                        "the ResourceManager failed for {} s while following {app_id}",
                        REST_OUTAGE_LIMIT.as_secs()
                    )));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let line = progress_line(start.elapsed(), app_id, &r);
        if terminal {
            // One line, drawn again every second; the final state ends it.
            eprint!("\r\x1b[K{line}");
            if r.is_final() || start.elapsed() >= limit {
                eprintln!();
            }
        } else {
            // Plain lines for logs: one per change of state, containers or tenth of progress.
            let now = (
                r.state.clone(),
                r.running_containers,
                (r.progress / 10.0) as i64,
            );
            if now != last {
                eprintln!("{line}");
                last = now;
            }
        }
        if r.is_final() {
            return Ok(r);
        }
        if start.elapsed() >= limit {
            return Ok(r);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The job summary the AM puts on the diagnostics' second line, for people: tasks by
/// locality level and the executor count over time.
pub(super) fn print_job_summary(diagnostics: &str) {
    let Some((json, summary)) =
        yarn_am_core::driver::report::JobSummary::from_diagnostics(diagnostics)
    else {
        println!("(no job summary in the diagnostics)");
        return;
    };
    let l = &summary.by_locality;
    println!(
        "job {}: {}/{} tasks succeeded in {:.1} s",
        summary.name,
        summary.tasks_succeeded,
        summary.tasks_total,
        summary.wall_time_ms as f64 / 1000.0
    );
    println!(
        "tasks by locality: NODE_LOCAL {}  NO_PREF {}  RACK_LOCAL {}  ANY {}",
        l.node_local, l.no_pref, l.rack_local, l.any
    );
    let timeline: Vec<String> = summary
        .executors_over_time
        .iter()
        .map(|s| format!("{:.1}s:{}", s.t_ms as f64 / 1000.0, s.executors))
        .collect();
    println!("executors over time: {}", timeline.join(" "));
    println!("summary JSON: {json}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> RestError {
        RestError::Status {
            method: "GET",
            url: "http://rm:8088/ws/v1/cluster/apps/a".into(),
            status,
            body: String::new(),
        }
    }

    #[test]
    fn a_restarting_rm_is_ridden_out_but_a_refusal_is_not() {
        assert!(transient(&status(503)));
        assert!(transient(&status(500)));
        assert!(transient(&status(404)), "apps not yet recovered");
        assert!(!transient(&status(401)));
        assert!(!transient(&status(403)));
        assert!(transient(&RestError::BadReply {
            url: "u".into(),
            reason: "not JSON".into()
        }));
    }
}

//! Human and machine views of the state: the tracking page (HTML, reached through the RM's
//! web proxy) and Prometheus metrics.

use std::collections::BTreeMap;
use std::fmt::Write;

use yarn_am::driver::report::JobSummary;

use super::model::{ExecutorState, Locality, StateView};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn locality(l: Locality) -> &'static str {
    match l {
        Locality::Node => "node",
        Locality::Rack => "rack",
        Locality::Any => "any",
    }
}

pub fn html(s: &StateView) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>yarn-am {id}</title>\
         <meta http-equiv=\"refresh\" content=\"5\">\
         <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}</style></head><body>\
         <h1>yarn-am — {id}</h1>",
        id = esc(&s.app_id)
    );
    let d = &s.demand;
    let _ = write!(
        out,
        "<h2>Demand</h2><p>target executors <b>{}</b>, locality-aware tasks {}, hosts {}, excluded {}</p>\
         <h2>Requests and executors</h2><p>pending: {} with locality, {} any-host; \
         starting {}, running {}, executor failures {}</p>",
        d.target_executors,
        d.locality_aware_tasks,
        d.host_to_local_task_count.len(),
        d.excluded_hosts.len(),
        s.pending.locality,
        s.pending.any_host,
        s.starting,
        s.running,
        s.executor_failures
    );
    // Per host and rack: how many live executors, at which matched level.
    let mut per_host: BTreeMap<(&str, &str), [u32; 3]> = BTreeMap::new();
    for e in s
        .executors
        .iter()
        .filter(|e| e.state != ExecutorState::Exited)
    {
        let slot = per_host.entry((&e.rack, &e.host)).or_default();
        slot[e.locality as usize] += 1;
    }
    out.push_str("<h2>Executors per host</h2><table><tr><th>rack</th><th>host</th><th>node-local</th><th>rack-local</th><th>any</th></tr>");
    for ((rack, host), c) in &per_host {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(rack),
            esc(host),
            c[0],
            c[1],
            c[2]
        );
    }
    out.push_str("</table><h2>Executors</h2><table><tr><th>id</th><th>container</th><th>host</th><th>level</th><th>state</th><th>exit</th><th>reason</th></tr>");
    for e in &s.executors {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:?}</td><td>{}</td><td>{}</td></tr>",
            esc(&e.id),
            esc(&e.container_id),
            esc(&e.host),
            locality(e.locality),
            e.state,
            e.exit_status.map(|x| x.to_string()).unwrap_or_default(),
            esc(e.reason.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</table><h2>Recent events</h2><ul>");
    for ev in s.recent_events.iter().rev() {
        let e = ev.executor();
        let _ = write!(
            out,
            "<li>{} {} on {} ({:?}){}</li>",
            ev.name(),
            esc(&e.id),
            esc(&e.host),
            e.state,
            e.reason
                .as_deref()
                .map(|r| format!(": {}", esc(r)))
                .unwrap_or_default()
        );
    }
    out.push_str("</ul>");
    if let Some(job) = &s.job {
        job_html(&mut out, job);
    }
    out.push_str("</body></html>");
    out
}

fn task_locality(l: yarn_am::driver::Locality) -> &'static str {
    use yarn_am::driver::Locality as L;
    match l {
        L::NodeLocal => "NODE_LOCAL",
        L::NoPref => "NO_PREF",
        L::RackLocal => "RACK_LOCAL",
        L::Any => "ANY",
    }
}

/// Task rows the page shows; the whole list is at `GET /v1/job`.
const PAGE_TASKS: usize = 500;

/// The embedded driver's job: summary, its JSON, and the last finished attempt per task.
fn job_html(out: &mut String, job: &serde_json::Value) {
    let Ok(summary) = serde_json::from_value::<JobSummary>(job.clone()) else {
        let _ = write!(
            out,
            "<h2>Job</h2><pre>{}</pre>",
            esc(&serde_json::to_string_pretty(job).unwrap_or_default())
        );
        return;
    };
    let state = match (&summary.failure, summary.succeeded) {
        (Some(_), _) => "failed",
        (None, true) => "succeeded",
        (None, false) => "running",
    };
    let l = &summary.by_locality;
    let _ = write!(
        out,
        "<h2>Job {name}</h2><p>{state}: {ok}/{total} tasks succeeded in {secs:.1} s{failure}</p>\
         <p>tasks by locality: NODE_LOCAL {nl}, NO_PREF {np}, RACK_LOCAL {rl}, ANY {any}</p>",
        name = esc(&summary.name),
        ok = summary.tasks_succeeded,
        total = summary.tasks_total,
        secs = summary.wall_time_ms as f64 / 1000.0,
        failure = summary
            .failure
            .as_deref()
            .map(|f| format!(" ({})", esc(f)))
            .unwrap_or_default(),
        nl = l.node_local,
        np = l.no_pref,
        rl = l.rack_local,
        any = l.any,
    );
    let mut brief = summary.clone();
    brief.tasks.clear();
    let _ = write!(
        out,
        "<h3>Summary JSON</h3><pre>{}</pre>",
        esc(&serde_json::to_string(&brief).unwrap_or_default())
    );
    out.push_str(
        "<h3>Tasks</h3><table><tr><th>task</th><th>executor</th><th>host</th>\
         <th>locality</th><th>attempts</th><th>duration</th><th>exit</th></tr>",
    );
    for t in summary.tasks.iter().take(PAGE_TASKS) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} s</td><td>{}</td></tr>",
            esc(&t.task_id),
            esc(&t.executor_id),
            esc(&t.host),
            task_locality(t.locality),
            t.attempts,
            t.duration_ms as f64 / 1000.0,
            t.exit_code
        );
    }
    out.push_str("</table>");
    if summary.tasks.len() > PAGE_TASKS {
        let _ = write!(
            out,
            "<p>{} more tasks: see GET /v1/job</p>",
            summary.tasks.len() - PAGE_TASKS
        );
    }
}

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

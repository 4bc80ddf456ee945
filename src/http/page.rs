//! The tracking page: the state as HTML for people, reached through the RM's web proxy (the
//! Prometheus metrics are [`super::metrics`]).
//!
//! The page needs no secret, so it is cheap by construction: lists are cut to their first
//! rows and the rendered page is shared by all requests for up to [`REBUILD_EVERY`]
//! ([`PageCache`]).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use yarn_am_core::driver::report::ReportView;

use yarn_am_wire::driver_api::{ExecutorState, Locality, StateView};

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

/// Executor rows the page shows (live ones first); the whole list is at `GET /v1/executors`.
const PAGE_EXECUTORS: usize = 200;
/// Hosts the per-host table shows.
const PAGE_HOSTS: usize = 200;
/// Task rows the page shows; the whole list is at `GET /v1/job`.
const PAGE_TASKS: usize = 200;
/// Executor samples the page's summary JSON and `live.json` keep (the latest ones).
pub(super) const PAGE_SAMPLES: usize = 100;
/// How often the page may be rebuilt at most: between rebuilds every request is served the
/// same rendered bytes, so unauthenticated page loads cost the AM nothing that grows with
/// the number of executors or tasks.
pub const REBUILD_EVERY: Duration = Duration::from_secs(1);

/// The rendered tracking page, rebuilt when the state changed and the last build is older
/// than [`REBUILD_EVERY`]. The page is reachable without the secret (the RM's proxy links
/// to it), so what one request costs must not grow with the job: a build renders at most
/// a fixed number of rows, and builds are rate-limited.
pub struct PageCache {
    built: Mutex<Option<Built>>,
    render: fn(&StateView) -> String,
}

impl Default for PageCache {
    /// The page itself.
    fn default() -> Self {
        Self::rendering(html)
    }
}

struct Built {
    /// The state it was rendered from; weak, so an old state is not kept alive, yet its
    /// address cannot be reused by a newer one while this is held.
    from: Weak<StateView>,
    at: Instant,
    page: Bytes,
}

/// Whether a page built `age` ago is still served: always for the state it was built
/// from, and for a newer state until it is [`REBUILD_EVERY`] old.
fn still_fresh(same_state: bool, age: Duration) -> bool {
    same_state || age < REBUILD_EVERY
}

impl PageCache {
    /// A cache of what `render` makes of the state (the page, or `live::live_json`).
    pub fn rendering(render: fn(&StateView) -> String) -> Self {
        Self {
            built: Mutex::new(None),
            render,
        }
    }

    /// The page for `state` at `now`.
    pub fn get(&self, state: &Arc<StateView>, now: Instant) -> Bytes {
        // A panic while rendering poisons the lock; the cache is still sound.
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = built.as_ref() {
            let same = Weak::ptr_eq(&b.from, &Arc::downgrade(state));
            if still_fresh(same, now.saturating_duration_since(b.at)) {
                return b.page.clone();
            }
        }
        let page = Bytes::from((self.render)(state));
        *built = Some(Built {
            from: Arc::downgrade(state),
            at: now,
            page: page.clone(),
        });
        page
    }
}

/// The page for one state: summaries in full, lists cut to their first rows.
pub fn html(s: &StateView) -> String {
    let mut out = String::new();
    head_html(&mut out, s);
    demand_html(&mut out, s);
    per_host_html(&mut out, s);
    executors_html(&mut out, s);
    events_html(&mut out, s);
    if let Some(job) = &s.job {
        job_html(&mut out, job);
    }
    super::live::chart_svg(&mut out);
    out.push_str(&super::live::script());
    out.push_str("</body></html>");
    out
}

/// The document head, the title and the progress bar, and the line saying what the job
/// waits for (hidden when it waits for nothing, so the live script can show it).
fn head_html(out: &mut String, s: &StateView) {
    let _ = write!(
        out,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>yarn-am {id}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}</style></head><body>\
         <h1>yarn-am — {id}</h1>\
         <p>progress <progress id=\"progress\" max=\"1\" value=\"{p:.3}\"></progress> \
         <span id=\"progress-text\">{pct:.0}%</span></p>",
        id = esc(&s.app_id),
        p = s.progress,
        pct = s.progress * 100.0
    );
    let waiting = super::live::waiting_line(s);
    let _ = write!(
        out,
        "<p id=\"waiting\"{}>{}</p>",
        if waiting.is_some() { "" } else { " hidden" },
        esc(waiting.as_deref().unwrap_or(""))
    );
}

/// Demand, requests and executor counts, the hosts held back from new executors, and
/// preemption when the RM asked for resources back.
fn demand_html(out: &mut String, s: &StateView) {
    let d = &s.demand;
    let _ = write!(
        out,
        "<h2>Demand</h2><p>target executors <b>{}</b>, locality-aware tasks {}, hosts {}, excluded {}</p>\
         <h2>Requests and executors</h2><p>pending: {} with locality, {} any-host</p>\
         <p id=\"counts\">starting {}, running {}, executor failures {}</p>",
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
    for h in s.held_back_hosts.iter().take(PAGE_HOSTS) {
        let detail = match (h.decommission_timeout_s, h.excluded_until_ms) {
            (Some(t), _) => format!("decommissioning, timeout {t} s"),
            (None, Some(_)) => format!(
                "excluded after {} executor failures, for a while",
                h.failures
            ),
            _ => h.why.clone(),
        };
        let _ = write!(
            out,
            "<p class=\"held-back\">no new executors on {}: {}</p>",
            esc(&h.host),
            esc(&detail)
        );
    }
    if s.preemption.asks > 0 {
        let _ = write!(
            out,
            "<p id=\"preemption\">preemption: the RM asked {} time(s) for resources back; \
             {} executor(s) given back (tasks re-queued, no failure counted)</p>",
            s.preemption.asks, s.preemption.given_back
        );
    }
}

/// Per host and rack: how many live executors, at which matched level.
fn per_host_html(out: &mut String, s: &StateView) {
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
    for ((rack, host), c) in per_host.iter().take(PAGE_HOSTS) {
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
    out.push_str("</table>");
    more(
        out,
        per_host.len(),
        PAGE_HOSTS,
        "hosts",
        "GET /v1/executors",
    );
}

/// The executor table, live executors first.
fn executors_html(out: &mut String, s: &StateView) {
    out.push_str("<h2>Executors</h2><table><tr><th>id</th><th>container</th><th>host</th><th>level</th><th>state</th><th>exit</th><th>reason</th><th>logs</th></tr>");
    let live = s
        .executors
        .iter()
        .filter(|e| e.state != ExecutorState::Exited);
    let exited = s
        .executors
        .iter()
        .filter(|e| e.state == ExecutorState::Exited);
    for e in live.chain(exited).take(PAGE_EXECUTORS) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:?}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.id,
            esc(&e.container_id),
            esc(&e.host),
            locality(e.locality),
            e.state,
            e.exit_status.map(|x| x.to_string()).unwrap_or_default(),
            esc(e.reason.as_deref().unwrap_or("")),
            log_links(e)
        );
    }
    out.push_str("</table>");
    more(
        out,
        s.executors.len(),
        PAGE_EXECUTORS,
        "executors",
        "GET /v1/executors",
    );
}

/// The recent executor events, newest first.
fn events_html(out: &mut String, s: &StateView) {
    out.push_str("<h2>Recent events</h2><ul>");
    for ev in s.recent_events.iter().rev() {
        let e = ev.executor();
        let _ = write!(
            out,
            "<li>{} {} on {} ({:?}){}</li>",
            ev.name(),
            e.id,
            esc(&e.host),
            e.state,
            e.reason
                .as_deref()
                .map(|r| format!(": {}", esc(r)))
                .unwrap_or_default()
        );
    }
    out.push_str("</ul>");
}

/// Links to an executor's stdout and stderr on its NodeManager (scheme-relative: the
/// NodeManagers serve the same scheme as the RM the page is seen through).
fn log_links(e: &yarn_am_wire::driver_api::ExecutorView) -> String {
    let Some(node) = &e.node_http_address else {
        return String::new();
    };
    let base = format!(
        "//{}/ws/v1/node/containerlogs/{}",
        esc(node),
        esc(&e.container_id)
    );
    format!("<a href=\"{base}/stdout\">stdout</a> <a href=\"{base}/stderr\">stderr</a>")
}

/// "N more <what>: see <whence>" when a list was cut at `shown`.
fn more(out: &mut String, total: usize, shown: usize, what: &str, whence: &str) {
    if total > shown {
        let _ = write!(out, "<p>{} more {what}: see {whence}</p>", total - shown);
    }
}

fn task_locality(l: yarn_am_core::driver::TaskLocality) -> &'static str {
    use yarn_am_core::driver::TaskLocality as L;
    match l {
        L::NodeLocal => "NODE_LOCAL",
        L::NoPref => "NO_PREF",
        L::RackLocal => "RACK_LOCAL",
        L::Any => "ANY",
    }
}

/// The embedded driver's job: summary (with only the latest executor samples), its JSON,
/// and the last finished attempt of the first tasks. Reads the shared report: no task
/// record is copied or turned into JSON.
fn job_html(out: &mut String, job: &ReportView) {
    let mut summary = job.brief();
    let samples = &mut summary.executors_over_time;
    samples.drain(..samples.len().saturating_sub(PAGE_SAMPLES));
    let state = summary.state_word();
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
    let _ = write!(
        out,
        "<h3>Summary JSON</h3><pre>{}</pre>",
        esc(&serde_json::to_string(&summary).unwrap_or_default())
    );
    out.push_str(
        "<h3>Tasks</h3><table><tr><th>task</th><th>executor</th><th>host</th>\
         <th>locality</th><th>attempts</th><th>duration</th><th>exit</th></tr>",
    );
    for t in job.tasks().take(PAGE_TASKS) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} s</td><td>{}</td></tr>",
            esc(&t.task_id),
            t.executor_id,
            esc(&t.host),
            task_locality(t.locality),
            t.attempts,
            t.duration_ms as f64 / 1000.0,
            t.exit_code
        );
    }
    out.push_str("</table>");
    more(out, job.tasks_listed(), PAGE_TASKS, "tasks", "GET /v1/job");
}

#[cfg(test)]
pub(super) mod tests {
    use yarn_am_core::driver::report::{ExecutorSample, JobSummary, LocalityCounts, TaskRecord};

    use super::*;
    use yarn_am_wire::driver_api::{ExecutorId, ExecutorView, Locality};

    /// A state with `executors` executors (every other one exited) on 1,000 hosts and a job
    /// report of `tasks` finished tasks.
    pub(in crate::http) fn big_state(executors: usize, tasks: usize) -> StateView {
        let executors: Vec<ExecutorView> = (0..executors)
            .map(|i| {
                let exited = i % 2 == 1;
                ExecutorView {
                    id: ExecutorId::new(i as u64),
                    container_id: format!("container_1_0001_01_{i:06}"),
                    host: format!("host{:04}", i % 1000),
                    rack: format!("/rack{}", i % 25),
                    locality: Locality::Node,
                    state: if exited {
                        ExecutorState::Exited
                    } else {
                        ExecutorState::Running
                    },
                    exit_status: exited.then_some(0),
                    reason: exited.then(|| "released: idle".into()),
                    counts_against_app: exited.then_some(false),
                    node_http_address: Some(format!("host{:04}:8042", i % 1000)),
                    kind: None,
                    resources: Default::default(),
                }
            })
            .collect();
        let tasks: Vec<TaskRecord> = (0..tasks)
            .map(|i| TaskRecord {
                task_id: format!("task-{i}"),
                executor_id: ExecutorId::new((i % 5000) as u64),
                host: format!("host{:04}", i % 1000),
                locality: yarn_am_core::driver::TaskLocality::NodeLocal,
                attempts: 1,
                duration_ms: 1500,
                exit_code: 0,
                last_failure: None,
            })
            .collect();
        let n = tasks.len() as u32;
        StateView {
            app_id: "application_1_0001".into(),
            running: (executors.len() / 2) as u32,
            executors: executors.into(),
            job: Some(ReportView::from(JobSummary {
                name: "big".into(),
                succeeded: false,
                failure: None,
                tasks_total: n,
                tasks_succeeded: n,
                tasks_failed: 0,
                by_locality: LocalityCounts {
                    node_local: n,
                    ..Default::default()
                },
                executors_over_time: (0..5000)
                    .map(|t| ExecutorSample {
                        t_ms: t * 1000,
                        executors: t as u32,
                    })
                    .collect(),
                wall_time_ms: 60_000,
                tasks,
            })),
            ..Default::default()
        }
    }

    fn rows(html: &str, section: &str) -> usize {
        let start = html.find(section).unwrap();
        let table = &html[start..];
        let end = table.find("</table>").unwrap();
        table[..end].matches("<tr><td>").count()
    }

    /// The progress bar and why executors wait, escaped (the reason quotes RM data).
    #[test]
    fn progress_and_the_waiting_reason_are_shown() {
        let mut s = big_state(1, 1);
        s.progress = 0.25;
        s.waiting = Some(yarn_am_core::am::waiting::WaitingView {
            executors: 2,
            waited_ms: 12_500,
            reason: Some("queue <root.default> is at its maximum capacity".into()),
        });
        let page = html(&s);
        assert!(page.contains(
            "<progress id=\"progress\" max=\"1\" value=\"0.250\"></progress> <span id=\"progress-text\">25%</span>"
        ));
        assert!(page.contains(
            "<p id=\"waiting\">2 executor(s) waiting for 12 s: queue &lt;root.default&gt; is at its maximum capacity</p>"
        ));
        assert!(page.contains(
            "<a href=\"//host0000:8042/ws/v1/node/containerlogs/container_1_0001_01_000000/stdout\">stdout</a>"
        ));
        assert!(page.contains("<svg id=\"chart\"") && page.contains("fetch(\"live.json\""));
        assert!(
            !page.contains("http-equiv=\"refresh\""),
            "live without reloading"
        );
    }

    #[test]
    fn lists_are_cut_to_their_first_rows_live_executors_first() {
        let html = html(&big_state(1000, 1000));
        assert_eq!(rows(&html, "<h2>Executors</h2>"), PAGE_EXECUTORS);
        assert_eq!(rows(&html, "<h3>Tasks</h3>"), PAGE_TASKS);
        assert!(html.contains("<p>800 more executors: see GET /v1/executors</p>"));
        assert!(html.contains("<p>800 more tasks: see GET /v1/job</p>"));
        // 500 hosts with a live executor (even ids land on even hosts).
        assert_eq!(rows(&html, "<h2>Executors per host</h2>"), PAGE_HOSTS);
        assert!(html.contains("<p>300 more hosts: see GET /v1/executors</p>"));
        // 500 live executors: the first 200 rows are all live.
        let table = &html[html.find("<h2>Executors</h2>").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert!(
            !table.contains("Exited"),
            "an exited executor shown before live ones"
        );
        // Summary numbers are whole; its JSON keeps the latest samples only.
        assert!(
            html.contains("running: 1000/1000 tasks succeeded"),
            "{html}"
        );
        assert!(html.contains("&quot;executors&quot;:4999}"));
        assert!(!html.contains("&quot;executors&quot;:4899}"));
    }

    #[test]
    fn hosts_held_back_and_preemption_are_shown() {
        use yarn_am_core::am::held_back::HeldBackHost;
        let mut s = big_state(1, 1);
        s.held_back_hosts = vec![
            HeldBackHost {
                host: "nm2".into(),
                why: "decommissioning".into(),
                decommission_timeout_s: Some(60),
                excluded_until_ms: None,
                failures: 0,
            },
            HeldBackHost {
                host: "nm<1>".into(),
                why: "failures".into(),
                decommission_timeout_s: None,
                excluded_until_ms: Some(1),
                failures: 2,
            },
        ];
        s.preemption = yarn_am_wire::driver_api::PreemptionView {
            asks: 3,
            given_back: 2,
        };
        let page = html(&s);
        assert!(page.contains("no new executors on nm2: decommissioning, timeout 60 s"));
        assert!(
            page.contains("no new executors on nm&lt;1&gt;: excluded after 2 executor failures")
        );
        assert!(
            page.contains("the RM asked 3 time(s) for resources back; 2 executor(s) given back")
        );
        assert!(!html(&big_state(1, 1)).contains("id=\"preemption\""));
    }

    #[test]
    fn the_page_does_not_grow_with_executors_and_tasks() {
        let small = html(&big_state(1000, 1000)).len();
        let big = html(&big_state(20_000, 100_000)).len();
        // Only the "N more" counts and wider ids differ.
        assert!(
            big < small + 2000,
            "{small} bytes at 1,000, {big} at 100,000"
        );
        assert!(big < 128 << 10, "{big} bytes");
    }

    #[test]
    fn the_cache_serves_one_build_per_state_and_at_most_one_per_interval() {
        assert!(still_fresh(true, Duration::from_secs(3600)));
        assert!(still_fresh(false, REBUILD_EVERY - Duration::from_millis(1)));
        assert!(!still_fresh(false, REBUILD_EVERY));

        let cache = PageCache::default();
        let t0 = Instant::now();
        let first = Arc::new(big_state(2, 2));
        let a = cache.get(&first, t0);
        assert_eq!(cache.get(&first, t0 + Duration::from_secs(60)), a);
        // A new state within the interval gets the page already built...
        let mut changed = big_state(2, 2);
        changed.app_id = "application_1_0002".into();
        let second = Arc::new(changed);
        let b = cache.get(&second, t0 + Duration::from_secs(60));
        assert!(
            std::str::from_utf8(&b)
                .unwrap()
                .contains("application_1_0002"),
            "rebuilt: the last build was a minute ago"
        );
        let mut changed = big_state(2, 2);
        changed.app_id = "application_1_0003".into();
        let third = Arc::new(changed);
        let t1 = t0 + Duration::from_secs(60) + REBUILD_EVERY / 2;
        assert_eq!(cache.get(&third, t1), b, "rebuilt within the interval");
        // ...and a fresh one once the interval has passed.
        let c = cache.get(&third, t1 + REBUILD_EVERY);
        assert!(std::str::from_utf8(&c)
            .unwrap()
            .contains("application_1_0003"));
    }

    /// The cost of one tracking page at scale. A measurement, not a test: run with
    /// `cargo test --release --bin yarn-am page_cost -- --ignored --nocapture`
    /// (figures in BENCHMARKS.md).
    #[test]
    #[ignore]
    fn page_cost_at_scale() {
        for (executors, tasks) in [(10_000, 100_000), (100_000, 100_000)] {
            let state = Arc::new(big_state(executors, tasks));
            let runs = 10;
            let t = Instant::now();
            let mut bytes = 0;
            for _ in 0..runs {
                bytes = html(&state).len();
            }
            let build = t.elapsed() / runs;
            let cache = PageCache::default();
            let now = Instant::now();
            cache.get(&state, now);
            let hits = 100_000;
            let t = Instant::now();
            for _ in 0..hits {
                std::hint::black_box(cache.get(&state, now));
            }
            let hit = t.elapsed() / hits;
            println!(
                "page at {executors} executors, {tasks} tasks: build {build:?}, {bytes} bytes; \
                 cached request {hit:?}"
            );
        }
    }
}

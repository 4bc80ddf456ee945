//! What keeps the tracking page live without reloading it: `GET live.json` beside the page
//! (a small summary of the state, the same size at 10 tasks as at 100,000) and the page's
//! script, which asks for it every [`POLL_MS`] and redraws the progress bar, the counts,
//! why executors wait, and the chart of executors and tasks done over time.
//!
//! The page is reached through the RM's web proxy (`/proxy/<app>/`), so the script asks
//! for `live.json` relative to the page. The summary is cached and rebuilt at most every
//! `page::REBUILD_EVERY`, as the page is: it needs no secret either.

use std::fmt::Write;

use serde::Serialize;

use super::page::PAGE_SAMPLES;
use yarn_am_wire::driver_api::StateView;

/// How often the page asks for [`live_json`].
pub const POLL_MS: u64 = 2_000;

#[derive(Serialize)]
struct Live<'a> {
    progress: f32,
    running: u32,
    starting: u32,
    pending: u32,
    executor_failures: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    waiting: Option<String>,
    /// `[t_ms, executors]` since the job started, the latest [`PAGE_SAMPLES`].
    samples: Vec<[u64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_state: Option<&'a str>,
}

/// Why executors wait, as one line (the page's `#waiting`).
pub fn waiting_line(s: &StateView) -> Option<String> {
    s.waiting.as_ref().map(|w| w.line())
}

/// The summary the page's script polls (see the module doc).
pub fn live_json(s: &StateView) -> String {
    let (samples, tasks, job_state) = match &s.job {
        Some(job) => {
            let b = job.brief();
            let from = b.executors_over_time.len().saturating_sub(PAGE_SAMPLES);
            let samples = b.executors_over_time[from..]
                .iter()
                .map(|x| [x.t_ms, u64::from(x.executors)])
                .collect();
            (
                samples,
                Some([b.tasks_succeeded, b.tasks_total]),
                Some(b.state_word()),
            )
        }
        None => (Vec::new(), None, None),
    };
    let live = Live {
        progress: s.progress,
        running: s.running,
        starting: s.starting,
        pending: s.pending.locality + s.pending.any_host,
        executor_failures: s.executor_failures,
        waiting: waiting_line(s),
        samples,
        tasks,
        job_state,
    };
    serde_json::to_string(&live).unwrap_or_else(|_| "{}".into())
}

/// The chart's initial drawing (the script redraws it): a frame and two empty lines.
pub fn chart_svg(out: &mut String) {
    let _ = write!(
        out,
        "<h2>Over time</h2><svg id=\"chart\" viewBox=\"0 0 600 160\" width=\"600\" height=\"160\" \
         style=\"border:1px solid #ccc\"><polyline id=\"executors-line\" fill=\"none\" \
         stroke=\"#2a6fdb\" stroke-width=\"2\" points=\"\"/><polyline id=\"tasks-line\" \
         fill=\"none\" stroke=\"#2b9348\" stroke-width=\"2\" points=\"\"/></svg>\
         <p><span style=\"color:#2a6fdb\">executors</span> · \
         <span style=\"color:#2b9348\">tasks done</span> · <span id=\"updates\" \
         data-count=\"0\" data-chart-changes=\"0\">live</span></p>"
    );
}

/// The page's script (see the module doc). Plain DOM calls, no library; a failed poll is
/// tried again on the next tick.
pub fn script() -> String {
    format!(
        r#"<script>
(function () {{
  var history = [], start = Date.now(), lastPoints = "";
  var counter = document.getElementById("updates");
  function line(points, maxT, maxY) {{
    return points.map(function (p) {{
      var x = maxT > 0 ? 600 * p[0] / maxT : 0;
      var y = 155 - (maxY > 0 ? 150 * p[1] / maxY : 0);
      return x.toFixed(1) + "," + y.toFixed(1);
    }}).join(" ");
  }}
  function set(id, text) {{ var e = document.getElementById(id); if (e) e.textContent = text; }}
  function draw(s) {{
    var p = document.getElementById("progress");
    if (p) p.value = s.progress;
    set("progress-text", Math.round(s.progress * 100) + "%");
    set("counts", "running " + s.running + ", starting " + s.starting + ", pending " +
        s.pending + ", executor failures " + s.executor_failures);
    var w = document.getElementById("waiting");
    if (w) {{ w.textContent = s.waiting || ""; w.hidden = !s.waiting; }}
    if (s.tasks) history.push([Date.now() - start, s.tasks[0]]);
    if (history.length > 300) history.shift();
    var ex = s.samples || [];
    var maxT = Math.max(ex.length ? ex[ex.length - 1][0] : 0, Date.now() - start);
    var maxY = 1;
    ex.forEach(function (x) {{ maxY = Math.max(maxY, x[1]); }});
    var exPoints = line(ex, maxT, maxY);
    var tasksTotal = s.tasks ? Math.max(1, s.tasks[1]) : 1;
    var taskPoints = line(history, Date.now() - start, tasksTotal);
    document.getElementById("executors-line").setAttribute("points", exPoints);
    document.getElementById("tasks-line").setAttribute("points", taskPoints);
    var now = exPoints + "|" + taskPoints;
    if (now !== lastPoints) {{
      counter.dataset.chartChanges = String(Number(counter.dataset.chartChanges) + 1);
      lastPoints = now;
    }}
    counter.dataset.count = String(Number(counter.dataset.count) + 1);
    counter.textContent = "live, updated " + new Date().toLocaleTimeString();
  }}
  function tick() {{
    fetch("live.json", {{cache: "no-store"}})
      .then(function (r) {{ return r.ok ? r.json() : null; }})
      .then(function (s) {{ if (s) draw(s); }})
      .catch(function () {{}})
      .then(function () {{ setTimeout(tick, {POLL_MS}); }});
  }}
  tick();
}})();
</script>"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_stays_small_for_a_large_job() {
        let s = super::super::page::tests::big_state(10_000, 10_000);
        let j = live_json(&s);
        assert!(j.len() < 4_096, "{} bytes", j.len());
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["samples"].as_array().unwrap().len(), PAGE_SAMPLES);
        assert_eq!(v["tasks"], serde_json::json!([10_000, 10_000]));
        assert!(v.get("waiting").is_none());
    }
}

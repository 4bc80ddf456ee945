//! The RM's report of an application, as `status`, `kill` and `submit --wait` show it, and
//! the exit code it makes (the outcome scripts read).

use std::process::ExitCode;

use yarn_client::rest::AppReport;

/// Exit codes that say how the application ended, for scripts:
/// 0 succeeded, 1 failed (or did not succeed), 3 killed, 4 still running.
pub fn exit_code_for(r: &AppReport) -> ExitCode {
    match (r.state.as_str(), r.final_status.as_str()) {
        ("FINISHED", "SUCCEEDED") => ExitCode::SUCCESS,
        ("KILLED", _) | (_, "KILLED") => ExitCode::from(3),
        ("FINISHED" | "FAILED", _) => ExitCode::from(1),
        _ => ExitCode::from(4),
    }
}

pub fn print_report(r: &AppReport) {
    println!("application: {}", r.id);
    println!(
        "name:        {} (user {}, queue {})",
        r.name, r.user, r.queue
    );
    println!("state:       {} / final status {}", r.state, r.final_status);
    println!("progress:    {:.0}%", r.progress);
    println!("containers:  {} running", r.running_containers.max(0));
    if let Some(u) = &r.tracking_url {
        println!("tracking:    {u}");
    }
    if let Some(l) = &r.am_container_logs {
        println!("AM logs:     {l}");
    }
    // A job's diagnostics carry its summary as one JSON line: that is for programs
    // (`submit --wait --job` prints it labelled), so people get the other lines.
    let summary = yarn_am_core::driver::report::JobSummary::from_diagnostics(&r.diagnostics)
        .map(|(line, _)| line);
    let text: Vec<&str> = r
        .diagnostics
        .lines()
        .filter(|l| Some(l.trim()) != summary)
        .collect();
    let text = text.join("\n");
    if !text.trim().is_empty() {
        println!("diagnostics: {}", text.trim());
    }
    if let Some(hint) = crate::staging::diagnose::unseen_local_file(&r.diagnostics) {
        println!("hint:        {hint}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(state: &str, final_status: &str) -> AppReport {
        serde_json::from_value(serde_json::json!({
            "id": "application_1_0001", "state": state, "finalStatus": final_status,
        }))
        .unwrap()
    }

    /// The codes the README documents: 0 succeeded, 1 failed, 3 killed, 4 still running
    /// (what `submit --wait` returns when `--wait-timeout` passes first).
    #[test]
    fn exit_codes_say_how_the_app_ended_or_that_it_still_runs() {
        let code = |s, f| exit_code_for(&report(s, f));
        assert_eq!(code("FINISHED", "SUCCEEDED"), ExitCode::SUCCESS);
        assert_eq!(code("FINISHED", "FAILED"), ExitCode::from(1));
        assert_eq!(code("FAILED", "FAILED"), ExitCode::from(1));
        assert_eq!(code("KILLED", "KILLED"), ExitCode::from(3));
        for state in ["NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"] {
            assert_eq!(code(state, "UNDEFINED"), ExitCode::from(4), "{state}");
        }
    }
}

//! `yarn-am plan` — placeholder until the allocator lands (issue 4).
use std::process::ExitCode;

pub fn run(_args: crate::cli::PlanArgs) -> ExitCode {
    eprintln!("yarn-am: plan: the allocator is not built yet");
    ExitCode::from(2)
}

//! `yarn-am status` and `yarn-am kill`: an application as the RM reports it.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use yarn_client::rest::AppReport;

use crate::cli::AppArgs;
use crate::cluster::app_report::{exit_code_for, print_report};
use crate::cluster::rm::rm_rest;

/// Whether `id` reads `application_<digits>_<digits>`.
pub(crate) fn is_app_id(id: &str) -> bool {
    let numbers = id
        .strip_prefix("application_")
        .and_then(|rest| rest.split_once('_'));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(numbers, Some((ts, seq)) if digits(ts) && digits(seq))
}

/// `application_<cluster timestamp>_<sequence number>`, as YARN prints them. Checked before
/// asking the RM so a typo gets a message naming it rather than an RM error page (and no
/// `/` or `?` ends up in the REST path).
pub(crate) fn check_app_id(id: &str) -> anyhow::Result<()> {
    match is_app_id(id) {
        true => Ok(()),
        false => anyhow::bail!(
            "{id:?} is not an application id (application_<timestamp>_<number>, as \
             `yarn-am submit` prints it)"
        ),
    }
}

pub fn status(args: AppArgs) -> anyhow::Result<ExitCode> {
    check_app_id(&args.app_id)?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.rm)?;
        let r = rest
            .app(&args.app_id)
            .await
            .with_context(|| format!("asking the RM about {}", args.app_id))?;
        print_report(&r);
        if r.state == "RUNNING" {
            if let Some(line) = waiting_line(&r).await {
                println!("waiting:     {line}");
            }
        }
        Ok(exit_code_for(&r))
    })
}

/// Why executors wait, from the AM itself (`/v1/state`), when this user can ask it (the
/// secret file `submit` wrote is here) and it answers within a few seconds; `None`
/// otherwise or when nothing waits. The RM knows only that requests are pending.
async fn waiting_line(r: &AppReport) -> Option<String> {
    use yarn_am_wire::driver_secret::{default_dir, file_of, DriverSecret};
    let addr = r.am_rpc_address.as_deref().filter(|a| !a.is_empty())?;
    let secret = DriverSecret::read(&file_of(&default_dir(), &r.id)).ok()?;
    secret.tls_pin?;
    let http = crate::cluster::driver_client::for_secret(&secret)
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .ok()?;
    let state: yarn_am_wire::driver_api::StateView = http
        .get(format!("https://{addr}/v1/state"))
        .bearer_auth(&secret.secret)
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    state.waiting.map(|w| w.line())
}

/// `yarn-am list`: this user's applications of type YARN-AM, one line each.
pub fn list(args: crate::cli::ListArgs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.rm)?;
        let user = crate::cluster::rm::rm_user(&rest, &args.rm);
        let states: &[&str] = if args.all {
            &[]
        } else {
            &["NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"]
        };
        let mut apps = rest
            .apps(yarn_am_wire::APPLICATION_TYPE, &user, states)
            .await
            .context("asking the RM for the applications")?;
        apps.sort_by(|a, b| (b.started_time, &b.id).cmp(&(a.started_time, &a.id)));
        println!(
            "{:<32} {:<9} {:<10} {:>4}  {:<10} NAME",
            "APPLICATION", "STATE", "FINAL", "DONE", "QUEUE"
        );
        for a in &apps {
            println!(
                "{:<32} {:<9} {:<10} {:>3.0}%  {:<10} {}",
                a.id, a.state, a.final_status, a.progress, a.queue, a.name
            );
        }
        if apps.is_empty() {
            eprintln!(
                "no {}yarn-am applications of {user}",
                if args.all { "" } else { "running " }
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn kill(args: AppArgs) -> anyhow::Result<ExitCode> {
    check_app_id(&args.app_id)?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.rm)?;
        rest.kill(&args.app_id, "killed by yarn-am kill")
            .await
            .with_context(|| format!("asking the RM to kill {}", args.app_id))?;
        eprintln!("kill requested for {}; waiting for the RM", args.app_id);
        let r = rest
            .wait_final(&args.app_id, Duration::from_secs(args.rm.timeout))
            .await?;
        print_report(&r);
        Ok(if r.state == "KILLED" {
            ExitCode::SUCCESS
        } else {
            exit_code_for(&r)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_ids_are_checked_before_asking_the_rm() {
        check_app_id("application_1700000000000_0001").unwrap();
        check_app_id("application_1_12345").unwrap();
        for bad in [
            "",
            "application_",
            "application_1",
            "application_1_",
            "application__1",
            "app_1_1",
            "application_1_1/../../x",
            "application_1_1?x=1",
            "application_1_1_1",
            "container_1_0001_01_000001",
        ] {
            let err = check_app_id(bad).unwrap_err().to_string();
            assert!(err.contains("is not an application id"), "{bad}: {err}");
            assert!(err.contains(&format!("{bad:?}")), "{bad}: {err}");
        }
    }
}

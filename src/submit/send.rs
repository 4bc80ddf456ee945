//! Handing the application to the RM: over REST, or over its client port (IPC) when the AM
//! asks for resource types REST drops; and what to make of a submission that got no answer.

use std::time::Duration;

use anyhow::{bail, Context};
use yarn_client::client_rm::{ClientRm, ClientRmError};
use yarn_client::rest::{RestError, RmRest, Submission};
use yarn_client::rpc::{RpcConfig, RpcError};

use super::cluster_conf::rm_addresses;
use crate::cli::SubmitArgs;

/// Submits `submission` (over IPC when it needs it, else REST, then its `--lifetime`).
pub(super) async fn send(
    args: &SubmitArgs,
    rest: &RmRest,
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
    submission: &Submission,
) -> anyhow::Result<()> {
    let app_id = &submission.application_id;
    let submitted_at = std::time::SystemTime::now();
    if submission.needs_rpc() {
        // The lifetime travels in the submission itself here.
        return submit_over_rpc(args, rest, conf, submission)
            .await
            .with_context(|| format!("submitting {app_id} over IPC (for --am-resource)"));
    }
    rest.submit(submission)
        .await
        .with_context(|| format!("submitting {app_id}"))?;
    if let Some(lifetime) = submission.lifetime {
        // The REST submission has no timeout field: the lifetime is set right after. An app
        // the user bounded must not run unbounded, so a refusal kills it.
        let expiry = submitted_at + lifetime;
        if let Err(e) = set_lifetime(rest, app_id, expiry).await {
            let _ = rest
                .kill(app_id, "yarn-am submit could not set its --lifetime")
                .await;
            return Err(e.context(format!("setting the lifetime of {app_id} (killed it)")));
        }
    }
    Ok(())
}

/// True when the submission call got no answer (a timeout, a dropped connection): the RM
/// may have accepted the application anyway.
pub(super) fn submission_outcome_unknown(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<RestError>(),
            Some(RestError::Unreachable { .. })
        ) || c
            .downcast_ref::<ClientRmError>()
            .is_some_and(ClientRmError::outcome_unknown)
    })
}

/// `--am-resource` needs the RPC submission, which speaks SIMPLE only (no Kerberos on Hadoop
/// IPC yet): refused on a secure cluster before anything is staged or reserved.
pub(super) fn check_am_resources_allowed(args: &SubmitArgs, rest: &RmRest) -> anyhow::Result<()> {
    if args.am_resource.is_empty() {
        return Ok(());
    }
    if !matches!(rest.auth(), yarn_client::http_auth::HttpAuth::Simple { .. }) {
        bail!(
            "--am-resource needs a submission over the RM's client port (the REST submission \
             drops the AM's resource types), and yarn-am speaks only SIMPLE authentication \
             there, not Kerberos: not possible on this secure cluster yet"
        );
    }
    Ok(())
}

/// Submits over ApplicationClientProtocol (the RM's client port), trying the RMs in turn
/// under HA: a standby answers `StandbyException`, a stopped RM refuses the connection;
/// both are safe to pass over (nothing was submitted there). Any other failure is final.
async fn submit_over_rpc(
    args: &SubmitArgs,
    rest: &RmRest,
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
    sub: &Submission,
) -> anyhow::Result<()> {
    let addrs = rm_addresses(
        args.rm_client.as_ref(),
        yarn_client::conf::RmService::Client,
        rest,
        conf,
    )?;
    let user = crate::cluster::rm::rm_user(rest, &args.rm);
    let limit = Duration::from_secs(args.rm.timeout.max(1));
    let cfg = RpcConfig {
        connect_timeout: limit,
        call_timeout: limit,
        ..RpcConfig::default()
    };
    let mut passed_over = Vec::new();
    for addr in &addrs {
        let client = ClientRm::simple(addr, &user, cfg.clone());
        match client.submit(sub).await {
            Ok(()) => return Ok(()),
            Err(ClientRmError::Refused { remote, .. }) if remote.is_class("StandbyException") => {
                passed_over.push(format!("{addr}: standby"));
            }
            Err(ClientRmError::Rpc(e @ RpcError::Connect { .. })) if addrs.len() > 1 => {
                passed_over.push(e.to_string());
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("the RM client port {addr}")))
            }
        }
    }
    bail!(
        "no active RM on the client port(s): {}",
        passed_over.join("; ")
    )
}

/// Sets the app's lifetime once the RM has saved it: it refuses a timeout while the app is
/// NEW or NEW_SAVING ("can not update timeout"), which lasts milliseconds (waited for up to
/// 10 s).
async fn set_lifetime(
    rest: &RmRest,
    app_id: &str,
    expiry: std::time::SystemTime,
) -> anyhow::Result<()> {
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = rest.app(app_id).await?.state;
        if !matches!(state.as_str(), "NEW" | "NEW_SAVING") {
            break;
        }
        if std::time::Instant::now() >= give_up {
            bail!("{app_id} is still {state} after 10 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(rest.set_lifetime(app_id, expiry).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::submit::test_support::{args, rest};
    use yarn_client::http_auth::HttpAuth;

    #[test]
    fn am_resources_parse_and_are_refused_where_ipc_would_need_kerberos() {
        let a = args(&[
            "--am-resource",
            "yarn.io/gpu=1",
            "--am-resource",
            "example.com/x=2",
        ]);
        assert_eq!(
            a.am_resource,
            [
                ("yarn.io/gpu".to_string(), 1),
                ("example.com/x".to_string(), 2)
            ]
        );
        assert!(check_am_resources_allowed(&a, &rest(HttpAuth::simple("alice"))).is_ok());
        let secure = rest(HttpAuth::Delegation {
            token: "not-a-real-token".into(),
        });
        let e = check_am_resources_allowed(&a, &secure).unwrap_err();
        assert!(e.to_string().contains("Kerberos"), "{e}");
        assert!(!e.to_string().contains("not-a-real-token"), "{e}");
        // Without --am-resource nothing changes on a secure cluster.
        assert!(check_am_resources_allowed(&args(&[]), &secure).is_ok());
        for bad in ["vcores=1", "yarn.io/gpu=0", "gpu"] {
            use clap::Parser;
            assert!(
                crate::cli::Cli::try_parse_from(["yarn-am", "submit", "--am-resource", bad])
                    .is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_rpc_submission_without_an_answer_keeps_the_staging_folder() {
        let lost = ClientRmError::Rpc(RpcError::ConnectionLost {
            addr: "rm:8032".into(),
            reason: "reset".into(),
        });
        assert!(submission_outcome_unknown(&anyhow::Error::new(lost)));
        let refused = ClientRmError::Refused {
            method: "submitApplication".into(),
            remote: yarn_client::rpc::RemoteError {
                class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException".into(),
                message: "too much".into(),
                fatal: false,
                code: None,
            },
        };
        assert!(!submission_outcome_unknown(&anyhow::Error::new(refused)));
    }
}

//! A small ApplicationMaster that proves the IPC stack against a real cluster: it reads its
//! token file, registers with the RM over IPC, asks for N containers on one node (relaxed
//! locality: node + rack + ANY asks), starts `sleep 2` in each through the NodeManager
//! protocol, waits for them to complete and unregisters.
//!
//! Environment (set by the submitter):
//! - `YARN_AM_RM_SCHEDULER` RM scheduler address (default `rm:8030`)
//! - `TEST_AM_NODE` / `TEST_AM_RACK` preferred node and its rack (default nm2, /rack1)
//! - `TEST_AM_CONTAINERS` how many containers (default 2), `TEST_AM_MB` size (default 256)
//! - `TEST_AM_CORRUPT_PASSWORD=1` flips the AMRM token password (auth-failure test)
//! - `TEST_AM_STRICT=1` strict node locality (rack and ANY asks do not relax)
//! - `TEST_AM_TABLE=1` asks come from the request table (racks via getClusterNodes)
//! - `TEST_AM_STOP_LAST=1` the last container sleeps long and is stopped via stopContainers
//!
//! Exit status 0 on success; on failure the error goes to stderr and the status is non-zero.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use yarn_client::amrm::{recovery, AllocateInput, AmRmClient, FinalStatus, Recovery};
use yarn_client::ask::{Ask, Capability, Priority, ANY};
use yarn_client::credentials::{Credentials, AMRM_TOKEN_KIND, TOKEN_FILE_ENV};
use yarn_client::ids::{container_id_string, node_id_string};
use yarn_client::nm::{LaunchSpec, NmClient};
use yarn_client::proto::yarn::{ContainerIdProto, ContainerProto};
use yarn_client::proto::yarn::{GetClusterNodesRequestProto, GetClusterNodesResponseProto};
use yarn_client::rpc::{Auth, RpcClient, RpcConfig};
use yarn_client::token::Token;

mod planner;
use planner::Planner;

/// Node -> rack from the RM client port (ApplicationClientProtocol.getClusterNodes, SIMPLE
/// auth on an insecure cluster), for the request table's rack resolver.
async fn node_racks(
    scheduler: &str,
) -> Result<std::collections::HashMap<String, String>, Box<dyn std::error::Error>> {
    let host = scheduler
        .rsplit_once(':')
        .map(|(h, _)| h)
        .unwrap_or(scheduler);
    let addr = env_or("YARN_AM_RM_CLIENT", &format!("{host}:8032"));
    let user = env_or("USER", "yarn");
    let c = RpcClient::new(
        &addr,
        "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB",
        1,
        Auth::Simple { user },
        RpcConfig::default(),
    );
    let resp: GetClusterNodesResponseProto = c
        .call("getClusterNodes", &GetClusterNodesRequestProto::default())
        .await?;
    Ok(resp
        .node_reports
        .iter()
        .filter_map(|n| {
            Some((
                n.node_id.as_ref()?.host().to_string(),
                n.rack_name().to_string(),
            ))
        })
        .collect())
}

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    match tokio::time::timeout(Duration::from_secs(150), run()).await {
        Ok(Ok(())) => println!("TEST_AM: done"),
        Ok(Err(e)) => {
            eprintln!("TEST_AM ERROR: {e}");
            std::process::exit(1);
        }
        Err(_) => {
            eprintln!("TEST_AM ERROR: gave up after 150 s");
            std::process::exit(2);
        }
    }
}

type Error = Box<dyn std::error::Error>;

async fn run() -> Result<(), Error> {
    let s = Settings::from_env()?;
    println!(
        "TEST_AM: container {} on {}",
        env_or("CONTAINER_ID", "?"),
        env_or("NM_HOST", "?")
    );
    let token = amrm_token()?;
    let cfg = RpcConfig::default();
    let amrm_token = token.clone();
    let mut rm = AmRmClient::new(&s.scheduler, token, cfg.clone());
    register_with_probes(&mut rm).await?;
    let mut planner = planner(&s).await?;
    // Short idle time so that the reconnect probe below does not take long.
    let nm_cfg = RpcConfig {
        max_idle: Duration::from_secs(1),
        ..cfg.clone()
    };
    let run = run_containers(&mut rm, &mut planner, &s, &nm_cfg).await?;
    probe_nms(&run, amrm_token, &cfg).await?;
    finish(&mut rm, &run, &s).await
}

/// What the submitter asked for (see the module docs).
struct Settings {
    scheduler: String,
    node: String,
    rack: String,
    want: usize,
    mb: i64,
}

impl Settings {
    fn from_env() -> Result<Self, Error> {
        Ok(Settings {
            scheduler: env_or("YARN_AM_RM_SCHEDULER", "rm:8030"),
            node: env_or("TEST_AM_NODE", "nm2"),
            rack: env_or("TEST_AM_RACK", "/rack1"),
            want: env_or("TEST_AM_CONTAINERS", "2").parse()?,
            mb: env_or("TEST_AM_MB", "256").parse()?,
        })
    }
}

/// The AMRM token from the NM-written token file (corrupted on request), after keeping a
/// copy of that file next to our logs: it is a test fixture.
fn amrm_token() -> Result<Token, Error> {
    if let (Ok(src), Ok(dirs)) = (std::env::var(TOKEN_FILE_ENV), std::env::var("LOG_DIRS")) {
        if let Some(dir) = dirs.split(',').next() {
            let _ = std::fs::copy(&src, format!("{dir}/container_tokens.copy"));
        }
    }

    let creds = Credentials::from_env()?;
    for (alias, t) in &creds.tokens {
        println!(
            "TEST_AM: token alias={alias:?} kind={} service={:?}",
            t.kind, t.service
        );
    }
    let mut token = creds.require_kind(AMRM_TOKEN_KIND)?.clone();
    if std::env::var("TEST_AM_CORRUPT_PASSWORD").is_ok_and(|v| v == "1") {
        println!("TEST_AM: corrupting the AMRM token password on purpose");
        for b in token.password.iter_mut() {
            *b ^= 0x5A;
        }
    }
    Ok(token)
}

/// Registers, probing around it: a heartbeat before registration, a ping, an oversized ask.
async fn register_with_probes(rm: &mut AmRmClient) -> Result<(), Error> {
    // Probe: the RM must refuse a heartbeat before registration with its typed exception.
    match rm.allocate(&AllocateInput::default()).await {
        Err(e) if e.is_class("ApplicationMasterNotRegisteredException") => {
            println!(
                "TEST_AM: probe allocate-before-register -> {}",
                e.remote().unwrap().class
            )
        }
        Err(e) if e.is_auth_failure() => return Err(e.into()),
        other => return Err(format!("allocate before register gave {other:?}").into()),
    }
    let host = env_or("NM_HOST", "localhost");
    let reg = rm.register(&host, -1, "").await?;
    println!(
        "TEST_AM: registered: queue={:?} maximumCapability={:?}",
        reg.queue, reg.maximum_capability
    );

    // Probe: a ping (call id -4) gets no reply and must not upset the server.
    rm.ping().await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    println!(
        "TEST_AM: probe ping -> connection alive={}",
        rm.is_connected().await
    );

    // Probe: an ask above the maximum allocation is an InvalidResourceRequestException.
    let too_big = AllocateInput {
        asks: vec![Ask::new(Priority(9), ANY, Capability::new(1_000_000, 1), 1)],
        ..Default::default()
    };
    match rm.allocate(&too_big).await {
        Err(e) if recovery(&e) == Recovery::FixRequest => println!(
            "TEST_AM: probe oversized ask -> {}: {}",
            e.remote().unwrap().class,
            e.remote().unwrap().summary()
        ),
        other => return Err(format!("oversized ask gave {other:?}").into()),
    }
    Ok(())
}

/// The asks' source: the request table (`TEST_AM_TABLE=1`) or the hand-written lines.
async fn planner(s: &Settings) -> Result<Planner, Error> {
    let Settings {
        scheduler,
        node,
        rack,
        want,
        mb,
    } = s;
    let (want, mb) = (*want, *mb);
    let strict = std::env::var("TEST_AM_STRICT").is_ok_and(|v| v == "1");
    let planner = if std::env::var("TEST_AM_TABLE").is_ok_and(|v| v == "1") {
        let racks = node_racks(scheduler).await?;
        println!("TEST_AM: racks from getClusterNodes: {racks:?}");
        Planner::table(node, racks, mb, want, strict)?
    } else {
        Planner::manual(node, rack, mb, want, strict)
    };
    println!(
        "TEST_AM: asking for {want} x {mb} MB at {node} (rack {rack}, strict={strict}, planner={})",
        planner.name()
    );
    Ok(planner)
}

/// The containers this AM got, their NodeManagers, and what became of them.
#[derive(Default)]
struct Containers {
    ours: Vec<ContainerProto>,
    exits: HashMap<String, i32>,
    nms: BTreeMap<String, NmClient>,
    /// Those we stopped through stopContainers.
    stopped: Vec<ContainerIdProto>,
}

/// Heartbeats until every wanted container has completed: allocate, start what came, probe
/// concurrent calls once, record completions.
async fn run_containers(
    rm: &mut AmRmClient,
    planner: &mut Planner,
    s: &Settings,
    nm_cfg: &RpcConfig,
) -> Result<Containers, Error> {
    let want = s.want;
    let mut run = Containers::default();
    let mut progress = 0.1;
    let mut probed_concurrency = false;
    let stop_last = std::env::var("TEST_AM_STOP_LAST").is_ok_and(|v| v == "1");
    let start = Instant::now();
    while run.exits.len() < want {
        if start.elapsed() > Duration::from_secs(120) {
            return Err(format!(
                "only {} of {want} containers completed in time ({} allocated)",
                run.exits.len(),
                run.ours.len()
            )
            .into());
        }
        let input = planner.next_input(progress);
        for a in &input.asks {
            println!(
                "TEST_AM: ask priority={} resource_name={} num_containers={} relax_locality={}",
                a.priority.0, a.resource_name, a.num_containers, a.relax_locality
            );
        }
        let resp = match rm.allocate(&input).await {
            Ok(r) => r,
            Err(e) => {
                planner.on_failure(input);
                return Err(e.into());
            }
        };
        planner.on_success(&resp);
        let mut fresh = Vec::new();
        for c in resp.allocated_containers {
            let id = container_id_string(c.id.as_ref().unwrap());
            let at = c.node_id.as_ref().map(node_id_string).unwrap_or_default();
            if planner.charge(&c) {
                println!("TEST_AM: allocated {id} on {at}");
                fresh.push(c);
            } else {
                println!("TEST_AM: releasing surplus {id} on {at}");
            }
        }
        run.start(&fresh, planner, nm_cfg, stop_last, want).await?;
        run.ours.extend(fresh);
        // Several calls in flight on one NM connection, answered by call id.
        if !probed_concurrency
            && run.ours.len() == want
            && want >= 2
            && run.ours[0].node_id == run.ours[1].node_id
        {
            probed_concurrency = true;
            run.probe_concurrency().await?;
        }
        for s in resp.completed_container_statuses {
            let id = container_id_string(s.container_id.as_ref().unwrap());
            if run.ours.iter().any(|c| c.id == s.container_id) {
                println!(
                    "TEST_AM: completed {id} exit_status={} diagnostics={:?}",
                    s.exit_status(),
                    s.diagnostics()
                );
                run.exits.insert(id, s.exit_status());
            }
        }
        progress = 0.1 + 0.8 * run.exits.len() as f32 / want as f32;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(run)
}

impl Containers {
    /// Starts `sleep 2` in each fresh container; with `stop_last`, the last wanted one
    /// sleeps long and is stopped through stopContainers.
    async fn start(
        &mut self,
        fresh: &[ContainerProto],
        planner: &Planner,
        nm_cfg: &RpcConfig,
        stop_last: bool,
        want: usize,
    ) -> Result<(), Error> {
        for (started_now, c) in fresh.iter().enumerate() {
            let at = node_id_string(c.node_id.as_ref().unwrap());
            let nm_token = planner
                .nm_token(&at)
                .ok_or_else(|| format!("no NM token for {at}"))?
                .clone();
            let nm = self
                .nms
                .entry(at.clone())
                .or_insert_with(|| NmClient::new(&at, nm_token, nm_cfg.clone()));
            let stop_this = stop_last && self.ours.len() + started_now == want - 1;
            let spec = LaunchSpec {
                command: vec![
                    if stop_this { "sleep 300" } else { "sleep 2" }.into(),
                    "1><LOG_DIR>/stdout".into(),
                    "2><LOG_DIR>/stderr".into(),
                ],
                ..Default::default()
            };
            let r = nm.start(&[(c, spec)]).await?;
            if let Some(f) = r.failed_requests.first() {
                return Err(format!("NM refused to start a container: {f:?}").into());
            }
            for id in &r.succeeded_requests {
                println!("TEST_AM: started {} on {at}", container_id_string(id));
            }
            if stop_this {
                let id = c.id.unwrap();
                // Let it get past localization so the stop hits a running process.
                tokio::time::sleep(Duration::from_secs(1)).await;
                let r = nm.stop(&[id]).await?;
                println!(
                    "TEST_AM: stop {} -> succeeded={} failed={}",
                    container_id_string(&id),
                    r.succeeded_requests.len(),
                    r.failed_requests.len()
                );
                self.stopped.push(id);
            }
        }
        Ok(())
    }

    /// Two status calls in flight at once on the first two containers' (shared) NM.
    async fn probe_concurrency(&self) -> Result<(), Error> {
        let ours = &self.ours;
        let nm = &self.nms[&node_id_string(ours[0].node_id.as_ref().unwrap())];
        let ida = [ours[0].id.unwrap()];
        let idb = [ours[1].id.unwrap()];
        let (ra, rb) = tokio::join!(nm.statuses(&ida), nm.statuses(&idb));
        for s in ra?.status.iter().chain(rb?.status.iter()) {
            println!(
                "TEST_AM: concurrent status {} state={:?}",
                container_id_string(s.container_id.as_ref().unwrap()),
                s.state()
            );
        }
        Ok(())
    }
}

/// After the run: an NM refuses our AMRM token, and an idle NM connection reconnects.
async fn probe_nms(run: &Containers, amrm_token: Token, cfg: &RpcConfig) -> Result<(), Error> {
    let ours = &run.ours;
    // Probe: an NM refuses a token that is not an NM token (here: our AMRM token).
    let first_node = node_id_string(ours[0].node_id.as_ref().unwrap());
    let wrong = NmClient::new(&first_node, amrm_token, cfg.clone());
    match wrong.statuses(&[ours[0].id.unwrap()]).await {
        Err(e) if e.is_auth_failure() => {
            println!("TEST_AM: probe NM with AMRM token -> auth failure: {e}")
        }
        other => return Err(format!("NM accepted a non-NM token: {other:?}").into()),
    }

    // Probe: the idle NM connection has closed itself; the next call reconnects (new
    // preamble, SASL with the cached NM token, context) transparently.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let first = &ours[0];
    let nm = &run.nms[&node_id_string(first.node_id.as_ref().unwrap())];
    let st = nm.statuses(&[first.id.unwrap()]).await?;
    println!(
        "TEST_AM: probe reconnect after idle -> {} statuses, {} failed requests",
        st.status.len(),
        st.failed_requests.len()
    );
    Ok(())
}

/// Checks where the containers ran and how they exited, and unregisters accordingly.
async fn finish(rm: &mut AmRmClient, run: &Containers, s: &Settings) -> Result<(), Error> {
    let (ours, exits, node, want) = (&run.ours, &run.exits, &s.node, s.want);
    let hosts: Vec<String> = ours
        .iter()
        .map(|c| {
            c.node_id
                .as_ref()
                .map(|n| n.host().to_string())
                .unwrap_or_default()
        })
        .collect();
    // A container we stopped reports KILLED_BY_APPMASTER (-105); all others must exit 0.
    let all_ok = ours.iter().all(|c| {
        let e = exits[&container_id_string(c.id.as_ref().unwrap())];
        if run.stopped.contains(&c.id.unwrap()) {
            e == -105
        } else {
            e == 0
        }
    });
    let on_node = hosts.iter().all(|h| h == node);
    println!("TEST_AM: hosts={hosts:?} all_exit_0={all_ok} all_on_{node}={on_node}");
    println!("TEST_AM: hosts_csv={}", hosts.join(","));
    let (status, diag) = if all_ok {
        (
            FinalStatus::Succeeded,
            format!("{want} containers ran on {hosts:?}"),
        )
    } else {
        (FinalStatus::Failed, format!("exit statuses {exits:?}"))
    };
    rm.finish(status, &diag, "", Duration::from_secs(30))
        .await?;
    println!("TEST_AM: unregistered with {status:?}");
    if !all_ok {
        return Err(diag.into());
    }
    Ok(())
}

//! The loop: carries out what the sans-IO [`AmCore`] decides, one pass at a time, in the
//! order its calling contract states (see [`yarn_am_core::am::am_core`]).
//!
//! Each pass first does what the core asks (start launches after their journal entries,
//! send the allocate call that is due, fetch the node list, publish the view), then waits
//! for the first of: the allocate call in flight (an [`RmSession`] future that borrows
//! nothing), the core's next deadline, a driver command, a launch report, a node list, or
//! SIGTERM, and feeds it to the core. So no command ever waits on the RM, and nothing here
//! holds a borrow of the loop's state across a network call: the allocate call owns its
//! session, the node list is fetched by a task of its own, and the journal's durable append
//! is waited for without holding the journal.

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::pin::Pin;
use std::sync::Arc;

use tracing::warn;
use yarn_client::request_table::AllocateBatch;
use yarn_client::rest::NodeInfo;

use super::callers::{self, Callers};
use super::driver_process::{self, DriverProcess};
use super::journal_store::DURABLE_WAIT;
use super::rm::RmSession;
use super::start::Am;
use super::IDLE_HEARTBEAT;
use yarn_am_core::am::am_core::{AmCore, Ending, Outcome};
use yarn_am_core::am::events::{DriverCommand, RmReply};
use yarn_am_core::am::waiting::ClusterLook;
use yarn_am_core::driver::journal::Entry;

/// An allocate call in flight: owns its session, borrows nothing of the loop.
pub(super) type InFlight =
    Pin<Box<dyn Future<Output = (RmSession, AllocateBatch, RmReply)> + Send>>;

/// How the loop left the RM: its session, or the call in flight that holds it (abandoned
/// by the finish, with its connection, when it unregisters).
pub(super) struct RmState {
    pub session: Option<RmSession>,
    pub inflight: Option<InFlight>,
}

type NodeList = yarn_client::rest::Result<Vec<NodeInfo>>;

/// Runs the loop until the core has ended and drained, or SIGTERM; returns why it stopped.
/// A driver run by the AM (`driver`) ends the app when it exits.
pub(super) async fn run(
    am: &mut Am,
    session: RmSession,
    mut driver: Option<&mut DriverProcess>,
) -> (Ending, RmState) {
    let mut rm = RmState {
        session: Some(session),
        inflight: None,
    };
    // The node list fetched again when a container lands on a host of unknown rack: a
    // task of its own, so the loop never waits on RM REST (bounded by the client's timeout).
    let (listed_tx, mut listed) = tokio::sync::mpsc::channel::<NodeList>(1);
    let mut listing = false;
    // A look at the cluster when executors wait (why they do): a task of its own too.
    let (looked_tx, mut looked) = tokio::sync::mpsc::channel::<Option<ClusterLook>>(1);
    let mut callers = Callers::default();
    // The loop never waits on the RM: the allocate call is one more thing it selects on.
    let ending = loop {
        carry_out(am, &mut rm, &mut callers).await;
        if !listing && am.core.poll_nodes_wanted() {
            listing = true;
            let (rest, tx) = (am.rest.clone(), listed_tx.clone());
            tokio::spawn(async move {
                let _ = tx.send(rest.nodes(&[]).await).await;
            });
        }
        if am.core.poll_look_wanted(am.clock.now_ms()) {
            let (rest, tx, app) = (am.rest.clone(), looked_tx.clone(), am.env.app_id.clone());
            tokio::spawn(async move {
                let _ = tx.send(look_at_cluster(&rest, &app).await).await;
            });
        }
        callers::send_events(&mut am.core, &am.api.handle.events);
        am.api.handle.state.send_replace(Arc::new(am.core.view()));
        if let Some(ending) = am.core.ending() {
            if am.core.drained(am.clock.now_ms()) {
                break ending.clone();
            }
        }
        let clock = am.clock;
        let wake = am
            .core
            .poll_timeout()
            .map(|ms| clock.at(ms))
            .unwrap_or_else(|| tokio::time::Instant::now() + IDLE_HEARTBEAT);
        let core = &mut am.core;
        tokio::select! {
            (s, batch, reply) = async { rm.inflight.as_mut().expect("guarded").await }, if rm.inflight.is_some() => {
                rm.inflight = None;
                rm.session = Some(s);
                core.handle_allocated(clock.now_ms(), batch, reply);
            }
            _ = tokio::time::sleep_until(wake) => core.handle_timeout(clock.now_ms()),
            Some(call) = am.api.handle.commands.recv() => callers.handle(core, clock.now_ms(), call),
            Some(report) = am.launches.recv() => core.handle_launched(clock.now_ms(), report),
            Some(nodes) = listed.recv() => {
                listing = false;
                nodes_listed(core, clock.now_ms(), nodes);
            }
            Some(look) = looked.recv() => core.handle_cluster_look(clock.now_ms(), look.as_ref()),
            status = async { driver.as_mut().expect("guarded").exited().await }, if driver.is_some() => {
                let d = driver.take().expect("guarded");
                let finish = match status {
                    Ok(s) => driver_process::finish_request(s, d.message().as_deref()),
                    Err(e) => driver_process::finish_request(
                        std::process::ExitStatus::from_raw(1 << 8),
                        Some(&format!("waiting for the driver failed: {e}")),
                    ),
                };
                tracing::info!(?finish.status, %finish.diagnostics, "the driver ended");
                core.handle_command(clock.now_ms(), DriverCommand::Finish(finish));
            }
            // The NodeManager's SIGKILL follows SIGTERM within 250 ms: no drain, no waiting
            // for a call in flight.
            _ = am.sigterm.recv() => {
                warn!("SIGTERM: unregistering as KILLED");
                break Ending::Finish {
                    outcome: Outcome::Killed,
                    diagnostics: "the ApplicationMaster received SIGTERM".to_string(),
                };
            }
        }
    };
    callers.send_replies(&mut am.core);
    callers::send_events(&mut am.core, &am.api.handle.events);
    am.api.handle.state.send_replace(Arc::new(am.core.view()));
    (ending, rm)
}

/// The core's answers and events, its launches (after their journal entries) and the
/// allocate call, if one is due and none is in flight.
async fn carry_out(am: &mut Am, rm: &mut RmState, callers: &mut Callers) {
    // Before the journal: a poll reply goes out before the task starts it carries are
    // written (see below).
    callers.send_replies(&mut am.core);
    callers::send_events(&mut am.core, &am.api.handle.events);
    let launches = am.core.poll_launches();
    // Asked for on every pass, journal or not, so that entries never pile up in the core.
    let entries = am.core.poll_journal(&launches);
    let kv_writes = entries
        .iter()
        .any(|e| matches!(e, Entry::KvPut { .. } | Entry::KvDelete { .. }));
    let journaled = match am.journal.as_mut() {
        // Before the executors start: their ids are in the journal before any of them
        // can poll; and before a key-value write is acknowledged. Task starts and ends of
        // the last input are written here too, right after the reply that carried them; a
        // crash in between only reruns that task.
        Some(j) if !launches.is_empty() || kv_writes => {
            let durable = j.append_durable(&entries);
            durable.wait(DURABLE_WAIT).await
        }
        Some(j) => {
            j.append(&entries);
            true
        }
        // No staging folder: no later attempt could read a journal anyway.
        None => true,
    };
    am.core.handle_journaled(journaled);
    callers.send_replies(&mut am.core);
    if kv_writes {
        // Only a new revision wakes the watches (each then asks the loop again).
        let rev = am.core.kv_revision();
        am.api
            .handle
            .kv_revision
            .send_if_modified(|v| std::mem::replace(v, rev) != rev);
    }
    for l in launches {
        am.launcher.launch(
            l.executor,
            l.kind,
            l.declared.as_deref(),
            l.container,
            l.nm_token,
        );
    }
    if rm.inflight.is_none() {
        if let Some(batch) = am.core.poll_allocate(am.clock.now_ms()) {
            if let Some(s) = rm.session.take() {
                let progress = am.core.progress();
                rm.inflight = Some(Box::pin(s.allocate(batch, progress)));
            }
        }
    }
}

/// The app's queue and the node list, for why executors wait; `None` if RM REST failed
/// (each call is bounded by the client's timeout). A scheduler without queues (Fifo) gives
/// a look without one.
async fn look_at_cluster(rest: &yarn_client::rest::RmRest, app_id: &str) -> Option<ClusterLook> {
    let queue_name = match rest.app(app_id).await {
        Ok(r) => r.queue,
        Err(e) => {
            warn!(%e, "reading the app's queue for why executors wait");
            return None;
        }
    };
    let queue = match rest.leaf_queue(&queue_name).await {
        Ok(q) => q,
        Err(e) => {
            warn!(%e, "reading queue {queue_name} for why executors wait");
            None
        }
    };
    match rest.nodes(&[]).await {
        Ok(nodes) => Some(ClusterLook { queue, nodes }),
        Err(e) => {
            warn!(%e, "listing nodes for why executors wait");
            None
        }
    }
}

/// The node list fetched for a new host's rack came back (or its fetch failed).
fn nodes_listed(core: &mut AmCore, now_ms: u64, nodes: NodeList) {
    match nodes {
        Ok(nodes) => core.handle_nodes_listed(now_ms, Some(&nodes)),
        Err(e) => {
            warn!(%e, "fetching the node list for a new host's rack failed");
            core.handle_nodes_listed(now_ms, None);
        }
    }
}

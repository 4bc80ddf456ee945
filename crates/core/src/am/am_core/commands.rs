//! [`AmCore`]'s driver commands: the driver API's demands, kinds, kills, key-value requests
//! and finish, and the embedded job's executor polls; each answer is queued for the caller
//! its command named.

use super::*;

impl AmCore {
    /// A command from the driver API (or an executor poll).
    pub fn handle_command(&mut self, now_ms: u64, cmd: DriverCommand) {
        match cmd {
            DriverCommand::SetDemand(d) => {
                info!(
                    target = d.target_executors,
                    hosts = d.host_to_local_task_count.len(),
                    "new demand"
                );
                if self.to_completion.take().is_some() {
                    info!("a driver states the demand: it ends the app, not the executors' exits");
                }
                self.pool.set_demand(now_ms, d);
                // A repeated demand still asks for a prompt heartbeat, as a driver expects.
                self.urgent = true;
            }
            DriverCommand::DeclareKind { declaration, reply } => {
                let answer = self.declare_kind(declaration);
                self.reply(reply, answer);
            }
            DriverCommand::Progress(p) => self.reported_progress = Some(p.clamp(0.0, 1.0)),
            DriverCommand::Kill {
                executor_ids,
                reply,
            } => {
                let answer = self.kill(now_ms, executor_ids);
                self.reply(reply, answer);
            }
            // Reads are answered now; a write's answer waits for its journal entry
            // (`poll_journal`, then `handle_journaled`).
            DriverCommand::Kv { request, reply } => {
                if let Some(answer) = self.kv.handle(request, reply) {
                    self.reply(reply, answer);
                }
            }
            DriverCommand::ExecutorPoll { request, reply } => {
                let answer = self.poll(now_ms, request);
                // A reply the executor never gets (its call timed out) is found on its
                // next poll, which does not name those attempts (see `deliveries`).
                self.reply(reply, answer);
            }
            DriverCommand::Finish(f) => {
                let outcome = match f.status {
                    FinalOutcome::Succeeded => Outcome::Succeeded,
                    FinalOutcome::Failed => Outcome::Failed,
                    FinalOutcome::Killed => Outcome::Killed,
                };
                self.end(
                    now_ms,
                    Ending::Finish {
                        outcome,
                        diagnostics: f.diagnostics,
                    },
                );
            }
        }
        self.settle(now_ms);
    }

    /// Queues `answer` for the caller `to` (see [`Self::poll_reply`]).
    pub(super) fn reply(&mut self, to: ReplyTo, answer: impl Into<Reply>) {
        self.replies.push_back((to, answer.into()));
    }

    /// `POST /v1/kinds`: a kind of the declared shape, on the default kind's node label.
    fn declare_kind(
        &mut self,
        declaration: driver_api::KindDeclaration,
    ) -> Result<KindDeclared, crate::am::pool::DeclareError> {
        let base = self.pool.default_kind();
        let decl = crate::am::pool::DeclaredKind {
            shape: yarn_am_wire::spec::ExecutorKind {
                name: declaration.name.clone(),
                memory_mb: declaration.memory_mb,
                vcores: declaration.vcores,
                initial: 0,
                min: 0,
                max: declaration.max.unwrap_or(base.max),
                node_label: base.node_label.clone(),
                resources: declaration.resources,
                command: None,
            },
            env: declaration.env,
        };
        let answer = self
            .pool
            .declare_kind(decl)
            .map(|(index, created)| KindDeclared {
                name: declaration.name,
                index,
                created,
            });
        if let Err(e) = &answer {
            warn!(error = %e, "executor kind declaration refused");
        }
        answer
    }

    /// `POST /v1/executors/kill`.
    fn kill(&mut self, now_ms: u64, executor_ids: Vec<String>) -> KillOutcome {
        // A name that is no executor id is as unknown as an id the AM never ran.
        let mut unknown = Vec::new();
        let ids = executor_ids
            .into_iter()
            .filter_map(|s| s.parse().map_err(|_| unknown.push(s)).ok())
            .collect();
        let (killed, not_live) = self.pool.kill(now_ms, ids);
        unknown.extend(not_live.iter().map(ExecutorId::to_string));
        KillOutcome { killed, unknown }
    }

    fn poll(&mut self, now_ms: u64, request: yarn_am_wire::poll::PollRequest) -> PollReply {
        // A claim that is no executor id is refused below (`JobRun::poll`) like an unknown one.
        let id = request.executor_id.parse::<ExecutorId>().ok();
        if let Some(id) = id {
            self.pool.registry.heard(id, now_ms);
        }
        let job_over = self.job.as_ref().is_some_and(|j| j.finished().is_some());
        let reply = match self.job.as_mut() {
            // Only `yarn-am executor` processes poll, and only job runs start them.
            None => PollReply {
                shutdown: true,
                reason: Some("this application runs no embedded job".into()),
                ..Default::default()
            },
            // The AM stops for another reason than the job's end: no more work.
            Some(_) if self.ending.is_some() && !job_over => PollReply {
                shutdown: true,
                reason: Some("the ApplicationMaster is stopping".into()),
                ..Default::default()
            },
            Some(j) => j.poll(now_ms, request, &mut self.pool),
        };
        if let (true, Some(id)) = (reply.shutdown, id) {
            self.told_to_stop.insert(id);
        }
        reply
    }
}

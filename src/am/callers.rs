//! The callers waiting for the core's answers. A command that waits for one names it by a
//! [`ReplyTo`] (picked by the HTTP face) and comes with the caller's channel ([`Call`]);
//! the sans-IO core never sees the channel: the loop keeps it here under that id, and sends
//! on it the [`Reply`] the core queues for the id ([`AmCore::poll_reply`]).

use std::collections::HashMap;

use tokio::sync::{broadcast, oneshot};

use crate::http::Call;
use yarn_am_core::am::am_core::AmCore;
use yarn_am_core::am::events::{Reply, ReplyTo};
use yarn_am_wire::driver_api::ExecutorEvent;

/// The reply channels of the calls the core has not answered yet, by their ids.
#[derive(Debug, Default)]
pub(super) struct Callers {
    waiting: HashMap<ReplyTo, oneshot::Sender<Reply>>,
}

impl Callers {
    /// Feeds `call` to the core, keeping its reply channel until the core answers.
    pub fn handle(&mut self, core: &mut AmCore, now_ms: u64, call: Call) {
        if let (Some(to), Some(reply)) = (call.command.reply_to(), call.reply) {
            self.waiting.insert(to, reply);
        }
        core.handle_command(now_ms, call.command);
    }

    /// Sends every answer the core has queued to its caller.
    pub fn send_replies(&mut self, core: &mut AmCore) {
        while let Some((to, reply)) = core.poll_reply() {
            // A caller that stopped waiting is fine: a poll reply it lost is found on the
            // executor's next poll (see `deliveries`).
            if let Some(caller) = self.waiting.remove(&to) {
                let _ = caller.send(reply);
            }
        }
    }
}

/// Sends the core's executor events to the event stream's subscribers (none is fine: the
/// recent ones are in the published view too).
pub(super) fn send_events(core: &mut AmCore, events: &broadcast::Sender<ExecutorEvent>) {
    while let Some(event) = core.poll_event() {
        let _ = events.send(event);
    }
}

//! Where the test AM's asks come from: either three hand-written lines (node, rack, ANY)
//! or the request table (`yarn_client::request_table`), the AMRMClient equivalent, fed
//! through the wire conversions of `yarn_client::amrm`. Both must get the same containers
//! from the real RM.

use std::collections::HashMap;

use yarn_client::amrm::AllocateInput;
use yarn_client::ask::{Ask, Capability, Priority, ANY};
use yarn_client::proto::yarn::{AllocateResponseProto, ContainerIdProto, ContainerProto};
use yarn_client::request_table::{
    AllocateBatch, AllocateOutcome, AmrmState, ContainerRequest, MapRackResolver,
};

pub enum Planner {
    /// Asks sent once with absolute counts; the RM decrements its copy as it allocates.
    Manual {
        asks: Vec<Ask>,
        want: usize,
        taken: usize,
        releases: Vec<ContainerIdProto>,
    },
    /// The request table: one ContainerRequest per wanted container.
    Table {
        state: Box<AmrmState>,
        in_flight: Option<AllocateBatch>,
    },
}

impl Planner {
    pub fn manual(node: &str, rack: &str, mb: i64, want: usize, strict: bool) -> Self {
        let n = want as i32;
        // Like AMRMClient: the node line always relaxes; with strict locality the rack and
        // ANY lines say "do not fall back to this level".
        let cap = Capability::new(mb, 1);
        let mut asks = vec![
            Ask::new(Priority(1), node, cap, n),
            Ask::new(Priority(1), rack, cap, n),
            Ask::new(Priority(1), ANY, cap, n),
        ];
        asks[1].relax_locality = !strict;
        asks[2].relax_locality = !strict;
        Planner::Manual {
            asks,
            want,
            taken: 0,
            releases: Vec::new(),
        }
    }

    pub fn table(
        node: &str,
        racks: HashMap<String, String>,
        mb: i64,
        want: usize,
        strict: bool,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let mut state = AmrmState::new(MapRackResolver::new(racks), None);
        state.on_registered(Vec::new());
        for _ in 0..want {
            state.table.add(ContainerRequest {
                capability: Capability::new(mb, 1),
                nodes: vec![node.to_string()],
                racks: Vec::new(),
                priority: Priority(1),
                relax_locality: !strict,
                node_label: None,
                allocation_request_id: 0,
            })?;
        }
        Ok(Planner::Table {
            state: Box::new(state),
            in_flight: None,
        })
    }

    /// The next heartbeat's contents.
    pub fn next_input(&mut self, progress: f32) -> AllocateInput {
        match self {
            Planner::Manual { asks, releases, .. } => AllocateInput {
                asks: std::mem::take(asks),
                releases: std::mem::take(releases),
                progress,
                ..Default::default()
            },
            Planner::Table { state, in_flight } => {
                let batch = state.take_batch();
                let input = AllocateInput::from_batch(&batch, progress);
                *in_flight = Some(batch);
                input
            }
        }
    }

    /// The heartbeat failed: what it carried must go out again.
    pub fn on_failure(&mut self, input: AllocateInput) {
        match self {
            Planner::Manual { asks, releases, .. } => {
                asks.extend(input.asks);
                releases.extend(input.releases);
            }
            Planner::Table { state, in_flight } => {
                if let Some(b) = in_flight.take() {
                    state.restore_batch(b);
                }
            }
        }
    }

    pub fn on_success(&mut self, resp: &AllocateResponseProto) {
        if let Planner::Table { state, in_flight } = self {
            in_flight.take();
            state.on_allocate_success(AllocateOutcome::from(resp));
        }
    }

    /// Charges an allocated container to a request; `false` = surplus, released.
    pub fn charge(&mut self, c: &ContainerProto) -> bool {
        match self {
            Planner::Manual {
                want,
                taken,
                releases,
                ..
            } => {
                if *taken < *want {
                    *taken += 1;
                    true
                } else {
                    releases.push(c.id.unwrap());
                    false
                }
            }
            Planner::Table { state, .. } => {
                let r = c.resource.clone().unwrap_or_default();
                let cap = Capability::new(r.memory(), r.virtual_cores());
                let host = c
                    .node_id
                    .as_ref()
                    .map(|n| n.host().to_string())
                    .unwrap_or_default();
                let prio = Priority(c.priority.unwrap_or_default().priority());
                match state.table.match_allocated(prio, &host, cap) {
                    Some(id) => {
                        // Satisfied: without this the next ask would re-inflate the count.
                        let _ = state.table.remove(id);
                        true
                    }
                    None => {
                        state.releases.release((&c.id.unwrap()).into());
                        false
                    }
                }
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Planner::Manual { .. } => "manual",
            Planner::Table { .. } => "request_table",
        }
    }
}

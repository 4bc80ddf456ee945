//! Where the test AM's asks come from: either three hand-written lines (node, rack, ANY)
//! or the request table (`yarn_client::request_table`), the AMRMClient equivalent, fed
//! through the wire conversions of `yarn_client::amrm`. Both must get the same containers
//! from the real RM.

use std::collections::HashMap;

use yarn_client::amrm::AllocateInput;
use yarn_client::ask::{Ask, Capability, Priority, ANY};
use yarn_client::proto::yarn::{AllocateResponseProto, ContainerProto};
use yarn_client::request_table::{
    AllocateBatch, AllocateOutcome, AmrmState, ContainerRequest, MapRackResolver,
};
use yarn_client::token::Token;

/// The heartbeat state (response id, NM tokens, releases, AMRM token) is always the
/// request table's [`AmrmState`]: the AMRM client keeps none of it.
pub struct Planner {
    state: Box<AmrmState>,
    mode: Mode,
    in_flight: Option<AllocateBatch>,
}

enum Mode {
    /// Asks sent once with absolute counts; the RM decrements its copy as it allocates.
    Manual {
        asks: Vec<Ask>,
        want: usize,
        taken: usize,
    },
    /// The request table: one ContainerRequest per wanted container.
    Table,
}

impl Planner {
    fn new(racks: HashMap<String, String>, mode: Mode) -> Self {
        let mut state = AmrmState::new(MapRackResolver::new(racks), None);
        state.on_registered(Vec::new());
        Planner {
            state: Box::new(state),
            mode,
            in_flight: None,
        }
    }

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
        Planner::new(
            HashMap::new(),
            Mode::Manual {
                asks,
                want,
                taken: 0,
            },
        )
    }

    pub fn table(
        node: &str,
        racks: HashMap<String, String>,
        mb: i64,
        want: usize,
        strict: bool,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let mut p = Planner::new(racks, Mode::Table);
        for _ in 0..want {
            p.state.table.add(ContainerRequest {
                capability: Capability::new(mb, 1),
                nodes: vec![node.to_string()],
                racks: Vec::new(),
                priority: Priority(1),
                relax_locality: !strict,
                node_label: None,
                allocation_request_id: 0,
                resources: Vec::new(),
            })?;
        }
        Ok(p)
    }

    /// The next heartbeat's contents.
    pub fn next_input(&mut self, progress: f32) -> AllocateInput {
        let batch = self.state.take_batch();
        let mut input = AllocateInput::from_batch(&batch, progress);
        if let Mode::Manual { asks, .. } = &mut self.mode {
            input.asks = std::mem::take(asks);
        }
        self.in_flight = Some(batch);
        input
    }

    /// The heartbeat failed: what it carried must go out again.
    pub fn on_failure(&mut self, input: AllocateInput) {
        if let Mode::Manual { asks, .. } = &mut self.mode {
            asks.extend(input.asks);
        }
        if let Some(b) = self.in_flight.take() {
            self.state.restore_batch(b);
        }
    }

    pub fn on_success(&mut self, resp: &AllocateResponseProto) {
        self.in_flight.take();
        self.state.on_allocate_success(AllocateOutcome::from(resp));
    }

    /// The NM token for `host:port`, if the RM has sent one.
    pub fn nm_token(&self, node: &str) -> Option<&Token> {
        self.state.nm_tokens.get(node)
    }

    /// Charges an allocated container to a request; `false` = surplus, released.
    pub fn charge(&mut self, c: &ContainerProto) -> bool {
        let fits = match &mut self.mode {
            Mode::Manual { want, taken, .. } => {
                let fits = *taken < *want;
                *taken += usize::from(fits);
                fits
            }
            Mode::Table => {
                let r = c.resource.clone().unwrap_or_default();
                let cap = Capability::new(r.memory(), r.virtual_cores());
                let host = c
                    .node_id
                    .as_ref()
                    .map(|n| n.host().to_string())
                    .unwrap_or_default();
                let prio = Priority(c.priority.unwrap_or_default().priority());
                match self.state.table.match_allocated(prio, &host, cap) {
                    Some(id) => {
                        // Satisfied: without this the next ask would re-inflate the count.
                        let _ = self.state.table.remove(id);
                        true
                    }
                    None => false,
                }
            }
        };
        if !fits {
            self.state.releases.release((&c.id.unwrap()).into());
        }
        fits
    }

    pub fn name(&self) -> &'static str {
        match self.mode {
            Mode::Manual { .. } => "manual",
            Mode::Table => "request_table",
        }
    }
}

//! The AM's decisions, sans-IO: [`am_core::AmCore`] owns the executor pool, the embedded
//! job and the driver's commands, and answers every input with what the shell must do.
//! Nothing here opens a socket or reads the clock: the shell passes `now` in, and feeds the
//! inputs defined in [`events`] (nothing here imports from the shell, `crate::am`).

pub mod am_core;
pub mod cluster_view;
pub mod deliveries;
pub mod events;
#[cfg(any(test, feature = "bench"))]
pub mod fixtures;
pub mod held_back;
pub mod interval;
pub mod job_run;
pub mod pool;
pub mod preemption;
pub mod registry;
pub mod scheduler_address;
pub mod waiting;

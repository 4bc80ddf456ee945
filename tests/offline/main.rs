//! The tests that need no cluster, in one binary: the allocator's and the driver's pure logic
//! (unit-style, property and simulation tests) and the CLI as a user runs it against loopback
//! servers or closed ports. One binary links the yarn-am crate once instead of once per file;
//! each module was a test binary of its own before and keeps its tests' names.

mod support {
    //! Helpers shared by the modules here.
    pub mod allocator;
}

mod allocator_overgrant;
mod allocator_props;
mod allocator_sim;
mod allocator_tracker;
mod allocator_update;
mod cli_executor;
mod cli_split;
mod cli_submit;
mod driver_props;
mod driver_sim;
mod plan_cli;
mod rules;
mod split_task_commands;

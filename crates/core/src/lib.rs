//! The sans-IO core: every decision yarn-am makes, as plain data in and data out. No
//! sockets, no clock reads, no tasks: the shells (`am`, `executor`, `submit`) feed it
//! inputs with the time they happened and carry out what it returns.

pub mod allocator;
pub mod am;
pub mod driver;
pub mod inputs;
pub mod kv;
pub mod request_book;
pub mod topology;

// Data types of the contracts, owned by the contracts layer and used here under their
// old names.
pub use yarn_am_wire::{demand, ids};
pub mod sim;

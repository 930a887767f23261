//! `dreadpool-top`: a live terminal dashboard of a dreadpool's workers.
//!
//! Model / update / view: [`state`] holds what is known and what the user
//! chose, [`input`] maps keys to actions, [`view`] draws the model, and
//! [`source`] is where samples come from (the in-process demo pool under the
//! [`load`] generator, or another process's pools over an exporter
//! connection). The binary's `main` only wires them into a loop.

pub mod cli;
pub mod cpu;
pub mod explain;
#[doc(hidden)]
pub mod fixture;
pub mod headless;
pub mod input;
pub mod load;
pub mod pattern;
pub mod record;
pub mod rng;
pub mod source;
pub mod state;
pub mod term;
pub mod trace_file;
pub mod view;

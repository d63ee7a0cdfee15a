//! The command-line crate's integration tests, one binary (a binary per file cost a link step
//! each): the `aiccsim` command as a user meets it (`cli`), malformed scenarios (`bad_inputs`),
//! the shipped examples and experiments, ns-3 and Chakra import, sweeps, and builds stopped from outside.
//!
//! Run one module with `cargo test -p aiccsim-cli --test all sweep`.

mod common;

mod bad_inputs;
mod build_stops;
mod chakra;
mod cli;
mod examples;
mod experiments;
mod limits;
mod ns3;
mod simai;
mod sweep;

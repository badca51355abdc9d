//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary: config, workspace, launchers, layers, pipeline, store, reports.

pub mod changeset;
pub mod config;
pub mod layers;
pub mod verdict;

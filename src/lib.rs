//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary: config, workspace, launchers, layers, pipeline, store, reports.

pub mod agent;
pub mod changeset;
pub mod config;
pub mod decision;
pub mod demo;
pub mod doctor;
pub mod event;
pub mod feedback;
pub mod finalize;
pub mod launch;
pub mod layers;
pub mod pipeline;
pub mod printer;
pub mod reattach;
pub mod report;
pub mod retry;
pub mod runner;
pub mod store;
pub mod task;
pub mod text;
pub mod tui;
pub mod verdict;
pub mod verify;
pub mod workspace;

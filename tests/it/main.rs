//! The integration tests of the `rascal` crate, one binary (the crate's other
//! crates have only unit tests): each module is one area, `common` holds
//! the shared helpers (real repositories, the real binary, tmux, docker).

mod common;

mod agents;
mod agreement;
mod architecture;
mod budget;
mod bypass;
mod changeset;
mod changeset_run;
mod changeset_stream;
mod compare;
mod config;
mod copy_mode;
mod criteria;
mod demo;
mod diagnostics;
mod docker;
mod doctor_outside;
mod doctor_safety;
mod egress;
mod every_byte;
mod evidence;
mod gc;
mod gc_orphans;
mod guardrails;
mod home_e2e;
mod hostile;
mod impossible;
mod init;
mod journal;
mod kept_changes;
mod keys_table;
mod kubernetes;
mod log_flood;
mod permissions;
mod pipeline;
mod props;
mod review;
mod run;
mod run_preflight;
mod secret_rules;
mod secrets;
mod secrets_config;
mod select_finalize;
mod store_faults;
mod test_integrity;
mod tui_cli;
mod tui_e2e;
mod tui_hangup;
mod tui_keys;
mod tui_loop;
mod tui_screens;
mod tui_scrollback;
mod tui_width;

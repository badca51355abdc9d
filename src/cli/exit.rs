//! How a command ends: the engine's error and its one mapping from an
//! outcome to the process exit code (`rascal_engine::error`), under the
//! names the CLI's commands use.

pub use rascal_engine::error::{exit_code, Error as CliError, ESCALATED, FAIL, PASS};

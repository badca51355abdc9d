//! The command line: one file per subcommand.

pub mod demo;

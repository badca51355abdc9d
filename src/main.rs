//! The `rascal` binary: parse the command line, run it with the library's
//! `cli`, and exit. An error is printed here and only here; its exit code
//! (0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated, 4 contested) is
//! picked by `rascal::cli::exit_code`.

use clap::Parser;
use rascal::cli::{dispatch, exit_code, Cli};
use rascal_core::text::{cut, sanitize};
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = dispatch(Cli::parse());
    if let Err(e) = &outcome {
        // An error can quote a config file or an agent: shown, never obeyed.
        let text = e.to_string();
        let mut lines = text.lines().map(|l| sanitize(&cut(l, 2000)));
        eprintln!("rascal: error: {}", lines.next().unwrap_or_default());
        for l in lines {
            eprintln!("{l}");
        }
    }
    ExitCode::from(exit_code(&outcome) as u8)
}

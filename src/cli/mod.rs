//! The command line: one file per subcommand. `main` parses [`Cli`], hands
//! it to [`dispatch`], prints a [`CliError`] once and exits with
//! [`exit::exit_code`].

pub(crate) mod args;
pub(crate) mod attach;
pub(crate) mod check;
pub(crate) mod combine;
pub(crate) mod decide;
pub mod demo;
pub(crate) mod doctor;
pub(crate) mod egress_forward;
pub(crate) mod exit;
pub(crate) mod finalize;
pub(crate) mod gc;
pub(crate) mod home;
pub(crate) mod init;
pub(crate) mod last;
pub(crate) mod list;
pub(crate) mod report;
pub(crate) mod retry;
pub(crate) mod run;
pub(crate) mod scripted_agent;
pub(crate) mod shared;
pub(crate) mod show;
pub(crate) mod verify;

pub use args::{Cli, Command};
pub use exit::{exit_code, CliError};

/// Run one parsed command line; `Ok` carries the verdict's exit code.
pub fn dispatch(cli: Cli) -> Result<i32, CliError> {
    let dir = cli.dir();
    let Some(mut command) = cli.command else {
        return home::home(&dir);
    };
    last::resolve(&dir, &mut command)?;
    match command {
        Command::Run(a) => run::run(&dir, a),
        Command::Select(a) => decide::select(&dir, a),
        Command::Override(a) => decide::override_check(&dir, a),
        Command::Retry(a) => retry::retry(&dir, a),
        Command::Combine(a) => combine::combine(&dir, a),
        Command::Escalate(a) => decide::escalate(&dir, a),
        Command::Finalize(a) => finalize::finalize(&dir, a),
        Command::Report(a) => report::report(&dir, a),
        Command::Attach(a) => attach::attach(&dir, a),
        Command::Doctor(a) => doctor::doctor(&dir, a),
        Command::Check(a) => check::check(&dir, a),
        Command::List(a) => list::list(&dir, a),
        Command::Show(a) => show::show(&dir, a),
        Command::Verify(a) => verify::verify(&dir, a),
        Command::Demo(a) => demo::demo(a),
        Command::Gc(a) => gc::gc(&dir, a),
        Command::Init(a) => init::init(&dir, a),
        Command::ScriptedAgent(a) => scripted_agent::scripted_agent(&dir, a),
        Command::EgressForward(a) => egress_forward::egress_forward(a),
    }
}

//! The command line's grammar: `rascal [-C DIR] COMMAND …` as clap types.
//! Each subcommand's arguments are one struct, handed whole to the file
//! that runs it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "rascal",
    version,
    about = "Hand one coding task to several AI agents and know which result can be trusted",
    after_help = "Exit codes: 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated to a human, 4 contested (candidates disagree; you pick)."
)]
pub struct Cli {
    /// Run as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// With no command: the home screen (the runs of this repository) in a
    /// terminal, else the list `rascal list` prints.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The directory to work in: `-C DIR`, else the current one.
    pub fn dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a task on one or more agents and verify each candidate.
    Run(RunArgs),
    /// Select the candidate to finalize.
    Select(SelectArgs),
    /// Accept a failed check (recorded with your name and reason; never erases the verdict).
    Override(OverrideArgs),
    /// Send one candidate of a finished run back to its agent with feedback;
    /// it is verified again and the run re-ranked (all attempts are kept).
    Retry(RetryArgs),
    /// Hand a finished run's best passing candidates to the combining agent
    /// (`combine:` in .rascal/verification.yaml); its change becomes the
    /// candidate `combined`, verified and ranked with the others.
    Combine(CombineArgs),
    /// Hand a run (or one candidate) to a human.
    Escalate(EscalateArgs),
    /// Commit the selected candidate on a branch and write the PR body.
    Finalize(FinalizeArgs),
    /// Print a run's report: md (the PR body), json or sarif.
    Report(ReportArgs),
    /// Resume a docker run whose rascal died (reattach to its containers);
    /// in a terminal, otherwise open the TUI on the run's record, following it.
    Attach(AttachArgs),
    /// Check the setup: each agent's CLI, version and credentials; the Docker
    /// engine; rascal containers of runs that are gone.
    Doctor(DoctorArgs),
    /// Run guardrails and permissions on the working tree (no agent).
    Check(CheckArgs),
    /// List the runs recorded in this repository.
    List(ListArgs),
    /// Show a recorded run as it printed live.
    Show(ShowArgs),
    /// Check a run's record against its hash chain (exit 1 when it was
    /// changed after it was written).
    Verify(VerifyArgs),
    /// Run the bundled sample: four scripted agents on a sample repository.
    Demo(DemoArgs),
    /// Remove what finished runs left behind (workspaces, run files, stopped
    /// containers, stale caches) and compact the store. Run records are
    /// kept unless --forget; finalized branches are never touched.
    Gc(super::gc::GcArgs),
    /// Write a commented .rascal/ for this repository: the agent CLIs on
    /// PATH, a scripted agent, guardrails for its languages, permissions.
    Init(InitArgs),
    #[command(name = "__scripted-agent", hide = true)]
    ScriptedAgent(ScriptedAgentArgs),
    #[command(name = "__egress-forward", hide = true)]
    EgressForward(EgressForwardArgs),
}

// The argument structs carry no doc comment of their own: the variant's
// above is the subcommand's help.

#[derive(Args)]
pub struct RunArgs {
    /// What the agents should do (or use --spec / --issue).
    #[arg(required_unless_present_any = ["spec", "issue"])]
    pub instruction: Option<String>,
    /// Run the task in .rascal/specs/NAME.yaml (read from the base commit).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["instruction", "issue"])]
    pub spec: Option<String>,
    /// Run the task in a Markdown issue body (`## Acceptance Criteria`, `## Constraints`).
    #[arg(long, value_name = "FILE.md", conflicts_with = "instruction")]
    pub issue: Option<PathBuf>,
    /// Agent name from .rascal/config.yaml (repeat for several candidates).
    #[arg(long = "agent", short = 'a', value_delimiter = ',')]
    pub agents: Vec<String>,
    /// Base commit (branch, tag or sha) the candidates start from.
    #[arg(long, default_value = "HEAD")]
    pub base: String,
    /// Print results as lines (no TUI).
    #[arg(long)]
    pub headless: bool,
    /// Print one JSON document at the end (implies --headless).
    #[arg(long)]
    pub json: bool,
    /// Agent timeout, overriding the config (e.g. 90s, 5m).
    #[arg(long, value_parser = parse_dur)]
    pub timeout: Option<std::time::Duration>,
    /// Do not print agent log lines.
    #[arg(long)]
    pub quiet: bool,
    /// TUI theme (dark, light, high-contrast); default from `theme:` in config.
    #[arg(long)]
    pub theme: Option<String>,
    /// Candidates per agent (compare mode), e.g. `--n 3`.
    #[arg(long)]
    pub n: Option<u32>,
    /// Select the comparator's pick when it passes, then finalize it.
    #[arg(long)]
    pub auto: bool,
    /// A warning is a failure: exit 1 when the best candidate only warns
    /// (for CI).
    #[arg(long)]
    pub strict: bool,
    /// With --auto: push the branch to this remote (name or URL).
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// With --auto: open a pull request with `gh` (or print the command).
    #[arg(long)]
    pub pr: bool,
    /// Where agents run, overriding `launcher:` in .rascal/config.yaml.
    #[arg(long, value_enum)]
    pub launcher: Option<LauncherArg>,
    /// Narrow the permissions for this run: agents may only change paths
    /// matching these globs (on top of .rascal/permissions.yaml).
    #[arg(long = "allow-path", value_name = "GLOB")]
    pub allow_paths: Vec<String>,
    /// Narrow the permissions for this run: also deny these globs.
    #[arg(long = "deny-path", value_name = "GLOB")]
    pub deny_paths: Vec<String>,
    /// Read .rascal/ (config, guardrails, permissions, specs) from the
    /// working tree instead of the base commit; the run records it.
    #[arg(long)]
    pub config_from_worktree: bool,
    /// Plan, then execute: the planner (`plan:` in
    /// .rascal/verification.yaml) proposes acceptance criteria, a human
    /// approves them, then the candidates start.
    #[arg(long)]
    pub plan: bool,
    /// With a plan: accept the planner's proposal as it is (headless);
    /// without it a headless plan is printed and the run exits 3. Refused
    /// when a criterion is vacuous (the unchanged base meets it).
    #[arg(long)]
    pub approve: bool,
    /// With --approve: accept vacuous criteria too (they never count as
    /// evidence).
    #[arg(long, requires = "approve")]
    pub allow_vacuous: bool,
}

#[derive(Args)]
pub struct SelectArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    pub candidate: String,
    /// Why (required with --force).
    #[arg(long, default_value = "")]
    pub reason: String,
    /// Select a candidate that did not pass (with a --reason).
    #[arg(long)]
    pub force: bool,
}

#[derive(Args)]
pub struct OverrideArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    pub candidate: String,
    /// agent | guardrails | permissions | criteria | review
    #[arg(long)]
    pub layer: String,
    /// The check's name, e.g. `build`.
    #[arg(long)]
    pub check: String,
    /// Override one issue rule only.
    #[arg(long)]
    pub rule: Option<String>,
    /// Why the failure can be accepted (required).
    #[arg(long)]
    pub reason: String,
    /// Also accept, with the same reason, every check that was skipped
    /// (never ran) because of a failure — else the candidate stays FAIL.
    #[arg(long)]
    pub with_skipped: bool,
}

#[derive(Args)]
pub struct RetryArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    pub candidate: String,
    /// What the agent should fix.
    #[arg(long)]
    pub feedback: String,
    #[arg(long)]
    pub json: bool,
    /// Do not print agent log lines.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct CombineArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    #[arg(long)]
    pub json: bool,
    /// Do not print agent log lines.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct EscalateArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    pub candidate: Option<String>,
    /// What the human should look at (required).
    #[arg(long, default_value = "")]
    pub note: String,
}

#[derive(Args)]
pub struct FinalizeArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    /// Push the branch to this remote (name or URL).
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Open a pull request with `gh` (or print the command).
    #[arg(long)]
    pub pr: bool,
    /// When the run's branch already exists, commit on a fresh one
    /// (`…-2`, `…-3`) instead of refusing.
    #[arg(long)]
    pub new_branch: bool,
    /// Commit on the run's base even when the base branch has new commits
    /// (default: rebase the verified change onto them).
    #[arg(long)]
    pub no_rebase: bool,
    /// Your choice of candidate, recorded with `--reason` (for a contested
    /// run, or to finalize another than the pick).
    #[arg(long, value_name = "CANDIDATE", requires = "reason")]
    pub pick: Option<String>,
    /// Why you chose `--pick` (recorded in the run's journal).
    #[arg(long, value_name = "TEXT", requires = "pick")]
    pub reason: Option<String>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    #[arg(long, value_enum, default_value = "md")]
    pub format: rascal_engine::output::Format,
}

#[derive(Args)]
pub struct AttachArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    #[arg(long)]
    pub json: bool,
    /// Do not print agent log lines.
    #[arg(long)]
    pub quiet: bool,
    /// TUI theme (dark, light, high-contrast).
    #[arg(long)]
    pub theme: Option<String>,
}

#[derive(Args)]
pub struct DoctorArgs {
    /// Remove containers whose run is not in this repository's store.
    #[arg(long)]
    pub remove: bool,
    #[arg(long)]
    pub json: bool,
    /// Check the agents of .rascal/ in the working tree instead of HEAD's.
    #[arg(long)]
    pub config_from_worktree: bool,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Compare the working tree against this commit.
    #[arg(long, default_value = "HEAD")]
    pub base: String,
    #[arg(long)]
    pub json: bool,
    /// Read .rascal/ from the working tree instead of the base commit.
    #[arg(long)]
    pub config_from_worktree: bool,
    /// A warning is a failure: exit 1 on WARN (for CI).
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args)]
pub struct ListArgs {
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    #[arg(long)]
    pub json: bool,
    /// Do not print agent log lines.
    #[arg(long)]
    pub quiet: bool,
    /// Where the time went instead: each candidate's checks with their
    /// durations, the test runs' steps, and the critical path (with
    /// `--json`, the same as a document).
    #[arg(long)]
    pub timings: bool,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The run: its id, or `last` for the newest.
    pub run: String,
    /// Also check that this chain head (as published in the PR body) is
    /// still part of the run's record.
    #[arg(long, value_name = "HEAD")]
    pub expect: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct DemoArgs {
    #[arg(long)]
    pub headless: bool,
    /// Keep the sample repository (its path is printed).
    #[arg(long)]
    pub keep: bool,
    /// No pauses: the scripted agents play as fast as they can (by default
    /// they take their time, so each layer can be seen landing).
    #[arg(long)]
    pub fast: bool,
    /// TUI theme (dark, light, high-contrast).
    #[arg(long)]
    pub theme: Option<String>,
    /// The other ending: two candidates pass everything and no test tells
    /// them apart; a scripted discriminator's probe finds an input where
    /// they differ, and the run ends CONTESTED (exit 4) with that input as
    /// a question for you (`a` on the dashboard, one digit answers).
    #[arg(long)]
    pub contested: bool,
}

#[derive(Args)]
pub struct InitArgs {
    /// Commit the .rascal/ files it writes (only those; your staged changes stay staged).
    #[arg(long)]
    pub commit: bool,
    /// Overwrite .rascal/ files that exist.
    #[arg(long)]
    pub force: bool,
    /// Print what it would write; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args)]
pub struct ScriptedAgentArgs {
    pub file: PathBuf,
}

#[derive(Args)]
pub struct EgressForwardArgs {
    pub socket: PathBuf,
    pub port: u16,
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LauncherArg {
    Process,
    Docker,
    Kubernetes,
}

impl From<LauncherArg> for rascal_core::config::LauncherKind {
    fn from(l: LauncherArg) -> Self {
        match l {
            LauncherArg::Process => rascal_core::config::LauncherKind::Process,
            LauncherArg::Docker => rascal_core::config::LauncherKind::Docker,
            LauncherArg::Kubernetes => rascal_core::config::LauncherKind::Kubernetes,
        }
    }
}

fn parse_dur(s: &str) -> Result<std::time::Duration, rascal_core::Error> {
    rascal_core::config::duration::parse_duration(s).map(|d| d.get())
}

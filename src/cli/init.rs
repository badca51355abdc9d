//! `rascal init [--commit] [--force] [--dry-run]`: write a commented
//! `.rascal/` for this repository (agents found on PATH, a scripted agent
//! that needs no key, guardrails for each language found, permissions
//! protecting CI, `.rascal/` and the lockfiles), say what was found and
//! written, and how to commit it — or commit exactly those files.

use super::args::InitArgs;
use super::exit::{CliError, PASS};
use super::shared::out;
use rascal_engine::init::{self, InitError, Plan};
use std::path::Path;

pub fn init(dir: &Path, args: InitArgs) -> Result<i32, CliError> {
    let path_var = std::env::var("PATH").ok();
    let plan = init::plan(dir, path_var.as_deref()).map_err(usage)?;
    if args.dry_run {
        out(dry_run(&plan, &args));
        return Ok(PASS);
    }
    init::check_overwrite(&plan, args.force).map_err(usage)?;
    init::write(&plan).map_err(usage)?;
    let committed = if args.commit {
        Some(init::commit(&plan.root, &plan.files).map_err(usage)?)
    } else {
        None
    };
    let mut lines = found(&plan);
    lines.push(String::new());
    lines.push("wrote:".into());
    lines.extend(wrote(&plan));
    lines.extend(notes(&plan));
    lines.push(String::new());
    match committed {
        Some(c) => {
            lines.push(format!(
                "committed {} \"{}\"{}: only the .rascal/ files above; your other changes, staged or not, are as they were",
                &c.id.to_string()[..8],
                c.title,
                c.branch.map(|b| format!(" on {b}")).unwrap_or_default()
            ));
        }
        None => {
            lines.push(
                "next: rascal reads .rascal/ from a run's base commit, so commit it first:".into(),
            );
            lines.push(format!(
                "  git add .rascal && git commit -m \"{}\"",
                init::COMMIT_TITLE
            ));
        }
    }
    lines.push(format!(
        "{} without an API key: rascal run --agent {} \"{}\"",
        if args.commit { "try it" } else { "then try it" },
        init::SCRIPTED_AGENT,
        init::FIRST_TASK
    ));
    out(lines);
    Ok(PASS)
}

/// Every init error is a usage or setup problem (exit 2), said as is.
fn usage(e: InitError) -> CliError {
    match e {
        InitError::Workspace(w) => CliError::Workspace(w),
        e => CliError::Usage(e.to_string()),
    }
}

/// What was found: the projects, CI, and the agent CLIs.
fn found(plan: &Plan) -> Vec<String> {
    let mut lines = vec![
        format!("rascal init in {}", plan.root.display()),
        "found:".into(),
    ];
    if plan.detected.projects.is_empty() {
        lines.push(
            "  no Cargo.toml, go.mod, pyproject.toml, requirements*.txt, setup.py or package.json: guardrails.yaml has the built-in checks only".into(),
        );
    }
    for p in &plan.detected.projects {
        lines.push(format!("  {}", p.summary));
    }
    if !plan.detected.ci.is_empty() {
        lines.push(format!("  CI: {}", plan.detected.ci.join(", ")));
    }
    lines.push("agent CLIs:".into());
    let width = init::KNOWN_CLIS
        .iter()
        .map(|c| c.program.len())
        .chain([init::SCRIPTED_AGENT.len()])
        .max()
        .unwrap_or(0);
    for cli in init::KNOWN_CLIS {
        let what = match plan.found.iter().find(|f| f.cli.program == cli.program) {
            Some(f) => format!(
                "{} (credentials: ${})",
                f.path.display(),
                cli.env.join(", $")
            ),
            None => "not on PATH (a commented-out example)".into(),
        };
        lines.push(format!("  {:width$}  {what}", cli.program));
    }
    lines.push(format!(
        "  {:width$}  built in, needs no API key (scenario {})",
        init::SCRIPTED_AGENT,
        rascal_exec::agents::scripted::FIRST_RUN
    ));
    lines
}

/// One line per file: its path and what it holds.
fn wrote(plan: &Plan) -> Vec<String> {
    let width = plan.files.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    plan.files
        .iter()
        .map(|(path, _)| {
            let what = match *path {
                rascal_core::config::CONFIG_FILE => {
                    let mut agents: Vec<String> = plan
                        .found
                        .iter()
                        .map(|f| f.cli.program.to_string())
                        .collect();
                    agents.push(init::SCRIPTED_AGENT.into());
                    format!(
                        "agents {} · strategy [{}] · launcher process",
                        agents.join(", "),
                        init::strategy_agents(&plan.found).join(", ")
                    )
                }
                rascal_core::config::GUARDRAILS_FILE => {
                    let mut names: Vec<String> = plan
                        .detected
                        .projects
                        .iter()
                        .flat_map(|p| &p.checks)
                        .filter(|c| c.enabled)
                        .map(|c| c.name.clone())
                        .collect();
                    names.extend(["secrets".into(), "diff-size".into()]);
                    names.join(", ")
                }
                rascal_core::config::PERMISSIONS_FILE => {
                    let mut denied: Vec<String> = plan.detected.ci.clone();
                    if !denied.iter().any(|c| c == init::CI_DEFAULT) {
                        denied.insert(0, init::CI_DEFAULT.into());
                    }
                    denied.push(".rascal/**".into());
                    denied.extend(
                        plan.detected
                            .projects
                            .iter()
                            .flat_map(|p| p.lockfiles.iter().cloned()),
                    );
                    format!("denies {}", denied.join(", "))
                }
                _ => format!("review by {}", init::reviewers(&plan.found).join(", ")),
            };
            format!("  {path:width$}  {what}")
        })
        .collect()
}

fn notes(plan: &Plan) -> Vec<String> {
    let mut lines: Vec<String> = plan
        .detected
        .projects
        .iter()
        .flat_map(|p| &p.notes)
        .map(|n| format!("note: {n}"))
        .collect();
    for m in &plan.uncommitted {
        lines.push(format!(
            "note: {m} is not committed yet: agents start from the last commit, so commit it too"
        ));
    }
    if !lines.is_empty() {
        lines.insert(0, String::new());
    }
    lines
}

/// `--dry-run`: each file's text, and what would happen.
fn dry_run(plan: &Plan, args: &InitArgs) -> Vec<String> {
    let mut lines = found(plan);
    lines.extend(notes(plan));
    for (path, text) in &plan.files {
        lines.push(String::new());
        lines.push(format!("── {path} ──"));
        lines.extend(text.lines().map(str::to_string));
    }
    lines.push(String::new());
    let refused = !plan.existing.is_empty() && !args.force;
    lines.push(if refused {
        format!(
            "dry run: nothing written; without --force rascal init would refuse: {} already {}",
            plan.existing.join(", "),
            if plan.existing.len() == 1 {
                "exists"
            } else {
                "exist"
            }
        )
    } else if args.commit {
        format!(
            "dry run: nothing written; rascal init would write {} and commit {}",
            rascal_core::text::plural(plan.files.len() as u64, "file"),
            if plan.files.len() == 1 { "it" } else { "them" }
        )
    } else {
        format!(
            "dry run: nothing written; rascal init would write {}",
            rascal_core::text::plural(plan.files.len() as u64, "file")
        )
    });
    lines
}

//! `rascal check`: guardrails and permissions on the working tree against a
//! base commit, no agent involved.

use super::args::CheckArgs;
use super::exit::CliError;
use super::shared::{out, say};
use rascal_core::model::event::WorkingTree;
use rascal_core::model::verdict::{gate, Report};
use rascal_engine::output::report_lines;
use rascal_engine::pipeline::{
    permissions_in_force, read_change, verify_read, Origin, Progress, Verification,
};
use rascal_exec::git::base::ConfigSource;
use rascal_exec::git::workspace;
use std::path::Path;
use tokio_util::sync::CancellationToken;

pub fn check(dir: &Path, args: CheckArgs) -> Result<i32, CliError> {
    let CheckArgs {
        base,
        json,
        config_from_worktree,
        strict,
    } = args;
    let repo = workspace::open(dir)?;
    let oid = workspace::resolve(&repo, &base)?;
    let workdir = workspace::workdir(&repo);
    let config = if config_from_worktree {
        rascal_exec::git::base::load_config_from(ConfigSource::WorkingTree(&workdir))?
    } else {
        rascal_exec::git::base::load_config(&repo, oid)?
    };
    // The working tree is what is checked: only `.rascal/` is worth a word.
    let tree = WorkingTree {
        config_from_worktree,
        config_changes: rascal_exec::git::base::config_changes(&repo, oid),
        uncommitted: 0,
        uncommitted_files: Vec::new(),
    };
    for l in tree.lines(&oid.to_string()) {
        super::shared::tell!("rascal: {l}");
    }
    // The change is read once, file by file: the checks that read content
    // see each file as it is read, and only what they found is kept.
    let (changes, read) = read_change(
        &config,
        permissions_in_force(&config, Origin::Human).as_ref(),
        &workdir,
        &workdir,
        oid,
        &Default::default(),
    )?;
    let rt = rascal_engine::runtime()?;
    let reports: Vec<Report> = rt.block_on(async {
        let place = rascal_exec::exec::place::Place::InPlace {
            origin: workdir.clone(),
        };
        let v = Verification {
            config: &config,
            place: &place,
            changes: &changes,
            origin: Origin::Human,
            allow_test_changes: &[],
            cancel: CancellationToken::new(),
        };
        let live = !json;
        verify_read(&v, Some(&read), &move |p| {
            if let (true, Progress::Report(r)) = (live, p) {
                out(report_lines(&r));
            }
        })
        .await
    });
    let verdict = gate(&reports);
    if json {
        let doc = serde_json::json!({
            "verdict": verdict,
            "base": oid.to_string(),
            "files_changed": changes.files.len(),
            "lines_changed": changes.lines_changed(),
            "layers": reports,
        });
        say!(
            "{}",
            rascal_core::text::inert::json(&serde_json::to_string_pretty(&doc).unwrap_or_default())
        );
    } else {
        say!(
            "verdict {verdict} · {} changed against {}",
            rascal_core::text::change_size(changes.files.len() as u64, changes.lines_changed()),
            &oid.to_string()[..8]
        );
    }
    Ok(if strict {
        rascal_core::model::verdict::strict_exit_code(verdict, verdict.exit_code())
    } else {
        verdict.exit_code()
    })
}

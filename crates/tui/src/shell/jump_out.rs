//! Jumping out of the TUI to an editor or a shell in a candidate's
//! worktree, and copying what a candidate did.

use super::*;

/// Hand the terminal to the editor or a shell in a candidate's workspace,
/// after asking when the workspace has files that run code when opened.
pub(super) fn jump_out<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    shell: &Shell,
    j: crate::jump::Jump,
) -> std::io::Result<()> {
    let say = |app: &mut App, msg: String| {
        update(app, Action::Said(msg));
    };
    let Some(outside) = &shell.outside else {
        say(app, "no terminal to hand over here".into());
        return Ok(());
    };
    if !j.dir.is_dir() {
        say(
            app,
            format!(
                "{}'s workspace {} is gone (removed by finalize or gc)",
                j.candidate,
                j.dir.display()
            ),
        );
        return Ok(());
    }
    if !j.confirmed {
        let changed = changed_from_base(&shell.run, &j.dir);
        let found = crate::jump::hazards(&j.dir, &changed);
        if !found.is_empty() {
            update(app, Action::JumpHazards(j, found));
            return Ok(());
        }
    }
    let argv = crate::jump::command(j.kind, &|n| std::env::var(n).ok(), &j.dir);
    // Git in the editor and shell runs nothing the workspace configured.
    let safe = match crate::jump::jump_env(&j.dir, &j.candidate, &|n| std::env::var(n).ok()) {
        Ok(s) => s,
        Err(e) => {
            say(
                app,
                format!(
                    "could not prepare a safe git environment for the {}: {e}",
                    j.kind.name()
                ),
            );
            return Ok(());
        }
    };
    let env = &safe.vars;
    let banner = match j.kind {
        crate::jump::JumpKind::Shell => format!(
            "rascal: a shell in {}'s workspace ({}); `exit` returns to rascal",
            j.candidate,
            j.dir.display()
        ),
        crate::jump::JumpKind::Editor => format!("rascal: {} {}", argv[0], j.dir.display()),
    };
    shell
        .trace
        .log(format!("jump {} {}", j.kind.name(), j.dir.display()));
    let run = || outside.run(&argv, &j.dir, env, &banner);
    let r = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(run),
        _ => run(),
    };
    terminal.clear().map_err(backend_error)?;
    let msg = match r {
        Ok(st) if st.success() => format!("back from the {}", j.kind.name()),
        Ok(st) => format!("the {} exited with {st}", j.kind.name()),
        Err(e) => format!("could not open the {}: {e}", j.kind.name()),
    };
    say(app, msg);
    Ok(())
}

/// Whether a workspace path differs from the base (files under a folder:
/// any of them); a path the user's own checkout has as it is was already
/// trusted there.
fn changed_from_base(run: &RunHandle, dir: &std::path::Path) -> impl Fn(&str) -> bool {
    let differs = run.differs_from_base(dir);
    let dir = dir.to_path_buf();
    move |rel: &str| {
        crate::jump::files_under(&dir, rel)
            .iter()
            .any(|f| differs(f))
    }
}

/// `y`: put a candidate's workspace path, tree id or diff on the
/// clipboard; returns what to say.
pub(super) fn copy(
    app: &App,
    shell: &Shell,
    candidate: &str,
    what: crate::jump::CopyWhat,
) -> String {
    use crate::jump::CopyWhat;
    let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
        return format!("no candidate {candidate}");
    };
    let Some(outside) = &shell.outside else {
        return "no terminal to copy through here".into();
    };
    let text = match what {
        CopyWhat::Path => c.info.worktree.clone(),
        CopyWhat::Tree => match app
            .summary
            .candidates
            .iter()
            .find(|s| s.id == candidate)
            .and_then(|s| s.tree.clone())
        {
            Some(t) => t,
            None => return format!("{candidate} has no verified tree yet"),
        },
        CopyWhat::Diff => {
            let change = app.change(candidate);
            match change
                .ok_or_else(|| format!("no candidate {candidate}"))
                .and_then(|ch| shell.run.diff(&ch).map_err(|e| e.to_string()))
            {
                Ok(t) => t,
                Err(e) => return format!("could not read {candidate}'s diff: {e}"),
            }
        }
    };
    // What is copied is what the output policy lets out (and its size).
    let text = rascal_core::text::inert::clipboard(&text);
    if text.len() > crate::jump::MAX_COPY_BYTES {
        return format!(
            "the {} is {} KiB, more than a terminal clipboard takes ({} KiB): not copied",
            what.name(),
            text.len() / 1024,
            crate::jump::MAX_COPY_BYTES / 1024
        );
    }
    match outside.copy(&text) {
        Ok(()) => format!(
            "copied {}'s {} ({} bytes)",
            candidate,
            what.name(),
            text.len()
        ),
        Err(e) => format!("could not copy: {e}"),
    }
}

//! The workspace's `.git` is rascal's, not the agent's. After every
//! attempt rascal rewrites what in a workspace repository can make git run
//! a program or change what a person sees when they type `git status`
//! there: its config (from rascal's template), its hooks (none), its
//! `info/` files (`exclude` from the template; no `attributes`, no
//! `sparse-checkout`), and it removes what points git elsewhere
//! (`commondir`, `config.worktree`, `worktrees/`, object alternates) or
//! replays the agent's commands (an unfinished rebase or cherry-pick).
//! Objects, refs, `HEAD`, the index and `shallow` stay: they are data, and
//! the change tree rascal wrote is among the objects.
//!
//! Repositories nested in the workspace (a `.git` folder below its top)
//! get the same treatment; a nested `.git` that is a file or a link (it
//! points git at a folder the agent chose) is removed, as are the
//! submodule repositories under `.git/modules/`. A top-level `.git` that
//! is not a folder (the agent replaced it: that attempt already failed,
//! see `tree::workspace_store`) is removed and replaced by an empty
//! repository. Nothing here follows a link: a link is removed as a link.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The config every workspace repository has after an attempt: what
/// `git init` writes, nothing else.
pub const TEMPLATE_CONFIG: &str = "[core]\n\
    \trepositoryformatversion = 0\n\
    \tfilemode = true\n\
    \tbare = false\n\
    \tlogallrefupdates = true\n";

/// The `info/exclude` every workspace repository has after an attempt.
pub(crate) const TEMPLATE_EXCLUDE: &str =
    "# rascal: this workspace's own ignore rules (the agent's were removed)\n";

/// Entries of a repository folder that are removed outright: they point
/// git at other folders, or replay commands when a person continues them.
const REMOVED: &[&str] = &[
    "commondir",
    "config.worktree",
    "worktrees",
    "modules",
    "objects/info/alternates",
    "objects/info/http-alternates",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "gitdir",
];

/// The most entries a walk for nested repositories visits.
const MAX_WALK: usize = 500_000;

/// What [`reclaim`] did, for the candidate's log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reclaimed {
    /// Repository folders rewritten (the workspace's own first).
    pub rewritten: Vec<PathBuf>,
    /// `.git` files and links removed (nested ones, or the top one).
    pub removed: Vec<PathBuf>,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> std::io::Error {
    move |e| std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Remove `p` whatever it is (a link is removed as a link, never followed);
/// a missing `p` is fine.
fn remove_any(p: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(format!("reading {}", p.display()))(e)),
        Ok(m) if m.is_dir() => {
            std::fs::remove_dir_all(p).map_err(io(format!("removing {}", p.display())))
        }
        Ok(_) => std::fs::remove_file(p).map_err(io(format!("removing {}", p.display()))),
    }
}

/// Write `text` to a new file at `p` (whatever was there removed first; the
/// file is created, never opened through a link).
fn write_new(p: &Path, text: &str) -> std::io::Result<()> {
    remove_any(p)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(io(format!("creating {}", p.display())))?;
    f.write_all(text.as_bytes())
        .map_err(io(format!("writing {}", p.display())))
}

/// A fresh, empty folder at `p` (whatever was there removed first).
fn fresh_dir(p: &Path) -> std::io::Result<()> {
    remove_any(p)?;
    std::fs::create_dir(p).map_err(io(format!("creating {}", p.display())))
}

/// Rewrite one repository folder (`…/.git`) from rascal's template.
pub(crate) fn rewrite_repository(git: &Path) -> std::io::Result<()> {
    for name in REMOVED {
        remove_any(&git.join(name))?;
    }
    write_new(&git.join("config"), TEMPLATE_CONFIG)?;
    fresh_dir(&git.join("hooks"))?;
    fresh_dir(&git.join("info"))?;
    write_new(&git.join("info").join("exclude"), TEMPLATE_EXCLUDE)?;
    Ok(())
}

/// Whether the workspace's `.git` is the folder rascal created: a real
/// directory, not a file pointing elsewhere and not a link. What `attach`
/// and `finalize` check before they touch a workspace.
pub fn check(ws: &Path) -> crate::error::Result<()> {
    let git = ws.join(".git");
    match std::fs::symlink_metadata(&git) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => Err(crate::Error::GitDir(format!(
            "the workspace {}: its .git is a {}, not the directory rascal created (the agent replaced it)\n  hint: nothing was done; re-run the task",
            ws.display(),
            if m.file_type().is_symlink() { "link" } else { "file" }
        ))),
        Err(e) => Err(crate::Error::GitDir(format!(
            "the workspace {}: its .git cannot be read: {e}\n  hint: re-run the task",
            ws.display()
        ))),
    }
}

/// Walk the workspace at `ws` without following links, at most
/// `MAX_WALK` entries: `visit(dir, entry)` for each, descending into the
/// entry when it is a folder and `visit` says so.
pub(crate) fn walk(ws: &Path, mut visit: impl FnMut(&Path, &std::fs::DirEntry) -> bool) {
    let mut todo = vec![ws.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return;
            }
            if visit(&dir, &e) && e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            }
        }
    }
}

/// Whether a folder entry is named `.git` (any case).
pub(crate) fn is_dot_git(e: &std::fs::DirEntry) -> bool {
    e.file_name()
        .as_encoded_bytes()
        .eq_ignore_ascii_case(b".git")
}

/// The nested repositories of the workspace at `ws`: every entry named
/// `.git` below its top (any case), found without following links.
pub(crate) fn nested(ws: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(ws, |dir, e| {
        if !is_dot_git(e) {
            return true;
        }
        if dir != ws {
            out.push(e.path());
        }
        false
    });
    out.sort();
    out
}

/// Make the workspace's `.git` (and its nested repositories') rascal's
/// again after an attempt: see the module text.
pub fn reclaim(ws: &Path) -> std::io::Result<Reclaimed> {
    let mut done = Reclaimed::default();
    let git = ws.join(".git");
    match std::fs::symlink_metadata(&git) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            remove_any(&git)?;
            done.removed.push(git.clone());
            git2::Repository::init(ws)
                .map_err(|e| std::io::Error::other(format!("creating {}: {e}", git.display())))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            git2::Repository::init(ws)
                .map_err(|e| std::io::Error::other(format!("creating {}: {e}", git.display())))?;
        }
        Err(e) => return Err(io(format!("reading {}", git.display()))(e)),
    }
    rewrite_repository(&git)?;
    done.rewritten.push(git);
    for inner in nested(ws) {
        match std::fs::symlink_metadata(&inner) {
            Ok(m) if m.is_dir() => {
                rewrite_repository(&inner)?;
                done.rewritten.push(inner);
            }
            Ok(_) => {
                remove_any(&inner)?;
                done.removed.push(inner);
            }
            Err(_) => {}
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planted(ws: &Path) {
        let git = ws.join(".git");
        let mut cfg = std::fs::read_to_string(git.join("config")).unwrap();
        cfg.push_str("\tfsmonitor = ./pwn\n\thooksPath = ./h\n[include]\n\tpath = /tmp/x\n");
        std::fs::write(git.join("config"), cfg).unwrap();
        std::fs::create_dir_all(git.join("hooks")).unwrap();
        std::fs::write(git.join("hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(git.join("info")).unwrap();
        std::fs::write(git.join("info/attributes"), "* filter=x\n").unwrap();
        std::fs::write(git.join("info/exclude"), "evil.rs\n").unwrap();
        std::fs::write(git.join("commondir"), "../elsewhere\n").unwrap();
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
    }

    #[test]
    fn a_planted_config_hooks_and_info_files_are_replaced_by_the_template() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        let repo = git2::Repository::init(ws).unwrap();
        let blob = repo.blob(b"kept\n").unwrap();
        planted(ws);
        let done = reclaim(ws).unwrap();
        assert_eq!(done.rewritten, vec![ws.join(".git")]);
        let git = ws.join(".git");
        assert_eq!(
            std::fs::read_to_string(git.join("config")).unwrap(),
            TEMPLATE_CONFIG
        );
        assert_eq!(std::fs::read_dir(git.join("hooks")).unwrap().count(), 0);
        assert!(!git.join("info/attributes").exists());
        assert_eq!(
            std::fs::read_to_string(git.join("info/exclude")).unwrap(),
            TEMPLATE_EXCLUDE
        );
        assert!(!git.join("commondir").exists() && !git.join("rebase-merge").exists());
        // Objects stay: the repository still opens and holds them.
        let again = git2::Repository::open(ws).unwrap();
        assert!(again.find_blob(blob).is_ok());
    }

    #[test]
    fn links_inside_git_are_removed_as_links_and_their_targets_untouched() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("gitconfig");
        std::fs::write(&victim, "[user]\n\tname = me\n").unwrap();
        std::fs::create_dir(outside.path().join("hooks")).unwrap();
        std::fs::write(outside.path().join("hooks/keep"), "x").unwrap();
        let ws = d.path();
        git2::Repository::init(ws).unwrap();
        let git = ws.join(".git");
        std::fs::remove_file(git.join("config")).unwrap();
        std::os::unix::fs::symlink(&victim, git.join("config")).unwrap();
        std::fs::remove_dir_all(git.join("hooks")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("hooks"), git.join("hooks")).unwrap();
        reclaim(ws).unwrap();
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "[user]\n\tname = me\n"
        );
        assert!(outside.path().join("hooks/keep").exists());
        assert!(!std::fs::symlink_metadata(git.join("config"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn nested_repositories_are_rewritten_and_git_files_removed() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        git2::Repository::init(ws).unwrap();
        git2::Repository::init(ws.join("vendor/lib")).unwrap();
        planted(&ws.join("vendor/lib"));
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("sub/.git"), "gitdir: /tmp/evil\n").unwrap();
        let done = reclaim(ws).unwrap();
        assert!(
            done.rewritten.contains(&ws.join("vendor/lib/.git")),
            "{done:?}"
        );
        assert_eq!(done.removed, vec![ws.join("sub/.git")]);
        assert_eq!(
            std::fs::read_to_string(ws.join("vendor/lib/.git/config")).unwrap(),
            TEMPLATE_CONFIG
        );
        assert!(!ws.join("sub/.git").exists());
    }

    #[test]
    fn a_git_file_or_link_in_place_of_the_workspace_repository_is_refused_then_replaced() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        std::fs::write(ws.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(check(ws).unwrap_err().to_string().contains("is a file"));
        let done = reclaim(ws).unwrap();
        assert_eq!(done.removed, vec![ws.join(".git")]);
        assert!(check(ws).is_ok());
        let other = tempfile::tempdir().unwrap();
        std::fs::remove_dir_all(ws.join(".git")).unwrap();
        std::os::unix::fs::symlink(other.path(), ws.join(".git")).unwrap();
        assert!(check(ws).unwrap_err().to_string().contains("is a link"));
        reclaim(ws).unwrap();
        assert!(check(ws).is_ok());
        assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
    }
}

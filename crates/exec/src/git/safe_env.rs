//! An environment in which git runs no program a repository configured:
//! what the TUI's editor and shell get when a person jumps into a
//! candidate's workspace (`E`, `S`). Safe by construction, not by a list
//! of hazards found: git reads no system config (`GIT_CONFIG_NOSYSTEM`),
//! rascal's own file instead of the global one (`GIT_CONFIG_GLOBAL`: the
//! workspace and its nested repositories as `safe.directory`, the user's
//! name and email), and command-line settings (`GIT_CONFIG_COUNT`/
//! `KEY_n`/`VALUE_n`, and `GIT_CONFIG_PARAMETERS`, which git passes on to
//! the git it runs in submodules) that outrank every config file and turn
//! off each setting that runs a program: the fsmonitor, hooks (an empty
//! folder), pager, editor, ssh command, credential helpers, and every
//! `filter.<name>`, `diff.<name>`, `merge.<name>`, `pager.<cmd>`, `alias`
//! and the like named in ANY config of the workspace or its nested
//! repositories (read leniently: a UTF-8 BOM is skipped as git skips it,
//! every line is read on its own, includes are followed whatever their
//! condition) or in any attributes file there.
//!
//! Includes cannot be switched off from the command line; they do not
//! need to be: whatever an included file sets is read here too, and the
//! setting overridden. (After an attempt the workspace's own config is
//! rascal's template anyway: `gitdir::reclaim`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The most config files read (includes included) and bytes per file.
const MAX_FILES: usize = 2000;
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// How deep includes are followed.
const MAX_INCLUDE_DEPTH: usize = 10;
/// One git setting as a config file spells it: `section.key` or
/// `section.subsection.key`, section and key lower-cased (the subsection
/// keeps its case, as git does), and the raw value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Setting {
    pub key: String,
    pub value: String,
}

/// Every setting a git config text makes, read leniently: a leading UTF-8
/// BOM skipped (git skips it), every line read on its own (a continued
/// value can only add settings, never hide one), `[section "sub"]` and
/// the older `[section.sub]` headers, keys after a header on its line.
pub(crate) fn config_settings(text: &str) -> Vec<Setting> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut section = String::new();
    let mut sub: Option<String> = None;
    for raw in text.lines() {
        let mut line = raw.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some((s, sb, after)) = header(rest) else {
                continue;
            };
            section = s;
            sub = sb;
            line = after.trim();
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), unquote(v.trim())),
            None => (line, "true".to_string()),
        };
        if name.is_empty()
            || section.is_empty()
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            continue;
        }
        let name = name.to_ascii_lowercase();
        let key = match &sub {
            Some(s) => format!("{section}.{s}.{name}"),
            None => format!("{section}.{name}"),
        };
        out.push(Setting { key, value });
    }
    out
}

/// A section header after its `[`: the section (lower-cased), the
/// subsection, and what follows the `]`.
fn header(rest: &str) -> Option<(String, Option<String>, &str)> {
    let name_end = rest
        .find(|c: char| c.is_whitespace() || c == ']')
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    let after_name = rest[name_end..].trim_start();
    if let Some(quoted) = after_name.strip_prefix('"') {
        // `[section "sub"]`: the subsection with `\"` and `\\` escapes.
        let mut sub = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        sub.push(n);
                    }
                }
                '"' => {
                    let tail = quoted[i + 1..].trim_start();
                    let tail = tail.strip_prefix(']')?;
                    return Some((name.to_ascii_lowercase(), Some(sub), tail));
                }
                c => sub.push(c),
            }
        }
        return None;
    }
    let tail = after_name.strip_prefix(']')?;
    // `[section.sub]` (older spelling): the subsection is lower-cased.
    match name.split_once('.') {
        Some((s, sb)) => Some((s.to_ascii_lowercase(), Some(sb.to_ascii_lowercase()), tail)),
        None => Some((name.to_ascii_lowercase(), None, tail)),
    }
}

/// A config value without its quotes and trailing comment (leniently).
fn unquote(v: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(n) => out.push(n),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The driver names an attributes text gives: (`filter`, `diff`, `merge`)
/// each as `attr=NAME`, in any line, macros included.
pub(crate) fn attribute_drivers(text: &str) -> Vec<(&'static str, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for tok in text.split_whitespace() {
        for kind in ["filter", "diff", "merge"] {
            if let Some(name) = tok
                .strip_prefix(kind)
                .and_then(|r| r.strip_prefix('='))
                .filter(|n| !n.is_empty())
            {
                out.push((kind, name.trim_matches('"').to_string()));
            }
        }
    }
    out
}

/// What the person's own environment says for the pager and the editor
/// (their choices stay theirs; the repository's never apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choices {
    pub pager: String,
    pub editor: String,
}

impl Choices {
    pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Choices {
        let first = |names: &[&str], fallback: &str| {
            names
                .iter()
                .filter_map(|n| env(n))
                .find(|v| !v.trim().is_empty())
                .unwrap_or_else(|| fallback.to_string())
        };
        Choices {
            pager: first(&["GIT_PAGER", "PAGER"], "less"),
            editor: first(&["GIT_EDITOR", "VISUAL", "EDITOR"], "vi"),
        }
    }
}

/// rascal's own files the overrides name.
#[derive(Debug, Clone)]
pub(crate) struct Own {
    /// An empty folder: the hooks path.
    pub hooks: PathBuf,
    /// A diff program (`diff -u` of the two files) for external and
    /// driver diffs.
    pub plain_diff: PathBuf,
}

/// The value that makes `key` run nothing of the repository's, or None
/// when `key` runs no program. `key` as [`Setting::key`] spells it.
pub(crate) fn safe_value(key: &str, own: &Own, you: &Choices) -> Option<String> {
    let (section, rest) = key.split_once('.')?;
    let (sub, name) = match rest.rsplit_once('.') {
        Some((s, n)) => (Some(s), n),
        None => (None, rest),
    };
    let section = section.to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let v = match (section.as_str(), sub.is_some(), name.as_str()) {
        ("core", false, "fsmonitor") => "false".into(),
        ("core", false, "hookspath") => path(&own.hooks),
        ("core", false, "pager") => you.pager.clone(),
        ("core", false, "editor") | ("sequence", false, "editor") => you.editor.clone(),
        ("core", false, "sshcommand") => "ssh".into(),
        ("core", false, "askpass") => String::new(),
        ("core", false, "gitproxy") => "none".into(),
        ("core", false, "alternaterefscommand") => "true".into(),
        ("diff", false, "external") => path(&own.plain_diff),
        ("diff", true, "textconv") => "cat".into(),
        ("diff", true, "command") => path(&own.plain_diff),
        ("merge", true, "driver") => "false".into(),
        ("filter", true, "clean" | "smudge" | "process") => String::new(),
        ("filter", true, "required") => "false".into(),
        ("credential", _, "helper") => String::new(),
        ("gpg", false, "program") => "gpg".into(),
        ("gpg", true, "program") => match sub.map(str::to_ascii_lowercase).as_deref() {
            Some("x509") => "gpgsm".into(),
            Some("ssh") => "ssh-keygen".into(),
            _ => "gpg".into(),
        },
        ("gpg", true, "defaultkeycommand") => String::new(),
        ("pager", _, _) => "true".into(),
        // An empty alias is an error: the repository's never runs.
        ("alias", _, _) => String::new(),
        ("difftool" | "mergetool", true, "cmd") => "false".into(),
        ("remote", true, "uploadpack") => "git-upload-pack".into(),
        ("remote", true, "receivepack") => "git-receive-pack".into(),
        ("submodule", true, "update") => "checkout".into(),
        ("interactive", false, "difffilter") => "cat".into(),
        ("protocol", true, "allow") => "never".into(),
        _ => return None,
    };
    Some(v)
}

/// Settings overridden whatever the repositories say (section and key
/// lower-cased, as [`Setting::key`] spells them).
const ALWAYS: &[&str] = &[
    "core.fsmonitor",
    "core.hookspath",
    "core.pager",
    "core.editor",
    "sequence.editor",
    "core.sshcommand",
    "core.askpass",
    "credential.helper",
    "diff.external",
    "gpg.program",
    "protocol.ext.allow",
];

/// The overrides for everything found: [`ALWAYS`] first (in its order),
/// then the settings of `settings` that run programs and the drivers
/// `drivers` names, sorted; each key once.
pub(crate) fn overrides(
    settings: &[Setting],
    drivers: &[(&'static str, String)],
    own: &Own,
    you: &Choices,
) -> Vec<(String, String)> {
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for s in settings {
        if safe_value(&s.key, own, you).is_some() {
            keys.insert(s.key.clone());
        }
        // A filter that is named gets all its programs switched off.
        if let Some(rest) = s.key.strip_prefix("filter.") {
            if let Some((name, _)) = rest.rsplit_once('.') {
                for k in ["clean", "smudge", "process", "required"] {
                    keys.insert(format!("filter.{name}.{k}"));
                }
            }
        }
    }
    for (kind, name) in drivers {
        let ks: &[&str] = match *kind {
            "filter" => &["clean", "smudge", "process", "required"],
            "diff" => &["textconv", "command"],
            _ => &["driver"],
        };
        for k in ks {
            keys.insert(format!("{kind}.{name}.{k}"));
        }
    }
    ALWAYS
        .iter()
        .map(|k| k.to_string())
        .chain(keys.into_iter().filter(|k| !ALWAYS.contains(&k.as_str())))
        .filter_map(|k| safe_value(&k, own, you).map(|v| (k, v)))
        .collect()
}

/// `'key'='value' …`: the form of `GIT_CONFIG_PARAMETERS`.
pub(crate) fn parameters(pairs: &[(String, String)]) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", q(k), q(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The repository folders of a workspace: its own `.git`, every nested
/// one (a `.git` folder, or the folder a `.git` file or link names), the
/// submodule repositories under `.git/modules/`, and the common folders
/// they name.
pub(crate) fn repository_dirs(ws: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut todo: Vec<PathBuf> = vec![ws.join(".git")];
    todo.extend(crate::git::gitdir::nested(ws));
    let mut seen = BTreeSet::new();
    while let Some(g) = todo.pop() {
        if found.len() >= MAX_FILES || !seen.insert(g.clone()) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&g) else {
            continue;
        };
        if meta.is_file() {
            // `gitdir: <path>`, relative to the file's folder.
            if let Ok(text) = read_small(&g) {
                if let Some(p) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) {
                    let base = g.parent().unwrap_or(ws);
                    todo.push(base.join(p.trim()));
                }
            }
            continue;
        }
        if let Ok(text) = read_small(&g.join("commondir")) {
            todo.push(g.join(text.trim()));
        }
        // Submodule and worktree repositories inside this one.
        for inner in ["modules", "worktrees"] {
            let mut stack = vec![g.join(inner)];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        let p = e.path();
                        if p.join("config").is_file() || p.join("HEAD").is_file() {
                            todo.push(p.clone());
                        }
                        if stack.len() < 1000 {
                            stack.push(p);
                        }
                    }
                }
            }
        }
        found.push(g);
    }
    found
}

fn read_small(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(p)?;
    let mut buf = Vec::new();
    f.take(MAX_FILE_BYTES).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Every setting in the config file at `file` and the files it includes
/// (whatever the include's condition), up to the limits.
fn settings_of(file: &Path, depth: usize, read: &mut BTreeSet<PathBuf>, out: &mut Vec<Setting>) {
    if depth > MAX_INCLUDE_DEPTH || read.len() >= MAX_FILES || !read.insert(file.to_path_buf()) {
        return;
    }
    let Ok(text) = read_small(file) else {
        return;
    };
    for s in config_settings(&text) {
        let k = s.key.to_ascii_lowercase();
        let include = k == "include.path" || (k.starts_with("includeif.") && k.ends_with(".path"));
        if include && !s.value.is_empty() {
            let target = if let Some(rest) = s.value.strip_prefix("~/") {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest))
            } else {
                let p = PathBuf::from(&s.value);
                Some(if p.is_absolute() {
                    p
                } else {
                    file.parent().unwrap_or(Path::new("/")).join(p)
                })
            };
            if let Some(t) = target {
                settings_of(&t, depth + 1, read, out);
            }
        }
        out.push(s);
    }
}

/// Everything a workspace's repositories and attributes files set or name
/// that git could run: their settings and the drivers named.
pub(crate) fn scan(ws: &Path) -> (Vec<Setting>, Vec<(&'static str, String)>, Vec<PathBuf>) {
    let repos = repository_dirs(ws);
    let mut settings = Vec::new();
    let mut drivers = Vec::new();
    let mut read = BTreeSet::new();
    for g in &repos {
        for name in ["config", "config.worktree"] {
            settings_of(&g.join(name), 0, &mut read, &mut settings);
        }
        if let Ok(text) = read_small(&g.join("info").join("attributes")) {
            drivers.extend(attribute_drivers(&text));
        }
    }
    // `.gitattributes` anywhere in the workspace (links not followed).
    crate::git::gitdir::walk(ws, |_, e| {
        let Ok(t) = e.file_type() else { return false };
        if t.is_file() && e.file_name() == ".gitattributes" {
            if let Ok(text) = read_small(&e.path()) {
                drivers.extend(attribute_drivers(&text));
            }
        }
        t.is_dir() && !crate::git::gitdir::is_dot_git(e)
    });
    (settings, drivers, repos)
}

/// The environment for a jump into a workspace, and rascal's folder that
/// holds the files it names (removed when this is dropped: keep it until
/// the editor or shell has exited).
pub struct SafeGit {
    pub vars: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

/// A config value, quoted for a config file.
fn config_quote(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Build the environment for a jump into the workspace at `ws`: see the
/// module text. `env` reads the person's own environment (pager, editor).
pub fn for_workspace(ws: &Path, env: &dyn Fn(&str) -> Option<String>) -> std::io::Result<SafeGit> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new().prefix("rascal-git-").tempdir()?;
    let own = Own {
        hooks: dir.path().join("hooks"),
        plain_diff: dir.path().join("plain-diff"),
    };
    std::fs::create_dir(&own.hooks)?;
    // Called as `path old-file old-hex old-mode new-file new-hex new-mode`.
    std::fs::write(
        &own.plain_diff,
        "#!/bin/sh\ndiff -u --label \"a/$1\" --label \"b/$1\" -- \"$2\" \"$5\"\nexit 0\n",
    )?;
    std::fs::set_permissions(&own.plain_diff, std::fs::Permissions::from_mode(0o755))?;
    let you = Choices::from_env(env);
    let (settings, drivers, repos) = scan(ws);
    let pairs = overrides(&settings, &drivers, &own, &you);
    // rascal's global config: where git may work, and who the person is.
    let mut global = String::from("[safe]\n");
    let mut safe: BTreeSet<PathBuf> = BTreeSet::new();
    safe.insert(ws.to_path_buf());
    for g in &repos {
        if let Some(parent) = g.parent() {
            safe.insert(parent.to_path_buf());
        }
        safe.insert(g.clone());
    }
    for p in safe {
        let s = p.to_string_lossy();
        if !s.contains('\n') {
            global.push_str(&format!("\tdirectory = {}\n", config_quote(&s)));
        }
    }
    if let Ok(cfg) = git2::Config::open_default() {
        let mut user = String::new();
        for k in ["name", "email"] {
            if let Ok(v) = cfg.get_string(&format!("user.{k}")) {
                if !v.contains('\n') {
                    user.push_str(&format!("\t{k} = {}\n", config_quote(&v)));
                }
            }
        }
        if !user.is_empty() {
            global.push_str("[user]\n");
            global.push_str(&user);
        }
    }
    let global_path = dir.path().join("gitconfig");
    std::fs::write(&global_path, global)?;
    let mut vars = vec![
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        (
            "GIT_CONFIG_GLOBAL".to_string(),
            global_path.to_string_lossy().into_owned(),
        ),
        ("GIT_CONFIG_COUNT".to_string(), pairs.len().to_string()),
    ];
    for (i, (k, v)) in pairs.iter().enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{i}"), k.clone()));
        vars.push((format!("GIT_CONFIG_VALUE_{i}"), v.clone()));
    }
    vars.push(("GIT_CONFIG_PARAMETERS".to_string(), parameters(&pairs)));
    Ok(SafeGit { vars, _dir: dir })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        config_settings(text).into_iter().map(|s| s.key).collect()
    }

    #[test]
    fn settings_are_read_in_any_spelling_and_after_a_bom() {
        let text = "\u{feff}[core]\n\tfsMonitor = ./pwn\n\
                    [filter \"Ev\\\"il\"]\n\tclean = x\n\
                    [diff.bin] textconv = ./conv\n\
                    [includeIf \"gitdir:/\"]\n\tpath = \"/tmp/x\" # c\n\
                    [alias]\n\tco = !sh\n\tflag\n";
        assert_eq!(
            keys(text),
            vec![
                "core.fsmonitor",
                "filter.Ev\"il.clean",
                "diff.bin.textconv",
                "includeif.gitdir:/.path",
                "alias.co",
                "alias.flag"
            ]
        );
        assert_eq!(config_settings(text)[3].value, "/tmp/x");
    }

    #[test]
    fn attributes_name_their_drivers_macros_included() {
        let d = attribute_drivers(
            "\u{feff}*.bin filter=lfs diff=lfs merge=lfs -text\n[attr]m filter=sneaky\n",
        );
        assert_eq!(
            d,
            vec![
                ("filter", "lfs".to_string()),
                ("diff", "lfs".to_string()),
                ("merge", "lfs".to_string()),
                ("filter", "sneaky".to_string())
            ]
        );
    }

    #[test]
    fn every_program_setting_found_is_overridden_and_others_are_not() {
        let own = Own {
            hooks: "/r/hooks".into(),
            plain_diff: "/r/plain-diff".into(),
        };
        let you = Choices {
            pager: "less".into(),
            editor: "vi".into(),
        };
        let settings = config_settings(
            "[filter \"x\"]\n\tsmudge = a\n[user]\n\tname = n\n[pager]\n\tlog = evil\n[credential \"https://h\"]\n\thelper = evil\n",
        );
        let o = overrides(&settings, &[("diff", "d".into())], &own, &you);
        let get = |k: &str| o.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.as_str());
        assert_eq!(get("filter.x.clean"), Some(""));
        assert_eq!(get("filter.x.smudge"), Some(""));
        assert_eq!(get("filter.x.required"), Some("false"));
        assert_eq!(get("pager.log"), Some("true"));
        assert_eq!(get("credential.https://h.helper"), Some(""));
        assert_eq!(get("diff.d.textconv"), Some("cat"));
        assert_eq!(get("diff.d.command"), Some("/r/plain-diff"));
        assert_eq!(get("core.hookspath"), Some("/r/hooks"));
        assert_eq!(get("core.fsmonitor"), Some("false"));
        assert_eq!(get("user.name"), None);
        assert_eq!(
            parameters(&[("a.b".into(), "it's".into())]),
            "'a.b'='it'\\''s'"
        );
    }
}

//! `.rascal/` as the base commit has it: the config and the task specs are
//! read from the BASE commit's tree, never from a working tree, so an agent
//! cannot change what checks it. Parsing is `config`'s; this file only reads
//! — from the base, or, when the user asks (`--config-from-worktree`), from
//! the user's own working tree — and tells how `.rascal/` in the working
//! tree differs from the base's, and whether other changes are uncommitted.

use crate::git::workspace::{read_at, size_at};
use rascal_core::config::spec::{spec_path, Task, SPECS_DIR};
use rascal_core::config::yaml;
use rascal_core::config::{
    Config, ConfigError, CONFIG_FILE, GUARDRAILS_FILE, PERMISSIONS_FILE, VERIFICATION_FILE,
};
use std::path::Path;

/// The folder of rascal's config in a repository.
pub(crate) const CONFIG_DIR: &str = ".rascal";

/// Where `.rascal/` is read from.
#[derive(Clone, Copy)]
pub enum ConfigSource<'a> {
    /// The tree of this commit (the default, and the only one an agent's
    /// change can never reach).
    Base(&'a git2::Repository, git2::Oid),
    /// The user's working tree at this directory, as it is now.
    WorkingTree(&'a Path),
}

impl ConfigSource<'_> {
    /// The bytes of `file` (a path in the repository); None when absent.
    fn read(&self, file: &str) -> Result<Option<Vec<u8>>, ConfigError> {
        let failed = |message: String, hint: &str| ConfigError {
            file: file.to_string(),
            line: None,
            column: None,
            message,
            hint: hint.into(),
        };
        // A file over the size cap is refused before it is loaded.
        let too_big = |n: usize| {
            yaml::check_size(file, n, None).map_err(|mut e| {
                e.file = format!("{} ({})", e.file, self.whence());
                e
            })
        };
        match self {
            ConfigSource::Base(repo, base) => {
                if let Ok(Some(n)) = size_at(repo, *base, file) {
                    too_big(n)?;
                }
                read_at(repo, *base, file).map_err(|e| {
                    failed(
                        format!("could not read it from commit {}: {e}", short(*base)),
                        "check that the repository is not corrupt (`git fsck`)",
                    )
                })
            }
            ConfigSource::WorkingTree(dir) => {
                let path = dir.join(file);
                match std::fs::metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Ok(m) if !m.is_file() => Err(failed(
                        "is not a regular file".into(),
                        "make it a file, or remove it",
                    )),
                    Ok(m) if m.len() as usize > yaml::MAX_FILE_BYTES => {
                        too_big(m.len() as usize).map(|_| None)
                    }
                    _ => std::fs::read(&path).map(Some).map_err(|e| {
                        failed(
                            format!("could not read it from the working tree: {e}"),
                            "check the file's permissions",
                        )
                    }),
                }
            }
        }
    }

    /// How errors name where the file was read: `at base commit 1a2b3c4d`.
    fn whence(&self) -> String {
        match self {
            ConfigSource::Base(_, base) => format!("at base commit {}", short(*base)),
            ConfigSource::WorkingTree(_) => "in the working tree".into(),
        }
    }

    /// The spec names in `.rascal/specs/`.
    fn spec_names(&self) -> Vec<String> {
        match self {
            ConfigSource::Base(repo, base) => spec_names(repo, *base),
            ConfigSource::WorkingTree(dir) => {
                let mut names: Vec<String> = std::fs::read_dir(dir.join(SPECS_DIR))
                    .map(|rd| {
                        rd.filter_map(|e| e.ok())
                            .filter_map(|e| {
                                e.file_name()
                                    .to_str()
                                    .and_then(|n| n.strip_suffix(".yaml"))
                                    .map(String::from)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                names.sort();
                names
            }
        }
    }
}

fn short(oid: git2::Oid) -> String {
    oid.to_string()[..8].to_string()
}

/// Load `.rascal/` from the tree of commit `base` in `repo`.
pub fn load_config(repo: &git2::Repository, base: git2::Oid) -> Result<Config, ConfigError> {
    load_config_from(ConfigSource::Base(repo, base))
}

/// Load `.rascal/` from `source`.
pub fn load_config_from(source: ConfigSource) -> Result<Config, ConfigError> {
    let read = |file: &str| -> Result<Option<String>, ConfigError> {
        source
            .read(file)?
            .map(|b| rascal_core::config::text_of(file, b))
            .transpose()
    };
    let main = read(CONFIG_FILE)?;
    let guard = read(GUARDRAILS_FILE)?;
    let perm = read(PERMISSIONS_FILE)?;
    let verif = read(VERIFICATION_FILE)?;
    Config::from_texts(main.as_deref(), guard.as_deref(), perm.as_deref())
        .and_then(|c| c.with_verification(verif.as_deref()))
        .and_then(|c| rascal_core::config::secrets::attach(c, &read))
        .map_err(|mut e| {
            e.file = format!("{} ({})", e.file, source.whence());
            e
        })
}

/// Load `.rascal/specs/NAME.yaml` from `source`.
pub(crate) fn load_spec_from(source: ConfigSource, name: &str) -> Result<Task, ConfigError> {
    let whence = source.whence();
    let file = spec_path(name).map_err(|e| ConfigError {
        file: SPECS_DIR.into(),
        line: None,
        column: None,
        message: e.to_string(),
        hint: String::new(),
    })?;
    let Some(bytes) = source.read(&file)? else {
        let known = source.spec_names();
        return Err(ConfigError {
            file: format!("{file} ({whence})"),
            line: None,
            column: None,
            message: "no such spec".into(),
            hint: format!(
                "{}. Specs there: {}",
                match source {
                    ConfigSource::Base(..) => "specs are read from the base commit; commit the file first (or pass --config-from-worktree)",
                    ConfigSource::WorkingTree(_) => "specs are read from the working tree's .rascal/specs/",
                },
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            ),
        });
    };
    let text = String::from_utf8(bytes).map_err(|e| ConfigError {
        file: file.clone(),
        line: None,
        column: None,
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        hint: "save the file as UTF-8".into(),
    })?;
    Task::from_yaml(&file, &text).map_err(|mut e| {
        e.file = format!("{} ({whence})", e.file);
        if e.hint.contains("docs/configuration.md") {
            e.hint = format!(
                "fix {file}; the schema is in docs/configuration.md § Tasks, criteria and review"
            );
        }
        e
    })
}

/// The task of a run: from `--spec NAME` (at the base commit), from
/// `--issue FILE` (a Markdown body), or the command-line instruction.
/// Returns the task and where it came from (None for a bare instruction).
pub fn load_task(
    source: ConfigSource,
    instruction: &str,
    spec: Option<&str>,
    issue: Option<&std::path::Path>,
) -> Result<(Task, Option<String>), ConfigError> {
    let given = |t: &str| !t.trim().is_empty();
    let usage = |message: String| ConfigError {
        file: "command line".into(),
        line: None,
        column: None,
        message,
        hint: "give either INSTRUCTION, --spec NAME or --issue FILE.md".into(),
    };
    match (spec, issue) {
        (Some(_), Some(_)) => Err(usage("--spec and --issue cannot be combined".into())),
        (Some(_), None) | (None, Some(_)) if given(instruction) => Err(usage(
            "an INSTRUCTION argument cannot be combined with --spec or --issue (the task's own instruction is used)".into(),
        )),
        (Some(name), None) => Ok((load_spec_from(source, name)?, Some(format!("spec {name}")))),
        (None, Some(path)) => {
            let shown = path.display().to_string();
            let bytes = std::fs::read(path).map_err(|e| ConfigError {
                file: shown.clone(),
                line: None,
                column: None,
                message: format!("could not read the issue file: {e}"),
                hint: "pass the path of a Markdown file".into(),
            })?;
            yaml::check_size(&shown, bytes.len(), None)?;
            let text = String::from_utf8(bytes).map_err(|e| ConfigError {
                file: shown.clone(),
                line: None,
                column: None,
                message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
                hint: "save the file as UTF-8".into(),
            })?;
            Ok((Task::from_markdown(&shown, &text)?, Some(format!("issue {shown}"))))
        }
        (None, None) if given(instruction) => Ok((Task::from_instruction(instruction), None)),
        (None, None) => Err(usage("no task given".into())),
    }
}

/// The spec names in `.rascal/specs/` at `base`.
pub(crate) fn spec_names(repo: &git2::Repository, base: git2::Oid) -> Vec<String> {
    let Ok(tree) = repo.find_commit(base).and_then(|c| c.tree()) else {
        return Vec::new();
    };
    let Ok(entry) = tree.get_path(std::path::Path::new(SPECS_DIR)) else {
        return Vec::new();
    };
    let Ok(dir) = entry.to_object(repo).and_then(|o| o.peel_to_tree()) else {
        return Vec::new();
    };
    dir.iter()
        .filter_map(|e| {
            e.name()
                .ok()
                .and_then(|n| n.strip_suffix(".yaml"))
                .map(String::from)
        })
        .collect()
}

/// The files of `.rascal/` (relative to it) that differ between the
/// working tree at `workdir` and commit `base`: changed, added (untracked
/// too) or deleted. Empty when they are the same, or when it cannot tell.
pub fn config_changes(repo: &git2::Repository, base: git2::Oid) -> Vec<String> {
    let Ok(tree) = repo.find_commit(base).and_then(|c| c.tree()) else {
        return Vec::new();
    };
    let mut opts = git2::DiffOptions::new();
    opts.pathspec(format!("{CONFIG_DIR}/"))
        .include_untracked(true)
        .recurse_untracked_dirs(true);
    let Ok(diff) = repo.diff_tree_to_workdir(Some(&tree), Some(&mut opts)) else {
        return Vec::new();
    };
    let mut files: Vec<String> = diff
        .deltas()
        .filter_map(|d| {
            d.new_file()
                .path()
                .or_else(|| d.old_file().path())
                .and_then(|p| p.to_str())
                .and_then(|p| p.strip_prefix(&format!("{CONFIG_DIR}/")))
                .map(String::from)
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// The files outside `.rascal/` that have uncommitted changes (staged,
/// unstaged or untracked — an untracked folder as one entry — ignored
/// files aside), sorted: agents start from the base commit without them.
pub fn uncommitted(repo: &git2::Repository) -> Vec<String> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(true);
    repo.statuses(Some(&mut opts))
        .map(|st| {
            st.iter()
                .filter_map(|e| e.path().ok().map(String::from))
                .filter(|p| p != CONFIG_DIR && !p.starts_with(&format!("{CONFIG_DIR}/")))
                .collect::<Vec<_>>()
        })
        .map(|mut v| {
            v.sort();
            v
        })
        .unwrap_or_default()
}

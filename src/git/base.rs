//! `.rascal/` as the base commit has it: the config and the task specs are
//! read from the BASE commit's tree, never from a working tree, so an agent
//! cannot change what checks it. Parsing is `config`'s; this file only reads.

use crate::config::spec::{spec_path, Task, SPECS_DIR};
use crate::config::yaml;
use crate::config::{
    Config, ConfigError, CONFIG_FILE, GUARDRAILS_FILE, PERMISSIONS_FILE, VERIFICATION_FILE,
};
use crate::git::workspace::{read_at, size_at};

/// Load `.rascal/` from the tree of commit `base` in `repo`.
pub fn load_config(repo: &git2::Repository, base: git2::Oid) -> Result<Config, ConfigError> {
    let short = &base.to_string()[..8];
    let read = |file: &str| -> Result<Option<String>, ConfigError> {
        check_blob_size(repo, base, file)?;
        let bytes = read_at(repo, base, file).map_err(|e| ConfigError {
            file: file.to_string(),
            line: None,
            column: None,
            message: format!("could not read it from commit {short}: {e}"),
            hint: "check that the repository is not corrupt (`git fsck`)".into(),
        })?;
        bytes.map(|b| crate::config::text_of(file, b)).transpose()
    };
    let main = read(CONFIG_FILE)?;
    let guard = read(GUARDRAILS_FILE)?;
    let perm = read(PERMISSIONS_FILE)?;
    let verif = read(VERIFICATION_FILE)?;
    Config::from_texts(main.as_deref(), guard.as_deref(), perm.as_deref())
        .and_then(|c| c.with_verification(verif.as_deref()))
        .map_err(|mut e| {
            e.file = format!("{} (at base commit {short})", e.file);
            e
        })
}

/// Refuse a config file over the size cap before loading it.
fn check_blob_size(
    repo: &git2::Repository,
    base: git2::Oid,
    file: &str,
) -> Result<(), ConfigError> {
    let short = &base.to_string()[..8];
    match size_at(repo, base, file) {
        Ok(Some(n)) => yaml::check_size(file, n, None).map_err(|mut e| {
            e.file = format!("{} (at base commit {short})", e.file);
            e
        }),
        // Absent, or unreadable: reading it says which.
        _ => Ok(()),
    }
}

/// Load `.rascal/specs/NAME.yaml` from commit `base`.
pub fn load_spec(
    repo: &git2::Repository,
    base: git2::Oid,
    name: &str,
) -> Result<Task, ConfigError> {
    let short = &base.to_string()[..8];
    let file = spec_path(name).map_err(|message| ConfigError {
        file: SPECS_DIR.into(),
        line: None,
        column: None,
        message,
        hint: String::new(),
    })?;
    check_blob_size(repo, base, &file)?;
    let bytes = read_at(repo, base, &file).map_err(|e| ConfigError {
        file: file.clone(),
        line: None,
        column: None,
        message: format!("could not read it from commit {short}: {e}"),
        hint: "check that the repository is not corrupt (`git fsck`)".into(),
    })?;
    let Some(bytes) = bytes else {
        let known = spec_names(repo, base);
        return Err(ConfigError {
            file: format!("{file} (at base commit {short})"),
            line: None,
            column: None,
            message: "no such spec".into(),
            hint: format!(
                "specs are read from the base commit; commit the file first. Specs there: {}",
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
        e.file = format!("{} (at base commit {short})", e.file);
        if e.hint.contains("README.md § Configuration") {
            e.hint = format!("fix {file}; the schema is in README.md § Tasks, criteria and review");
        }
        e
    })
}

/// The task of a run: from `--spec NAME` (at the base commit), from
/// `--issue FILE` (a Markdown body), or the command-line instruction.
/// Returns the task and where it came from (None for a bare instruction).
pub fn load_task(
    repo: &git2::Repository,
    base: git2::Oid,
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
        (Some(name), None) => Ok((load_spec(repo, base, name)?, Some(format!("spec {name}")))),
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
pub fn spec_names(repo: &git2::Repository, base: git2::Oid) -> Vec<String> {
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

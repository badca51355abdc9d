//! Layer 4: permissions. Judges a [`ChangeSet`] against a compiled
//! [`PermissionsConfig`] and reports each violation as an [`Issue`] with
//! rule id `permissions/<rule>`.
//!
//! Hardened against hostile diffs (docs/architecture.md, "Security invariants", 4):
//! - every path a change touches is judged (both sides of a rename), after
//!   normalisation (`./`, `//`, `.`, `..`); absolute or escaping paths are
//!   `path-escape`; backslashes, NUL and control characters are
//!   `suspicious-path` (warning; the path is still matched literally);
//! - a rename is also a delete of its old path and a create of its new
//!   path for `denied_operations` / `allowed_operations`;
//! - `.rascal/`, `.rascal-artifacts/` (and `.rascal` itself) are protected
//!   even with an empty config; only the root directory is protected
//!   (config is read from the root). Changes under `.git/` are always
//!   `git-dir` violations;
//! - every path rule compares through one normalisation,
//!   [`fold_path`] (NFC, then lower-case), applied to globs and paths
//!   alike, because the repository may be checked out on a
//!   case-insensitive filesystem where `.GITHUB/` aliases `.github/`.
//!   `case_sensitive: true` turns lower-casing off for the globs;
//!   self-protection and `.git/` always ignore case;
//! - a top-level directory whose name is a Unicode look-alike (UTS #39
//!   confusable skeleton: Cyrillic/Greek letters, fullwidth forms,
//!   zero-width characters…) of `.github`, `.git`, `.rascal`,
//!   `.rascal-artifacts` or of a denied glob's literal first component is
//!   a `look-alike` warning naming both;
//! - symlinks are resolved lexically against the link's directory.
//!
//! Rule ids: `path-escape`, `suspicious-path`, `denied-path`,
//! `outside-allowed-paths`, `self-protection`, `git-dir`, `look-alike`, `max-files`,
//! `max-lines`, `operation-denied`, `operation-not-allowed`,
//! `symlink-escape`, `submodule`, `executable`, `forbidden-import`.

use globset::{Candidate, GlobSet};
use rascal_core::config::permissions::{
    compile_globs, fold_path, GlobPattern, Mode, OpName, PermissionsConfig,
};
use rascal_core::model::changeset::{ChangeSet, EntryKind, FileChange, Operation};
use rascal_core::model::verdict::{Confidence, Issue, Severity};
use rascal_scan::imports::{new_imports, reaches_below};
use std::borrow::Cow;
use std::collections::BTreeSet;
use unicode_normalization::UnicodeNormalization;

mod file_checks;
mod paths;

use paths::{
    first_segment, is_git_dir, is_protected, links_of, literal_first, normalize, resolve_chain,
    skeleton, suspicious, Links, Norm,
};

/// Directories at the repository root that an agent may never change
/// unless `allow_self_edit`.
const PROTECTED: [&str; 2] = [".rascal", ".rascal-artifacts"];

/// Top-level names whose look-alikes are always reported.
const LOOK_ALIKE_TARGETS: [&str; 4] = [".github", ".git", ".rascal", ".rascal-artifacts"];

/// A compiled permissions policy. Compile once, check many change sets.
#[derive(Debug, Clone)]
pub struct Permissions {
    advisory: bool,
    /// Every set must match for a path to be allowed; empty = all allowed.
    allowed: Vec<GlobSet>,
    denied: GlobSet,
    /// Every set must match; empty = executables allowed nowhere.
    executable: Vec<GlobSet>,
    max_files: Option<u64>,
    max_lines: Option<u64>,
    ops_allowed: [bool; 5],
    ops_denied: [bool; 5],
    forbidden_imports: Vec<String>,
    allow_self_edit: bool,
    allow_submodules: bool,
    case_sensitive: bool,
    /// (UTS #39 skeleton, name) of each name whose look-alikes are reported.
    look_alikes: Vec<(String, String)>,
}

fn compile_set(globs: &[GlobPattern], case_sensitive: bool) -> Result<GlobSet, crate::Error> {
    Ok(compile_globs(globs, case_sensitive)?)
}

fn op_name(op: OpName) -> &'static str {
    op.name()
}

fn opname_of(op: Operation) -> OpName {
    match op {
        Operation::Create => OpName::Create,
        Operation::Modify => OpName::Modify,
        Operation::Delete => OpName::Delete,
        Operation::Rename => OpName::Rename,
        Operation::Mode => OpName::Mode,
    }
}

/// Whether an import of `module` is one of `forbidden` or below it; with
/// `reaching` (an import that makes what is below it usable: a Rust
/// `use`, a glob), also whether `forbidden` is below `module`.
fn module_matches(module: &str, forbidden: &str, reaching: bool) -> bool {
    let f = forbidden.trim();
    let f = f.strip_prefix("::").unwrap_or(f);
    let f = f.strip_prefix("node:").unwrap_or(f);
    if f.is_empty() {
        return false;
    }
    let below =
        |rest: &str| rest.starts_with('/') || rest.starts_with('.') || rest.starts_with("::");
    if let Some(rest) = module.strip_prefix(f) {
        return rest.is_empty() || below(rest);
    }
    let (m, reaching) = match module
        .strip_suffix("::*")
        .or_else(|| module.strip_suffix(".*"))
    {
        Some(parent) => (parent, true),
        None => (module, reaching),
    };
    reaching && !m.is_empty() && f.strip_prefix(m).is_some_and(below)
}

/// What a content pass found of forbidden imports: for a file it read, the
/// imports found (empty when clean); None for a file it did not read.
pub trait ImportsRead {
    fn found_in(&self, path: &str) -> Option<&[Issue]>;
}

/// Every file read has an entry (empty when clean).
impl ImportsRead for std::collections::BTreeMap<String, Vec<Issue>> {
    fn found_in(&self, path: &str) -> Option<&[Issue]> {
        self.get(path).map(Vec::as_slice)
    }
}

fn issue(rule: &str, severity: Severity, path: &str, msg: String) -> Issue {
    Issue::new(format!("permissions/{rule}"), severity, msg).at(path, None)
}

impl Permissions {
    /// Compile a policy. Fails only on an invalid glob (which a
    /// deserialized config cannot contain).
    pub fn compile(cfg: &PermissionsConfig) -> Result<Self, crate::Error> {
        let mut allowed = Vec::new();
        let cs = cfg.case_sensitive;
        if !cfg.allowed_paths.is_empty() {
            allowed.push(compile_set(&cfg.allowed_paths, cs)?);
        }
        for list in &cfg.narrowed.allowed_paths {
            // An empty narrowing list would mean "nothing allowed"; narrow()
            // never produces one, but treat it conservatively.
            allowed.push(compile_set(list, cs)?);
        }
        let mut executable = Vec::new();
        if !cfg.executable_paths.is_empty() {
            executable.push(compile_set(&cfg.executable_paths, cs)?);
            for list in &cfg.narrowed.executable_paths {
                executable.push(compile_set(list, cs)?);
            }
        }
        let mut look_alikes: Vec<(String, String)> = Vec::new();
        let names = LOOK_ALIKE_TARGETS.iter().copied().chain(
            cfg.denied_paths
                .iter()
                .filter_map(|g| literal_first(g.as_str())),
        );
        for name in names {
            let name = fold_path(name, false).into_owned();
            if !look_alikes.iter().any(|(_, n)| *n == name) {
                look_alikes.push((skeleton(&name), name));
            }
        }
        let mut ops_allowed = [cfg.allowed_operations.is_empty(); 5];
        for op in &cfg.allowed_operations {
            ops_allowed[op.index()] = true;
        }
        let mut ops_denied = [false; 5];
        for op in &cfg.denied_operations {
            ops_denied[op.index()] = true;
        }
        Ok(Permissions {
            advisory: cfg.mode == Mode::Advisory,
            allowed,
            denied: compile_set(&cfg.denied_paths, cs)?,
            executable,
            max_files: cfg.max_files_changed,
            max_lines: cfg.max_lines_changed,
            ops_allowed,
            ops_denied,
            forbidden_imports: cfg
                .forbidden_imports
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            allow_self_edit: cfg.allow_self_edit,
            allow_submodules: cfg.allow_submodules,
            case_sensitive: cs,
            look_alikes,
        })
    }

    /// Mode is advisory: the caller clamps issues via `Report.advisory`.
    pub fn advisory(&self) -> bool {
        self.advisory
    }

    /// Every violation in `changes`, in change order.
    pub fn check(&self, changes: &ChangeSet) -> Vec<Issue> {
        self.check_read(changes, &std::collections::BTreeMap::new())
    }

    /// Does this policy read the change's added lines (forbidden imports)?
    pub fn reads_content(&self) -> bool {
        !self.forbidden_imports.is_empty()
    }

    /// The forbidden imports on one file's added lines: what [`Self::check`]
    /// reports for it, taken as a streamed ChangeSet is read.
    pub fn import_issues(&self, f: &FileChange) -> Vec<Issue> {
        let mut out = Vec::new();
        if self.reads_content() {
            self.check_imports(f, &mut out);
        }
        out
    }

    /// [`Self::check`], with the forbidden imports of streamed files as
    /// [`Self::import_issues`] found them when they were read (`imports`, by
    /// path). A streamed file missing from `imports` could not be read for
    /// imports: an error, never a pass.
    pub fn check_read(&self, changes: &ChangeSet, imports: &dyn ImportsRead) -> Vec<Issue> {
        let mut out = Vec::new();
        self.check_totals(changes, &mut out);
        let mut seen = BTreeSet::new();
        let mut read = BTreeSet::new();
        let links = links_of(changes);
        for f in &changes.files {
            self.check_file(f, &links, &mut out);
            if self.reads_content() {
                match imports.found_in(&f.path) {
                    Some(found) => {
                        if read.insert(f.path.as_str()) {
                            out.extend(found.iter().cloned());
                        }
                    }
                    None if f.is_streamed() => out.push(issue(
                        "unread",
                        Severity::Error,
                        &f.path,
                        format!(
                            "`{}` was not read for forbidden imports: its content was streamed \
                             to the checks without this one (a bug in rascal; run it again)",
                            f.path
                        ),
                    )),
                    None => self.check_imports(f, &mut out),
                }
            }
            self.check_look_alike(&f.path, &mut seen, &mut out);
        }
        out
    }

    /// A top-level name that looks like (but is not) a protected or
    /// denied directory: one warning per distinct name.
    fn check_look_alike(&self, raw: &str, seen: &mut BTreeSet<String>, out: &mut Vec<Issue>) {
        let Norm::Ok(norm) = normalize(raw) else {
            return;
        };
        let first = first_segment(&norm);
        // Each top-level name is judged once per change set (cheap for
        // thousands of files under a few directories).
        if seen.contains(first) || !seen.insert(first.to_string()) {
            return;
        }
        let folded = fold_path(first, false);
        if self.look_alikes.iter().any(|(_, n)| *n == folded) {
            return; // it is the name itself (handled by the other rules)
        }
        let skel = skeleton(first);
        let Some((_, target)) = self.look_alikes.iter().find(|(s, _)| *s == skel) else {
            return;
        };
        let shown = if norm.len() > first.len() {
            format!("{first}/…")
        } else {
            first.to_string()
        };
        let odd: Vec<String> = first
            .chars()
            .filter(|c| !c.is_ascii())
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        let odd = if odd.is_empty() {
            String::new()
        } else {
            format!(" (non-ASCII: {})", odd.join(" "))
        };
        out.push(
            issue(
                "look-alike",
                Severity::Warning,
                raw,
                format!(
                    "`{shown}` looks like `{target}`{odd}; a look-alike directory \
                     escapes the rules written for `{target}` — rename it to a plain name"
                ),
            )
            .confidence(Confidence::Medium),
        );
    }

    fn check_totals(&self, changes: &ChangeSet, out: &mut Vec<Issue>) {
        if let Some(max) = self.max_files {
            let n = changes.files.len() as u64;
            if n > max {
                let at = &changes.files[max as usize].path;
                out.push(issue(
                    "max-files",
                    Severity::Error,
                    at,
                    format!(
                        "{n} files changed, more than max_files_changed = {max} \
                         (first over the limit: `{at}`); split the change or drop unrelated edits"
                    ),
                ));
            }
        }
        if let Some(max) = self.max_lines {
            let mut total: u64 = 0;
            let mut crossed: Option<&str> = None;
            for f in &changes.files {
                // Do not trust `added` alone: a hostile change set may
                // under-report it while carrying the lines.
                let added = (f.added as u64).max(f.added_lines.len() as u64);
                total += added + f.removed as u64;
                if total > max && crossed.is_none() {
                    crossed = Some(&f.path);
                }
            }
            if let Some(at) = crossed {
                out.push(issue(
                    "max-lines",
                    Severity::Error,
                    at,
                    format!(
                        "{total} lines changed, more than max_lines_changed = {max} \
                         (limit crossed at `{at}`); make a smaller change"
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod file_checks_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod tests;

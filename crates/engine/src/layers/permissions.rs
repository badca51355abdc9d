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

use crate::config::permissions::{
    compile_globs, fold_path, GlobPattern, Mode, OpName, PermissionsConfig,
};
use crate::layers::imports::{new_imports, reaches_below};
use crate::model::changeset::{ChangeSet, EntryKind, FileChange, Operation};
use crate::model::verdict::{Confidence, Issue, Severity};
use globset::{Candidate, GlobSet};
use std::borrow::Cow;
use std::collections::BTreeSet;
use unicode_normalization::UnicodeNormalization;

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

/// A path after normalisation.
enum Norm<'a> {
    Ok(Cow<'a, str>),
    /// Absolute, empty, or escaping the repository root.
    Escape(&'static str),
}

/// Normalise a repository-relative path: strip `./`, collapse `//`,
/// resolve `.` and `..`. Absolute paths, the empty path and paths whose
/// `..` climb past the root are escapes.
fn normalize(path: &str) -> Norm<'_> {
    if path.starts_with('/') {
        return Norm::Escape("is absolute");
    }
    if path.is_empty() {
        return Norm::Escape("is empty");
    }
    let needs_work = path
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..");
    if !needs_work {
        return Norm::Ok(Cow::Borrowed(path));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Norm::Escape("climbs out of the repository with `..`");
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Norm::Escape("resolves to the repository root");
    }
    Norm::Ok(Cow::Owned(parts.join("/")))
}

/// The symlinks of a change: normalised path → target.
type Links = std::collections::BTreeMap<String, String>;

/// Links a chain may pass through: more is a loop (the kernel's own limit).
const MAX_LINKS: usize = 40;

fn links_of(changes: &ChangeSet) -> Links {
    changes
        .files
        .iter()
        .filter(|f| f.new_kind == Some(EntryKind::Symlink) && f.op != Operation::Delete)
        .filter_map(|f| match (normalize(&f.path), f.symlink_target.as_ref()) {
            (Norm::Ok(p), Some(t)) => Some((p.into_owned(), t.clone())),
            _ => None,
        })
        .collect()
}

/// Where the link at `link` (normalised) pointing at `target` ends, after
/// every link of the change on the way (links to links, `..` after a
/// link, relative and absolute targets), as the file system would resolve
/// it: a repository-relative path (empty: the root), or why it leaves the
/// repository or never ends.
fn resolve_chain(link: &str, target: &str, links: &Links) -> Result<String, String> {
    let mut at: Vec<String> = link.split('/').map(String::from).collect();
    at.pop();
    let mut pending: std::collections::VecDeque<String> =
        target.split('/').map(String::from).collect();
    let mut hops = 1;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if at.pop().is_none() {
                    return Err(if hops > 1 {
                        format!("which leaves the repository through a chain of {hops} links")
                    } else {
                        "outside the repository".to_string()
                    });
                }
                continue;
            }
            _ => at.push(part),
        }
        if let Some(next) = links.get(&at.join("/")) {
            hops += 1;
            if hops > MAX_LINKS {
                return Err(format!(
                    "a chain of more than {MAX_LINKS} links (or a loop), which never resolves"
                ));
            }
            if next.starts_with('/') || next.starts_with('\\') || next.starts_with('~') {
                return Err(format!(
                    "which leads through `{}` to {next:?}, outside the repository",
                    at.join("/")
                ));
            }
            at.pop();
            for p in next.split('/').rev() {
                pending.push_front(p.to_string());
            }
        }
    }
    Ok(at.join("/"))
}

/// Zero-width, joiner, direction and other invisible format characters.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
        | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{E0000}'..='\u{E0FFF}')
}

fn suspicious(path: &str) -> Option<&'static str> {
    if path.contains('\0') {
        Some("contains a NUL byte")
    } else if path.contains('\\') {
        Some("contains a backslash")
    } else if path.chars().any(|c| c.is_control()) {
        Some("contains a control character")
    } else if path.chars().any(is_invisible) {
        Some("contains an invisible (zero-width or format) character")
    } else {
        None
    }
}

fn first_segment(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

/// Self-protection and `.git/` ignore case whatever `case_sensitive` says:
/// on a case-insensitive checkout `.RASCAL/` is the real config.
fn is_protected(norm: &str) -> bool {
    let first = fold_path(first_segment(norm), false);
    PROTECTED.contains(&first.as_ref())
}

fn is_git_dir(norm: &str) -> bool {
    fold_path(first_segment(norm), false) == ".git"
}

/// The UTS #39 confusable skeleton of a path component, after NFKC
/// (fullwidth forms) and case folding: equal skeletons look alike.
fn skeleton(name: &str) -> String {
    let nfkc: String = name.nfkc().collect();
    let folded = fold_path(&nfkc, false);
    let skel: String = unicode_security::confusable_detection::skeleton(&folded).collect();
    // The prototypes may be upper-case (e.g. `I`): fold once more.
    fold_path(&skel, false).into_owned()
}

/// The literal first component of a glob (`secrets/**` → `secrets`,
/// `/.github/` → `.github`); None when it has glob syntax.
fn literal_first(glob: &str) -> Option<&str> {
    let g = glob.trim_start_matches("./").trim_start_matches('/');
    let first = first_segment(g);
    let meta = first.contains(['*', '?', '[', ']', '{', '}', '\\', '!']);
    (!first.is_empty() && first != "." && first != ".." && !meta).then_some(first)
}

fn compile_set(globs: &[GlobPattern], case_sensitive: bool) -> Result<GlobSet, String> {
    compile_globs(globs, case_sensitive)
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
    pub fn compile(cfg: &PermissionsConfig) -> Result<Self, String> {
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

    /// True when `norm` (normalised) is allowed by every allow-set.
    fn allowed(&self, c: &Candidate<'_>) -> bool {
        self.allowed.iter().all(|s| s.is_match_candidate(c))
    }

    /// Judge one path a change touches. Returns the normalised path if it
    /// stayed inside the repository.
    fn check_path<'p>(
        &self,
        raw: &'p str,
        side: &str,
        out: &mut Vec<Issue>,
    ) -> Option<Cow<'p, str>> {
        if let Some(why) = suspicious(raw) {
            out.push(
                issue(
                    "suspicious-path",
                    Severity::Warning,
                    raw,
                    format!(
                        "{side} path {raw:?} {why}; \
                         it is matched literally, but rename it to a plain path"
                    ),
                )
                .confidence(Confidence::Medium),
            );
        }
        let norm = match normalize(raw) {
            Norm::Ok(n) => n,
            Norm::Escape(why) => {
                out.push(issue(
                    "path-escape",
                    Severity::Error,
                    raw,
                    format!(
                        "{side} path {raw:?} {why}; \
                         changes must stay inside the repository"
                    ),
                ));
                return None;
            }
        };
        if is_protected(&norm) && !self.allow_self_edit {
            out.push(issue(
                "self-protection",
                Severity::Error,
                raw,
                format!(
                    "{side} path `{norm}` is rascal's own config or \
                     artifacts; an agent may not change what checks it — revert this change"
                ),
            ));
        }
        if is_git_dir(&norm) {
            out.push(issue(
                "git-dir",
                Severity::Error,
                raw,
                format!(
                    "{side} path `{norm}` is inside the git directory; \
                     revert this change"
                ),
            ));
        }
        let folded = fold_path(&norm, self.case_sensitive);
        let cand = Candidate::new(folded.as_ref());
        if self.denied.is_match_candidate(&cand) {
            out.push(issue(
                "denied-path",
                Severity::Error,
                raw,
                format!(
                    "{side} path `{norm}` matches denied_paths; \
                     revert the change to this path"
                ),
            ));
        } else if !self.allowed(&cand) {
            out.push(issue(
                "outside-allowed-paths",
                Severity::Error,
                raw,
                format!(
                    "{side} path `{norm}` is not in allowed_paths; \
                     revert it or keep the change within the allowed paths"
                ),
            ));
        }
        Some(norm)
    }

    fn check_file(&self, f: &FileChange, links: &Links, out: &mut Vec<Issue>) {
        let is_rename = f.op == Operation::Rename || f.old_path.is_some();
        let new_side = if is_rename { "new" } else { "changed" };
        let new_norm = self.check_path(&f.path, new_side, out);
        if let Some(old) = f.old_path.as_deref() {
            if old != f.path {
                self.check_path(old, "old", out);
            }
        }
        self.check_ops(f, out);
        self.check_kinds(f, new_norm.as_deref(), links, out);
    }

    /// The operations a change amounts to, each with the path it applies to.
    fn effective_ops(f: &FileChange) -> Vec<(OpName, &str)> {
        let mut ops = vec![(opname_of(f.op), f.path.as_str())];
        let content = f.added > 0 || f.removed > 0 || !f.added_lines.is_empty();
        match f.op {
            Operation::Rename => {
                // Moving a file away deletes it from its old path and
                // creates it at the new one.
                ops.push((OpName::Delete, f.old_path.as_deref().unwrap_or(&f.path)));
                ops.push((OpName::Create, f.path.as_str()));
                if content {
                    ops.push((OpName::Modify, f.path.as_str()));
                }
            }
            Operation::Mode if content => ops.push((OpName::Modify, f.path.as_str())),
            _ => {}
        }
        if f.op != Operation::Mode && f.mode_changed() {
            ops.push((OpName::Mode, f.path.as_str()));
        }
        // Inconsistent input: trust the kinds over the op word.
        if f.new_kind.is_none() && f.op != Operation::Delete {
            ops.push((OpName::Delete, f.path.as_str()));
        }
        if f.old_kind.is_none() && f.op != Operation::Create {
            ops.push((OpName::Create, f.path.as_str()));
        }
        ops.sort();
        ops.dedup();
        ops
    }

    fn check_ops(&self, f: &FileChange, out: &mut Vec<Issue>) {
        for (op, path) in Self::effective_ops(f) {
            let how = if f.op == Operation::Rename && opname_of(f.op) != op {
                format!(" (as part of a {})", f.op.name())
            } else {
                String::new()
            };
            if self.ops_denied[op.index()] {
                out.push(issue(
                    "operation-denied",
                    Severity::Error,
                    path,
                    format!(
                        "`{path}`: operation `{}`{how} is in denied_operations; \
                         revert it",
                        op_name(op)
                    ),
                ));
            } else if !self.ops_allowed[op.index()] {
                out.push(issue(
                    "operation-not-allowed",
                    Severity::Error,
                    path,
                    format!(
                        "`{path}`: operation `{}`{how} is not in \
                         allowed_operations; revert it",
                        op_name(op)
                    ),
                ));
            }
        }
    }

    fn check_kinds(
        &self,
        f: &FileChange,
        new_norm: Option<&str>,
        links: &Links,
        out: &mut Vec<Issue>,
    ) {
        let path = f.path.as_str();
        // Submodules: added, moved, changed or removed.
        let sub = f.new_kind == Some(EntryKind::Submodule)
            || f.old_kind == Some(EntryKind::Submodule)
            || new_norm == Some(".gitmodules")
            || f.old_path
                .as_deref()
                .map(normalize)
                .is_some_and(|n| matches!(n, Norm::Ok(ref p) if p.as_ref() == ".gitmodules"));
        if sub && !self.allow_submodules {
            out.push(issue(
                "submodule",
                Severity::Error,
                path,
                format!(
                    "`{path}` changes a submodule (gitlink or .gitmodules) and \
                     allow_submodules is off; revert it"
                ),
            ));
        }
        // Executables.
        if f.new_kind == Some(EntryKind::Executable)
            && (f.old_kind != Some(EntryKind::Executable)
                || matches!(f.op, Operation::Create | Operation::Rename))
        {
            let ok = match new_norm {
                Some(n) if !self.executable.is_empty() => {
                    let n = fold_path(n, self.case_sensitive);
                    let c = Candidate::new(n.as_ref());
                    self.executable.iter().all(|s| s.is_match_candidate(&c))
                }
                _ => false,
            };
            if !ok {
                out.push(issue(
                    "executable",
                    Severity::Warning,
                    path,
                    format!(
                        "`{path}` is made executable outside executable_paths; \
                         drop the executable bit or add the path to executable_paths"
                    ),
                ));
            }
        }
        // Symlinks.
        if f.new_kind == Some(EntryKind::Symlink) && f.op != Operation::Delete {
            if let Some(why) = self.symlink_problem(new_norm, f.symlink_target.as_deref(), links) {
                out.push(issue(
                    "symlink-escape",
                    Severity::Error,
                    path,
                    format!("symlink `{path}` {why}; remove the symlink"),
                ));
            }
        }
    }

    fn symlink_problem(
        &self,
        link: Option<&str>,
        target: Option<&str>,
        links: &Links,
    ) -> Option<String> {
        let link = link?; // the link path itself escaped: already reported
        let Some(target) = target else {
            return Some("has no recorded target, so it cannot be verified".to_string());
        };
        if target.is_empty() {
            return Some("has an empty target".to_string());
        }
        if target.starts_with('/') || target.starts_with('\\') || target.starts_with('~') {
            return Some(format!("points to {target:?}, outside the repository"));
        }
        if target.as_bytes().get(1) == Some(&b':') {
            return Some(format!(
                "points to {target:?}, a drive path outside the repository"
            ));
        }
        if target.contains('\0') {
            return Some("has a target containing a NUL byte".to_string());
        }
        let resolved = match resolve_chain(link, target, links) {
            Ok(p) if p.is_empty() => {
                return Some(format!(
                    "points to {target:?}, the repository root (which contains .rascal/)"
                ))
            }
            Ok(p) => p,
            Err(why) => return Some(format!("points to {target:?}, {why}")),
        };
        if is_protected(&resolved) && !self.allow_self_edit {
            return Some(format!(
                "points into `{resolved}`, rascal's protected directory"
            ));
        }
        if is_git_dir(&resolved) {
            return Some(format!("points into `{resolved}`, the git directory"));
        }
        if self
            .denied
            .is_match(fold_path(&resolved, self.case_sensitive).as_ref())
        {
            return Some(format!("points to `{resolved}`, a denied path"));
        }
        None
    }

    fn check_imports(&self, f: &FileChange, out: &mut Vec<Issue>) {
        let mut last: Option<(u32, &str)> = None;
        for (line, module) in new_imports(f) {
            let reaching = reaches_below(&f.path, &module);
            for forbidden in &self.forbidden_imports {
                if module_matches(&module, forbidden, reaching) {
                    if last == Some((line, forbidden.as_str())) {
                        continue;
                    }
                    last = Some((line, forbidden.as_str()));
                    out.push(
                        Issue::new(
                            "permissions/forbidden-import",
                            Severity::Error,
                            format!(
                                "`{}` imports `{module}`, forbidden by \
                                 forbidden_imports entry `{forbidden}`; remove the import",
                                f.path
                            ),
                        )
                        .at(&f.path, Some(line)),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        let ok = |p: &str| match normalize(p) {
            Norm::Ok(n) => Some(n.into_owned()),
            Norm::Escape(_) => None,
        };
        assert_eq!(ok("./a//b/./c").as_deref(), Some("a/b/c"));
        assert_eq!(ok("a/../b").as_deref(), Some("b"));
        assert_eq!(ok("../a"), None);
        assert_eq!(ok("a/../../b"), None);
        assert_eq!(ok("/etc/passwd"), None);
        assert_eq!(ok("."), None);
    }

    #[test]
    fn symlink_chains_are_resolved_to_their_end() {
        let links: Links = [
            ("d/e/up", ".."),
            ("a", "b"),
            ("b", "c"),
            ("c", "d"),
            ("loop1", "loop2"),
            ("loop2", "loop1"),
            ("abs", "/etc"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let r = |link: &str, t: &str| resolve_chain(link, t, &links);
        assert_eq!(r("x", "src/lib.rs"), Ok("src/lib.rs".into()));
        assert_eq!(r("x", "a"), Ok("d".into()), "a -> b -> c -> d");
        assert_eq!(r("d/e/up", ".."), Ok("d".into()));
        // Lexically `d`; through the link `up` (= d) it leaves the tree.
        assert!(r("x", "d/e/up/../..").is_err());
        assert!(r("x", "d/e/up/..").is_ok_and(|p| p.is_empty()));
        assert!(r("x", "loop1").unwrap_err().contains("never resolves"));
        assert!(r("x", "abs/passwd").unwrap_err().contains("outside"));
        assert!(r("x", "../y").is_err());
    }

    #[test]
    fn module_boundaries() {
        assert!(module_matches("os/exec", "os/exec", false));
        assert!(module_matches(
            "std::process::Command",
            "std::process",
            false
        ));
        assert!(module_matches("subprocess.run", "subprocess", false));
        assert!(!module_matches("os/executil", "os/exec", false));
        assert!(!module_matches("unsafety", "unsafe", false));
        // What an import reaches: below it, not beside it.
        assert!(
            !module_matches("os", "os/exec", false),
            "Go packages are not nested"
        );
        assert!(module_matches("std", "std::process", true));
        assert!(module_matches("std::process", "std::process::exit", true));
        assert!(
            module_matches("os.*", "os.system", false),
            "a glob reaches below"
        );
        assert!(module_matches("std::*", "std", false));
        assert!(!module_matches("std::processing", "std::process", true));
        assert!(!module_matches("std::io", "std::process", true));
        assert!(!module_matches("st", "std::process", true));
    }
}

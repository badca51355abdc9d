//! One read per file: the checks that read a change's content — banned
//! patterns on the added lines, the secret scan, forbidden imports — fed
//! together, file by file, while the ChangeSet is streamed
//! ([`rascal_exec::git::workspace::changeset_streamed`]). Each file's content is
//! read once and let go once they have seen it; what they found (bounded:
//! issues and the first hits) waits here for `verify` to turn into reports.

use rascal_core::model::changeset::ChangeSet;
use rascal_exec::git::workspace::{self, ChangeSetLimits};

use crate::layers::guardrails::{ContentFindings, ContentReader};
use crate::layers::permissions::Permissions;
use rascal_core::config::{Config, PermissionsConfig};
use rascal_core::model::changeset::{AddedLine, FileChange};
use rascal_core::model::verdict::Issue;
use std::collections::BTreeMap;

/// The content checks of one verification, fed one file at a time.
pub struct ContentPass<'c> {
    /// The content-reading guardrails, by their index in the config.
    guardrails: Vec<(usize, ContentReader<'c>)>,
    /// The permissions policy, when it forbids imports.
    imports: Option<Permissions>,
    found_imports: ImportsFound,
    /// The last lines of the window before, for an import statement across
    /// the cut between two windows of one file (path, lines).
    carry: Option<(String, Vec<AddedLine>)>,
    /// Forbidden imports found past [`MAX_IMPORT_ISSUES`] in the file being
    /// read.
    more_imports: usize,
}

/// How many lines of a window the import scan of the next window reads
/// again (an import statement spread over more lines across the cut is not
/// seen whole; see docs/security.md).
const IMPORT_CARRY_LINES: usize = 256;

/// At most this many forbidden imports are listed per file; the rest are
/// counted in one more issue.
const MAX_IMPORT_ISSUES: usize = 200;

/// What the content checks found, for `verify`.
#[derive(Default)]
pub struct ContentRead {
    guardrails: Vec<(usize, ContentFindings)>,
    /// Forbidden imports: which files were read, and what was found in
    /// those where some were.
    pub imports: ImportsFound,
}

/// Forbidden imports found, file by file, in memory that does not grow
/// with the paths: each file read is remembered as a keyed 64-bit hash of
/// its path (keys random per process, so no change can aim at a
/// collision), and only files with findings keep their path and issues.
#[derive(Default)]
pub struct ImportsFound {
    keys: std::collections::hash_map::RandomState,
    read: std::collections::HashSet<u64>,
    found: BTreeMap<String, Vec<Issue>>,
    /// The file being read (its windows come one after another) and what
    /// was found in it so far.
    current: Option<String>,
    scratch: Vec<Issue>,
}

impl ImportsFound {
    fn key(&self, path: &str) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one(path)
    }

    /// A window of `path` is about to be read (the file before is done).
    fn read(&mut self, path: &str) {
        if self.current.as_deref() != Some(path) {
            self.flush();
            let key = self.key(path);
            self.read.insert(key);
            self.current = Some(path.to_string());
        }
    }

    /// Keep what was found in the file just read, if anything.
    fn flush(&mut self) {
        if let Some(path) = self.current.take() {
            if !self.scratch.is_empty() {
                let issues = std::mem::take(&mut self.scratch);
                self.found.entry(path).or_default().extend(issues);
            }
        }
    }
}

impl crate::layers::permissions::ImportsRead for ImportsFound {
    fn found_in(&self, path: &str) -> Option<&[Issue]> {
        if let Some(issues) = self.found.get(path) {
            return Some(issues);
        }
        self.read.contains(&self.key(path)).then_some(&[])
    }
}

impl ContentRead {
    /// What guardrail `index` (of the config's list) found, when it reads
    /// content.
    pub fn guardrail(&self, index: usize) -> Option<&ContentFindings> {
        self.guardrails
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, f)| f)
    }
}

impl<'c> ContentPass<'c> {
    /// The content checks that `verify` will run for `config`, with the
    /// permissions in force for the change
    /// ([`crate::pipeline::sequence::permissions_in_force`]).
    pub fn new(config: &'c Config, permissions: Option<&PermissionsConfig>) -> Self {
        let guardrails = config
            .guardrails
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter_map(|(i, g)| ContentReader::new(g).map(|r| (i, r)))
            .collect();
        let imports = permissions
            .and_then(|cfg| Permissions::compile(cfg).ok())
            .filter(Permissions::reads_content);
        ContentPass {
            guardrails,
            imports,
            found_imports: ImportsFound::default(),
            carry: None,
            more_imports: 0,
        }
    }

    /// Does any check read content? When none does, the ChangeSet need
    /// not build the lines at all.
    pub fn reads(&self) -> bool {
        !self.guardrails.is_empty() || self.imports.is_some()
    }

    /// Read one changed file.
    pub fn file(&mut self, f: &FileChange) {
        for (_, reader) in &mut self.guardrails {
            reader.file(f);
        }
        let Some(p) = &self.imports else {
            return;
        };
        self.found_imports.read(&f.path);
        let found = &mut self.found_imports.scratch;
        let Some(part) = f.part else {
            found.extend(p.import_issues(f));
            return;
        };
        // One window of a large file: read after the last lines of the
        // window before, each import listed once.
        if part.first() {
            self.carry = None;
            self.more_imports = 0;
        }
        let mut view = FileChange::new(f.path.clone(), f.op);
        view.old_path = f.old_path.clone();
        view.new_kind = f.new_kind;
        view.old_kind = f.old_kind;
        view.binary = f.binary;
        view.added_lines = match self.carry.take() {
            Some((path, carry)) if path == f.path => carry,
            _ => Vec::new(),
        };
        view.added_lines.extend(f.added_lines.iter().cloned());
        for issue in p.import_issues(&view) {
            if found.contains(&issue) {
                continue;
            }
            if found.len() < MAX_IMPORT_ISSUES {
                found.push(issue);
            } else {
                self.more_imports += 1;
            }
        }
        if part.last {
            if self.more_imports > 0 {
                found.push(
                    Issue::new(
                        "permissions/forbidden-import",
                        rascal_core::model::verdict::Severity::Error,
                        format!(
                            "`{}` has {} more forbidden imports not listed",
                            f.path, self.more_imports
                        ),
                    )
                    .at(&f.path, None),
                );
            }
            self.more_imports = 0;
        } else {
            let keep = view.added_lines.len().saturating_sub(IMPORT_CARRY_LINES);
            view.added_lines.drain(..keep);
            self.carry = Some((f.path.clone(), view.added_lines));
        }
    }

    pub fn finish(self) -> ContentRead {
        let mut imports = self.found_imports;
        imports.flush();
        ContentRead {
            guardrails: self
                .guardrails
                .into_iter()
                .map(|(i, r)| (i, r.finish()))
                .collect(),
            imports,
        }
    }
}

/// The ChangeSet of the files in `dir` against `base` (of the repository at
/// `origin`), streamed through the content checks of `config` and
/// `permissions` (those in force for the change): what `verify_read`
/// needs, each file read once.
pub fn read_change(
    config: &Config,
    permissions: Option<&PermissionsConfig>,
    origin: &std::path::Path,
    dir: &std::path::Path,
    base: git2::Oid,
    limits: &ChangeSetLimits,
) -> workspace::Result<(ChangeSet, ContentRead)> {
    let mut pass = ContentPass::new(config, permissions);
    let changes = if pass.reads() {
        workspace::changeset_streamed(origin, dir, base, limits, Some(&mut |f| pass.file(f)))?
    } else {
        workspace::changeset_streamed(origin, dir, base, limits, None)?
    };
    Ok((changes, pass.finish()))
}

/// A candidate's change, read like [`read_change`] and written as it is
/// read ([`workspace::candidate_change`]): the content checks, the digests,
/// the comparator's likeness and the change tree all come from the one read
/// of each file of the workspace `dir`; held-out paths are left out first.
pub fn read_candidate_change(
    config: &Config,
    permissions: Option<&PermissionsConfig>,
    origin: &std::path::Path,
    dir: &std::path::Path,
    base: git2::Oid,
    holdout: &rascal_exec::git::holdout::Holdout,
) -> workspace::Result<(ChangeSet, ContentRead)> {
    let mut pass = ContentPass::new(config, permissions);
    let limits = ChangeSetLimits::default();
    let changes = if pass.reads() {
        let mut read = |f: &FileChange| pass.file(f);
        workspace::candidate_change(origin, dir, base, &limits, holdout, Some(&mut read))?
    } else {
        workspace::candidate_change(origin, dir, base, &limits, holdout, None)?
    };
    Ok((changes, pass.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::permissions::ImportsRead;
    use rascal_core::model::verdict::Severity;

    fn issue(path: &str, what: &str) -> Issue {
        Issue::new("permissions/forbidden-import", Severity::Error, what).at(path, None)
    }

    #[test]
    fn files_read_are_known_and_only_findings_keep_their_path() {
        let mut f = ImportsFound::default();
        // Two windows of a.rs, a clean b.rs, one finding in c.rs.
        f.read("a.rs");
        f.scratch.push(issue("a.rs", "one"));
        f.read("a.rs");
        f.scratch.push(issue("a.rs", "two"));
        f.read("b.rs");
        f.read("c.rs");
        f.scratch.push(issue("c.rs", "three"));
        f.flush();
        let messages = |p: &str| -> Vec<String> {
            f.found_in(p)
                .unwrap()
                .iter()
                .map(|i| i.message.clone())
                .collect()
        };
        assert_eq!(messages("a.rs"), ["one", "two"]);
        assert_eq!(f.found_in("b.rs"), Some(&[][..]));
        assert_eq!(messages("c.rs"), ["three"]);
        // Never read: None, so the permissions layer says so (a FAIL).
        assert_eq!(f.found_in("d.rs"), None);
        assert_eq!(f.found.len(), 2, "a clean file keeps no entry");
    }
}

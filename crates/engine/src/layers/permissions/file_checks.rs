//! The checks on one changed file: its paths on both sides, the operations
//! it amounts to, its kinds (symlink, submodule, executable) and its imports.

use super::*;

impl Permissions {
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

    pub(super) fn check_file(&self, f: &FileChange, links: &Links, out: &mut Vec<Issue>) {
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

    pub(super) fn check_imports(&self, f: &FileChange, out: &mut Vec<Issue>) {
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

//! The pure criteria — `grep`, `file-exists` and the constraints — read
//! over the ChangeSet and the files before and after the change.

use super::*;

/// Files bigger than this are not searched by `grep` criteria.
const MAX_GREP_BYTES: usize = 4 * 1024 * 1024;

/// `grep`: the regex must match somewhere in the changed files after the
/// change (with `!`: must match nowhere). Evidence: `path:line`.
pub fn check_grep(c: &Criterion, changes: &ChangeSet, files: &dyn Files) -> Report {
    let r = criterion_report(c);
    let (re, must) = match grep_pattern(&c.check) {
        Ok(p) => p,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    let mut hits = Vec::new();
    for f in &changes.files {
        if f.op == rascal_core::model::changeset::Operation::Delete || f.binary {
            continue;
        }
        let Some(bytes) = files.read(&f.path) else {
            continue;
        };
        if bytes.len() > MAX_GREP_BYTES {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                hits.push((
                    f.path.clone(),
                    i as u32 + 1,
                    rascal_core::text::cut(line.trim(), 80),
                ));
            }
        }
    }
    let pat = re.as_str();
    match (must, hits.first()) {
        (true, Some((p, l, t))) => pass(
            r,
            format!("`{pat}` matched at {p}:{l}: {t}{}", more(hits.len())),
        ),
        (true, None) => fail(
            r,
            "criteria/grep",
            format!(
                "`{pat}` matched nowhere in the {}",
                rascal_core::text::plural(changes.files.len() as u64, "changed file")
            ),
        ),
        (false, None) => pass(
            r,
            format!("`{pat}` matched nowhere in the changed files, as required"),
        ),
        (false, Some((p, l, t))) => {
            let mut r = fail(
                r,
                "criteria/grep",
                format!(
                    "`{pat}` must not match, but matched at {p}:{l}: {t}{}",
                    more(hits.len())
                ),
            );
            r.issues[0].path = Some(p.clone());
            r.issues[0].line = Some(*l);
            r.finish()
        }
    }
}

fn more(n: usize) -> String {
    if n > 1 {
        format!(" (and {} more)", n - 1)
    } else {
        String::new()
    }
}

/// `file-exists`: the path is a file after the change.
pub fn check_file_exists(c: &Criterion, files: &dyn Files) -> Report {
    let r = criterion_report(c);
    let path = c.check.trim();
    if safe_rel(path).is_none() {
        return fail(
            r,
            "criteria/file-exists",
            format!("`{path}` is not a path inside the repository"),
        );
    }
    match files.read(path) {
        Some(b) => pass(r, format!("{path} exists ({} bytes)", b.len())),
        None => fail(
            r,
            "criteria/file-exists",
            format!("{path} does not exist after the change"),
        ),
    }
}

fn constraint_report(c: &Constraint) -> Report {
    Report::new(Layer::Criteria, &c.description).input("type", c.kind.name())
}

/// A constraint: pure over the ChangeSet (and, for no-new-deps, the
/// manifests before and after).
pub fn check_constraint(c: &Constraint, changes: &ChangeSet, files: &dyn Files) -> Report {
    let r = constraint_report(c);
    let rule = format!("constraints/{}", c.kind.name());
    match &c.kind {
        ConstraintKind::NoTouchFiles(glob) => {
            // Same matching as permissions: NFC, case-insensitive.
            let set = match compile_globs(std::slice::from_ref(glob), false) {
                Ok(s) => s,
                Err(e) => return r.errored(format!("invalid glob: {e}")).finish(),
            };
            let touched: Vec<&str> = changes
                .files
                .iter()
                .flat_map(|f| f.paths())
                .filter(|p| set.is_match(fold_path(p, false).as_ref()))
                .collect();
            if touched.is_empty() {
                pass(r, format!("no changed path matches `{}`", glob.as_str()))
            } else {
                let mut r = fail(
                    r,
                    &rule,
                    format!(
                        "{} matches `{}`, which must not be touched{}",
                        touched[0],
                        glob.as_str(),
                        more(touched.len())
                    ),
                );
                r.issues[0].path = Some(touched[0].to_string());
                r.finish()
            }
        }
        ConstraintKind::MaxLines(max) => {
            let n = changes.lines_changed();
            if n <= *max {
                pass(r, format!("{n} lines changed (max {max})"))
            } else {
                fail(
                    r,
                    &rule,
                    format!("{n} lines changed, over the maximum of {max}"),
                )
            }
        }
        ConstraintKind::NoNewDeps => no_new_deps(r, &rule, changes, files),
    }
}

/// `no-new-deps`: every manifest and lockfile the change touches, read
/// whole on both sides (base and after) and compared as declarations
/// (name and source). A manifest whose new side cannot be read — not
/// parseable, not UTF-8, a symlink, missing — fails: its dependencies
/// could not be checked.
fn no_new_deps(r: Report, rule: &str, changes: &ChangeSet, files: &dyn Files) -> Report {
    use rascal_core::model::changeset::{EntryKind, Operation};
    let mut added = Vec::new();
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut manifests = 0;
    for f in &changes.files {
        let old_is_manifest = f.old_path.as_deref().is_some_and(deps::is_manifest);
        if !deps::is_manifest(&f.path) {
            // A manifest renamed away or deleted adds nothing.
            manifests += usize::from(old_is_manifest);
            continue;
        }
        manifests += 1;
        let p = f.path.as_str();
        if f.op == Operation::Delete {
            continue;
        }
        if matches!(f.new_kind, Some(EntryKind::Symlink | EntryKind::Submodule)) {
            unreadable.push((
                p.to_string(),
                format!(
                    "could not check {p}: it is a {} after the change, so the file its tools would read is not in the change",
                    if f.new_kind == Some(EntryKind::Symlink) { "symlink" } else { "submodule" }
                ),
            ));
            continue;
        }
        let Some(new) = files.read(p) else {
            unreadable.push((
                p.to_string(),
                format!("could not read {p} after the change; its dependencies cannot be checked"),
            ));
            continue;
        };
        // A renamed manifest is compared with what it was.
        let base_path = match f.old_path.as_deref() {
            Some(old) if f.op == Operation::Rename && old_is_manifest => old,
            _ => p,
        };
        let old = files.read_base(base_path);
        match deps::added_deps(p, old.as_deref(), Some(&new)) {
            Ok(ds) => added.extend(ds.into_iter().map(|d| (p.to_string(), d))),
            Err(e) => unreadable.push((
                p.to_string(),
                format!("could not parse {p}: {e}; its dependencies cannot be checked"),
            )),
        }
    }
    if added.is_empty() && unreadable.is_empty() {
        return pass(
            r,
            format!("no dependency added ({manifests} manifest(s) changed)"),
        );
    }
    let mut r = r;
    for (p, e) in unreadable {
        r.issues
            .push(Issue::new(rule, Severity::Error, e).at(p, None));
    }
    for (p, d) in &added {
        r.issues
            .push(Issue::new(rule, Severity::Error, d.message(p)).at(p.clone(), None));
    }
    if !added.is_empty() {
        r.output = format!(
            "added: {}",
            added
                .iter()
                .map(|(p, d)| format!("{} ({p})", rascal_core::text::cut(&d.dep.name, 80)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    r.finish()
}

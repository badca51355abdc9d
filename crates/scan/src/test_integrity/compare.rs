//! Comparing the tests at the base and now: removed tests, added skip
//! markers, fewer assertions, early returns and changed expectations.

use super::lex::Syntax;
use super::scanned::{scan, test_syntax, ModuleDecl, TestCase};
use super::{
    short, FileVersions, MAX_FILE_BYTES, RULE_ASSERTIONS, RULE_EARLY_RETURN, RULE_EXPECTED,
    RULE_NOT_CHECKED, RULE_REMOVED, RULE_SKIP,
};
use rascal_core::model::verdict::Issue;
use rascal_core::model::verdict::Severity;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::collections::HashSet;

/// An issue and what the allow list is matched against.
pub(super) struct Finding {
    pub issue: Issue,
    /// Full and last-segment names of the tests it is about.
    pub tests: Vec<(String, String)>,
    pub paths: Vec<String>,
}

impl Finding {
    pub fn file(issue: Issue, paths: &[&str]) -> Self {
        Finding {
            issue,
            tests: Vec::new(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// One test found on one side, with where.
pub(super) struct Found<'a> {
    pub(super) file: usize,
    pub(super) path: &'a str,
    pub(super) syntax: Syntax,
    pub(super) case: TestCase,
}

#[derive(Default)]
pub(super) struct Sides<'a> {
    pub(super) base: Vec<Found<'a>>,
    pub(super) now: Vec<Found<'a>>,
    pub(super) base_modules: BTreeMap<usize, Vec<ModuleDecl>>,
    pub(super) now_modules: BTreeMap<usize, Vec<ModuleDecl>>,
}

pub(super) fn read_tests<'a>(files: &'a [FileVersions<'a>], out: &mut Vec<Finding>) -> Sides<'a> {
    let mut sides = Sides::default();
    for (idx, f) in files.iter().enumerate() {
        let old_path = f.old_path.unwrap_or(f.path);
        let base_syntax = test_syntax(old_path).filter(|_| f.base.is_some());
        let now_syntax = test_syntax(f.path).filter(|_| f.new.is_some());
        if base_syntax.is_none() && now_syntax.is_none() {
            continue;
        }
        let large = |t: Option<&str>| t.is_some_and(|t| t.len() > MAX_FILE_BYTES);
        if large(f.base) || large(f.new) {
            let msg = format!(
                "larger than {} MiB: its tests were not compared",
                MAX_FILE_BYTES >> 20
            );
            out.push(Finding::file(
                Issue::new(RULE_NOT_CHECKED, Severity::Warning, msg).at(f.path, None),
                &[f.path, old_path],
            ));
            continue;
        }
        if let (Some(sx), Some(text)) = (base_syntax, f.base) {
            let s = scan(sx, old_path, text);
            sides.base_modules.insert(idx, s.modules);
            sides.base.extend(s.tests.into_iter().map(|case| Found {
                file: idx,
                path: old_path,
                syntax: sx,
                case,
            }));
        }
        if let (Some(sx), Some(text)) = (now_syntax, f.new) {
            let s = scan(sx, f.path, text);
            sides.now_modules.insert(idx, s.modules);
            sides.now.extend(s.tests.into_iter().map(|case| Found {
                file: idx,
                path: f.path,
                syntax: sx,
                case,
            }));
        }
    }
    sides
}

/// For each base test, the now test it became (same file and name; else
/// same name anywhere; else same last segment anywhere), each now test
/// taken once.
pub(super) fn pair(sides: &Sides) -> Vec<Option<usize>> {
    pub(super) fn index<'s, K: std::hash::Hash + Eq>(
        now: &'s [Found],
        key: impl Fn(&'s Found) -> K,
    ) -> HashMap<K, Vec<usize>> {
        let mut m: HashMap<K, Vec<usize>> = HashMap::new();
        for (i, f) in now.iter().enumerate().rev() {
            m.entry(key(f)).or_default().push(i);
        }
        m
    }
    pub(super) fn take<K: std::hash::Hash + Eq>(
        m: &mut HashMap<K, Vec<usize>>,
        k: &K,
        claimed: &mut [bool],
    ) -> Option<usize> {
        let v = m.get_mut(k)?;
        while let Some(i) = v.pop() {
            if !claimed[i] {
                claimed[i] = true;
                return Some(i);
            }
        }
        None
    }
    let mut claimed = vec![false; sides.now.len()];
    let mut matched: Vec<Option<usize>> = vec![None; sides.base.len()];
    let mut same_file = index(&sides.now, |f| (f.file, f.case.name.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        *m = take(
            &mut same_file,
            &(b.file, b.case.name.as_str()),
            &mut claimed,
        );
    }
    let mut by_name = index(&sides.now, |f| (f.syntax, f.case.name.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        if m.is_none() {
            *m = take(
                &mut by_name,
                &(b.syntax, b.case.name.as_str()),
                &mut claimed,
            );
        }
    }
    let mut by_leaf = index(&sides.now, |f| (f.syntax, f.case.leaf.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        if m.is_none() {
            *m = take(
                &mut by_leaf,
                &(b.syntax, b.case.leaf.as_str()),
                &mut claimed,
            );
        }
    }
    matched
}

pub(super) fn names(cases: &[&TestCase]) -> String {
    const SHOWN: usize = 5;
    let mut s: Vec<String> = cases
        .iter()
        .take(SHOWN)
        .map(|c| format!("`{}`", short(&c.name)))
        .collect();
    if cases.len() > SHOWN {
        s.push(format!("and {} more", cases.len() - SHOWN));
    }
    s.join(", ")
}

pub(super) fn test_names(cases: &[&TestCase]) -> Vec<(String, String)> {
    cases
        .iter()
        .map(|c| (c.name.clone(), c.leaf.clone()))
        .collect()
}

/// A marker added to some tests, gathered so one marker on a module or
/// file is one finding.
#[derive(Default)]
pub(super) struct Added<'a> {
    pub(super) existing: Vec<&'a TestCase>,
    pub(super) new: Vec<&'a TestCase>,
    pub(super) text: String,
    pub(super) focus: bool,
    pub(super) conditional: bool,
    pub(super) new_severity: Option<Severity>,
}

pub(super) fn compare(files: &[FileVersions], sides: &Sides, out: &mut Vec<Finding>) {
    let matched = pair(sides);
    let mut now_is_old = vec![false; sides.now.len()];
    for n in matched.iter().flatten() {
        now_is_old[*n] = true;
    }

    removed(files, sides, &matched, out);
    modules(files, sides, out);

    // Markers, gathered by (path, line, key).
    let mut added: BTreeMap<(&str, u32, String), Added> = BTreeMap::new();
    for (b, n) in matched.iter().enumerate() {
        let Some(n) = *n else { continue };
        let (base, now) = (&sides.base[b], &sides.now[n]);
        let mut left: HashMap<&str, usize> = HashMap::new();
        for m in &base.case.markers {
            *left.entry(m.key.as_str()).or_default() += 1;
        }
        for m in &now.case.markers {
            match left.get_mut(m.key.as_str()) {
                Some(c) if *c > 0 => *c -= 1,
                _ => {
                    let a = added.entry((now.path, m.line, m.key.clone())).or_default();
                    a.existing.push(&now.case);
                    a.text.clone_from(&m.text);
                    a.conditional = m.conditional;
                }
            }
        }
        if let (Some(f), None) = (&now.case.focus, &base.case.focus) {
            let a = added.entry((now.path, f.line, f.key.clone())).or_default();
            a.existing.push(&now.case);
            a.focus = true;
            a.text.clone_from(&f.text);
        }
        body_changes(&base.case, now, out);
    }
    let files_with_old_tests: HashSet<usize> = sides.base.iter().map(|f| f.file).collect();
    for (n, now) in sides.now.iter().enumerate() {
        if now_is_old[n] {
            continue;
        }
        for m in &now.case.markers {
            let a = added.entry((now.path, m.line, m.key.clone())).or_default();
            a.new.push(&now.case);
            a.text.clone_from(&m.text);
            a.conditional = m.conditional;
            // A platform condition on a new test is ordinary.
            let new_severity = if m.severity < Severity::Error {
                Severity::Info
            } else {
                Severity::Warning
            };
            a.new_severity = a.new_severity.max(Some(new_severity));
        }
        if let Some(f) = &now.case.focus {
            let a = added.entry((now.path, f.line, f.key.clone())).or_default();
            a.new.push(&now.case);
            a.focus = true;
            a.text.clone_from(&f.text);
        }
        if let Some(line) = now.case.early_return {
            let msg = format!(
                "new test `{}` returns before it checks anything",
                short(&now.case.name)
            );
            out.push(Finding {
                issue: Issue::new(RULE_EARLY_RETURN, Severity::Warning, msg)
                    .at(now.path, Some(line)),
                tests: test_names(&[&now.case]),
                paths: vec![now.path.to_string()],
            });
        }
    }
    let path_file: HashMap<&str, usize> = sides.now.iter().map(|f| (f.path, f.file)).collect();
    for ((path, line, _), a) in added {
        let all: Vec<&TestCase> = a.existing.iter().chain(a.new.iter()).copied().collect();
        let hides_old = a.focus
            && path_file
                .get(path)
                .is_some_and(|f| files_with_old_tests.contains(f));
        let (severity, msg) = marker_message(&a, hides_old);
        out.push(Finding {
            issue: Issue::new(RULE_SKIP, severity, msg).at(path, Some(line)),
            tests: test_names(&all),
            paths: vec![path.to_string()],
        });
    }
}

/// An added marker's severity and message: a focus that skips the file's
/// other tests (an error when the base had tests there: `hides_old`), a
/// skip or condition on tests the base had, or on new tests.
pub(super) fn marker_message(a: &Added<'_>, hides_old: bool) -> (Severity, String) {
    if a.focus {
        let severity = if hides_old {
            Severity::Error
        } else {
            Severity::Warning
        };
        (
            severity,
            format!(
                "`{}` added: only the focused tests run, the other tests of this file are skipped",
                a.text
            ),
        )
    } else if !a.existing.is_empty() {
        // A tamper finding on a test the base had is an error, a
        // platform condition included: the test may no longer run here.
        let severity = Severity::Error;
        let (one, many) = if a.conditional {
            (
                "now runs only when a condition allows",
                "now run only when a condition allows",
            )
        } else {
            ("no longer runs", "no longer run")
        };
        let subject = if a.existing.len() == 1 {
            format!("test {} {one}", names(&a.existing))
        } else {
            format!(
                "{} tests that existed at the base {many}: {}",
                a.existing.len(),
                names(&a.existing)
            )
        };
        (severity, format!("`{}` added: {subject}", a.text))
    } else {
        let subject = if a.new.len() == 1 {
            format!("new test {}", names(&a.new))
        } else {
            format!("{} new tests", a.new.len())
        };
        let how = if a.conditional {
            "runs only when a condition allows"
        } else {
            "never runs"
        };
        let how = if a.new.len() == 1 {
            how.to_string()
        } else {
            how.replacen("runs", "run", 1)
        };
        (
            a.new_severity.unwrap_or(Severity::Warning),
            format!("{subject} {how}: `{}`", a.text),
        )
    }
}

pub(super) fn removed(
    files: &[FileVersions],
    sides: &Sides,
    matched: &[Option<usize>],
    out: &mut Vec<Finding>,
) {
    // Whole files first: one finding per file deleted or renamed away.
    let mut by_file: BTreeMap<usize, Vec<&TestCase>> = BTreeMap::new();
    for (b, m) in matched.iter().enumerate() {
        if m.is_some() {
            continue;
        }
        let base = &sides.base[b];
        let f = &files[base.file];
        let collected_now = f.new.is_some() && test_syntax(f.path) == Some(base.syntax);
        if !collected_now {
            by_file.entry(base.file).or_default().push(&base.case);
            continue;
        }
        let msg = format!(
            "test `{}` existed at the base (line {}) and is gone: deleted, renamed, or no longer marked as a test",
            short(&base.case.name),
            base.case.line
        );
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(f.path, None),
            tests: test_names(&[&base.case]),
            paths: vec![f.path.to_string(), base.path.to_string()],
        });
    }
    for (idx, cases) in by_file {
        let f = &files[idx];
        let old_path = f.old_path.unwrap_or(f.path);
        let what = if f.new.is_none() {
            format!("`{}` deleted", short(old_path))
        } else {
            format!(
                "`{}` renamed to `{}`, which the test runner does not collect",
                short(old_path),
                short(f.path)
            )
        };
        let count = if cases.len() == 1 {
            "1 test".to_string()
        } else {
            format!("{} tests", cases.len())
        };
        let msg = format!("{what}: {count} of the base gone: {}", names(&cases));
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(old_path, None),
            tests: test_names(&cases),
            paths: vec![old_path.to_string(), f.path.to_string()],
        });
    }
}

/// Rust `mod tests;` declarations that stopped declaring, or gained a
/// condition that is never true.
pub(super) fn modules(files: &[FileVersions], sides: &Sides, out: &mut Vec<Finding>) {
    for (idx, base_mods) in &sides.base_modules {
        let f = &files[*idx];
        let now_mods = sides.now_modules.get(idx);
        for b in base_mods.iter().filter(|m| m.test_like) {
            let now = now_mods.and_then(|v| v.iter().find(|m| m.name == b.name));
            let inlined = || {
                let prefix = format!("{}::", b.name);
                sides
                    .now
                    .iter()
                    .any(|t| t.file == *idx && t.case.name.starts_with(&prefix))
            };
            match now {
                None if !inlined() => {
                    let msg = format!(
                        "module `{}` (its tests are in another file) was declared at the base (line {}) and is not now: its tests no longer build",
                        short(&b.name),
                        b.line
                    );
                    out.push(Finding {
                        issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(f.path, None),
                        tests: vec![(b.name.clone(), b.name.clone())],
                        paths: vec![f.path.to_string()],
                    });
                }
                Some(n) => {
                    for m in n
                        .markers
                        .iter()
                        .filter(|m| !b.markers.iter().any(|k| k.key == m.key))
                    {
                        let msg = format!(
                            "`{}` added on module `{}` (its tests are in another file): they no longer run",
                            m.text,
                            short(&n.name)
                        );
                        out.push(Finding {
                            issue: Issue::new(RULE_SKIP, m.severity, msg).at(f.path, Some(m.line)),
                            tests: vec![(n.name.clone(), n.name.clone())],
                            paths: vec![f.path.to_string()],
                        });
                    }
                }
                None => {}
            }
        }
    }
}

/// Assertions, early returns and expected values of a test that exists on
/// both sides.
pub(super) fn body_changes(base: &TestCase, now: &Found, out: &mut Vec<Finding>) {
    let case = &now.case;
    let finding = |rule: &str, severity: Severity, line: u32, msg: String| Finding {
        issue: Issue::new(rule, severity, msg).at(now.path, Some(line)),
        tests: test_names(&[case]),
        paths: vec![now.path.to_string()],
    };
    let name = short(&case.name);
    if let (Some(line), None) = (case.early_return, base.early_return) {
        let msg = format!("test `{name}` now returns before it checks anything");
        out.push(finding(RULE_EARLY_RETURN, Severity::Error, line, msg));
    }
    let (was, is) = (base.assertions.len(), case.assertions.len());
    if is < was {
        let msg = format!("test `{name}` has {is} assertion(s), down from {was} at the base");
        out.push(finding(RULE_ASSERTIONS, Severity::Error, case.line, msg));
    } else if is == was {
        const MAX_PER_TEST: usize = 5;
        let changed = base
            .assertions
            .iter()
            .zip(&case.assertions)
            .filter(|(b, n)| b.shape == n.shape && b.literals != n.literals)
            .take(MAX_PER_TEST);
        for (b, n) in changed {
            let (old, new) = b
                .literals
                .iter()
                .zip(&n.literals)
                .find(|(o, n)| o != n)
                .map(|(o, n)| (short(o), short(n)))
                .unwrap_or_default();
            let msg = format!(
                "test `{name}`: an expected value changed from `{old}` to `{new}`; check that the test, not the code, was wrong"
            );
            out.push(finding(RULE_EXPECTED, Severity::Warning, n.line, msg));
        }
    }
    if case.expects_panic && !base.expects_panic {
        let msg =
            format!("test `{name}` gained `#[should_panic]`: it now passes when the code panics");
        out.push(finding(RULE_EXPECTED, Severity::Error, case.line, msg));
    }
}

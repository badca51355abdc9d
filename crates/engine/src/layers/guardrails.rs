//! Layer 2 guardrails: banned patterns, diff size and the secret scan are
//! pure functions of the ChangeSet (plus, for `scope: all`, the change's
//! files); commands run where the `Place` says (for a candidate: a fresh
//! copy of its change, in bubblewrap) with a timeout.

use crate::layers::diagnostics::{self, Captured};
use rascal_core::config::guardrails::Pattern;
use rascal_core::config::{Guardrail, GuardrailKind, Scope};
use rascal_core::model::changeset::{ChangeSet, EntryKind, FileChange, Operation};
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use rascal_exec::exec::place::Place;
use rascal_exec::exec::runner::{CommandSpec, TAIL_LINES};
use rascal_scan::secrets::SecretScanner;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Files of the base bigger than this are not read for `scope: all`
/// pattern scans (the files the change touches are always read whole).
const MAX_SCAN_BYTES: u64 = 2 * 1024 * 1024;
/// At most this many hits are listed per pattern guardrail.
const MAX_HITS: usize = 200;
/// A hit keeps at most this many bytes of its line (a line may be a
/// megabyte long).
const MAX_HIT_TEXT: usize = 512;

fn base_report(g: &Guardrail, changes: &ChangeSet, config_digest: &str) -> Report {
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", config_digest);
    r.required = g.required;
    r
}

/// Evaluate a guardrail that needs no command. `None` for command guardrails.
pub fn evaluate_pure(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    config_digest: &str,
) -> Option<Report> {
    evaluate_read(g, changes, place, config_digest, None)
}

/// What a guardrail that reads the change's added lines or bytes (banned
/// patterns on the diff, the secret scan) found, file by file, as the
/// ChangeSet was streamed. Bounded: the first [`MAX_HITS`] pattern hits are
/// kept, the rest only counted.
pub struct ContentFindings {
    found: Found,
    spent: std::time::Duration,
}

enum Found {
    Patterns {
        hits: Vec<Hit>,
        total: usize,
    },
    Secrets {
        scanner: Box<SecretScanner>,
        issues: Vec<Issue>,
        /// The file being read, between its windows.
        file: Option<rascal_scan::secrets::FileScan>,
    },
    Failed(String),
}

/// A content-reading guardrail, fed one file at a time.
pub struct ContentReader<'g> {
    patterns: &'g [Pattern],
    found: ContentFindings,
}

impl<'g> ContentReader<'g> {
    /// `None` when `g` does not read the change's content (commands, diff
    /// size, test integrity, `scope: all` patterns, which read the files of
    /// the whole tree themselves).
    pub fn new(g: &'g Guardrail) -> Option<Self> {
        let (patterns, found): (&[Pattern], Found) = match &g.kind {
            GuardrailKind::Patterns {
                patterns,
                scope: Scope::DiffOnly,
            } => (
                patterns,
                Found::Patterns {
                    hits: Vec::new(),
                    total: 0,
                },
            ),
            GuardrailKind::Secrets(opts) => (
                &[],
                match SecretScanner::new(opts) {
                    Ok(scanner) => Found::Secrets {
                        scanner: Box::new(scanner),
                        issues: Vec::new(),
                        file: None,
                    },
                    Err(e) => Found::Failed(format!("secret scanner could not start: {e}")),
                },
            ),
            _ => return None,
        };
        Some(ContentReader {
            patterns,
            found: ContentFindings {
                found,
                spent: Default::default(),
            },
        })
    }

    /// Read one changed file (its added lines, or a binary file's bytes).
    pub fn file(&mut self, f: &FileChange) {
        let started = Instant::now();
        match &mut self.found.found {
            Found::Patterns { hits, total } => {
                for l in &f.added_lines {
                    if let Some(p) = first_match(self.patterns, &l.text) {
                        *total += 1;
                        if hits.len() < MAX_HITS {
                            let text = rascal_core::text::cut(&l.text, MAX_HIT_TEXT);
                            hits.push((f.path.clone(), l.line, p.to_string(), text));
                        }
                    }
                }
            }
            Found::Secrets {
                scanner,
                issues,
                file,
            } => scanner.scan_part(f, file, issues),
            Found::Failed(_) => {}
        }
        self.found.spent += started.elapsed();
    }

    pub fn finish(mut self) -> ContentFindings {
        if let Found::Secrets {
            scanner,
            issues,
            file,
        } = &mut self.found.found
        {
            scanner.end_file(file, issues);
        }
        self.found
    }
}

/// Evaluate a guardrail that needs no command, with what a
/// [`ContentReader`] found as the change was streamed (`found`). Without
/// it, a guardrail that reads content reads the ChangeSet's own added
/// lines — unless their content was let go after streaming: then it could
/// not see the change, and says so (an error, never a pass).
pub fn evaluate_read(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    config_digest: &str,
    found: Option<&ContentFindings>,
) -> Option<Report> {
    let owned;
    let found = match found {
        Some(f) => Some(f),
        None if changes.is_streamed() => None,
        None => {
            owned = ContentReader::new(g).map(|mut reader| {
                for f in &changes.files {
                    reader.file(f);
                }
                reader.finish()
            });
            owned.as_ref()
        }
    };
    let started = Instant::now();
    let mut r = base_report(g, changes, config_digest);
    let rule = format!("guardrails/{}", g.name);
    let unread = |mut r: Report| {
        r.duration_ms = started.elapsed().as_millis() as u64;
        Some(
            r.errored(
                "the change's content was streamed to the checks without this one: \
                 it could not read the added lines (a bug in rascal; run it again)",
            )
            .finish(),
        )
    };
    if let Some(f) = found {
        r.duration_ms += f.spent.as_millis() as u64;
    }
    match &g.kind {
        // Commands run later; test-integrity is the pipeline's (it reads
        // both sides of the change and the test ledger).
        GuardrailKind::Command { .. } | GuardrailKind::TestIntegrity => return None,
        GuardrailKind::Patterns { patterns, scope } => {
            let pats: Vec<&str> = patterns.iter().map(|p| p.0.as_str()).collect();
            r = r.input("patterns", pats.join("\n"));
            let (hits, total) = match scope {
                Scope::DiffOnly => match found.map(|f| &f.found) {
                    Some(Found::Patterns { hits, total }) => (hits.clone(), *total),
                    _ => return unread(r),
                },
                Scope::All => match all_hits(patterns, changes, place) {
                    Ok(h) => {
                        let n = h.len();
                        (h, n)
                    }
                    Err(e) => {
                        r.duration_ms = started.elapsed().as_millis() as u64;
                        return Some(r.errored(e.to_string()).finish());
                    }
                },
            };
            push_hits(&mut r, &rule, hits, total);
        }
        GuardrailKind::DiffSize {
            max_lines,
            max_files,
        } => check_diff_size(&mut r, &rule, changes, *max_lines, *max_files),
        GuardrailKind::Secrets(opts) => {
            // The repository's rule files are inputs of the check too.
            for f in &opts.rule_files {
                r = r.input(&f.file, &f.digest);
            }
            match found.map(|f| &f.found) {
                Some(Found::Secrets {
                    scanner, issues, ..
                }) => {
                    r.issues = scanner.scan_change(changes);
                    r.issues.extend(issues.iter().cloned());
                    r.output = scanner.summary().to_string();
                }
                Some(Found::Failed(e)) => r = r.errored(e.clone()),
                _ => return unread(r),
            }
        }
    }
    r.duration_ms += started.elapsed().as_millis() as u64;
    Some(r.finish())
}

/// The banned-pattern hits as issues (the first [`MAX_HITS`]), and how
/// many matched in all when more did.
fn push_hits(r: &mut Report, rule: &str, hits: Vec<Hit>, total: usize) {
    for (path, line, pat, text) in hits.into_iter().take(MAX_HITS) {
        r.issues.push(
            Issue::new(
                rule,
                Severity::Error,
                format!(
                    "banned pattern `{pat}` matched: {}",
                    rascal_core::text::cut(text.trim(), 120)
                ),
            )
            .at(path, Some(line)),
        );
    }
    if total > MAX_HITS {
        r.output = format!("{total} matches; the first {MAX_HITS} are listed");
    }
}

/// The diff-size guardrail: the lines and files changed, each against its
/// limit.
fn check_diff_size(
    r: &mut Report,
    rule: &str,
    changes: &ChangeSet,
    max_lines: Option<u64>,
    max_files: Option<u64>,
) {
    let lines = changes.lines_changed();
    let files = changes.files.len() as u64;
    r.output = format!("{files} files, {lines} lines changed");
    if let Some(max) = max_lines {
        if lines > max {
            r.issues.push(Issue::new(
                rule,
                Severity::Error,
                format!("{lines} lines changed, more than the {max} allowed: split the change or raise max_lines"),
            ));
        }
    }
    if let Some(max) = max_files {
        if files > max {
            r.issues.push(Issue::new(
                rule,
                Severity::Error,
                format!("{files} files changed, more than the {max} allowed: split the change or raise max_files"),
            ));
        }
    }
}

type Hit = (String, u32, String, String);

fn first_match<'a>(patterns: &'a [Pattern], text: &str) -> Option<&'a str> {
    patterns
        .iter()
        .find(|p| p.0.is_match(text))
        .map(|p| p.0.as_str())
}

/// Every line of every file in the worktree after the change.
fn all_hits(
    patterns: &[Pattern],
    changes: &ChangeSet,
    place: &Place,
) -> Result<Vec<Hit>, crate::Error> {
    let unread = |e: git2::Error| crate::Error::Verification(e.to_string());
    // The base tree from the user's repository; the files from the change.
    let repo = git2::Repository::discover(place.origin()).map_err(|e| {
        crate::Error::Verification(format!("cannot open {}: {e}", place.origin().display()))
    })?;
    let base = git2::Oid::from_str(&changes.base).map_err(unread)?;
    let tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(unread)?;
    let mut paths = std::collections::BTreeSet::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            paths.insert(format!("{dir}{}", entry.name().unwrap_or("")));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(unread)?;
    for f in &changes.files {
        if let Some(old) = &f.old_path {
            paths.remove(old);
        }
        match f.op {
            Operation::Delete => {
                paths.remove(&f.path);
            }
            _ => {
                if matches!(f.new_kind, Some(EntryKind::File | EntryKind::Executable)) {
                    paths.insert(f.path.clone());
                } else {
                    paths.remove(&f.path);
                }
            }
        }
    }
    let changed: std::collections::BTreeSet<&str> =
        changes.files.iter().map(|f| f.path.as_str()).collect();
    let mut hits = Vec::new();
    // From the change's tree, never the live workspace.
    let files = place.files_reader();
    for p in paths {
        let Some(bytes) = files.read(&p) else {
            continue;
        };
        if bytes.len() as u64 > MAX_SCAN_BYTES && !changed.contains(p.as_str()) {
            continue;
        }
        if !rascal_core::model::content::is_text(&p, &bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if let Some(pat) = first_match(patterns, line) {
                hits.push((p.clone(), i as u32 + 1, pat.to_string(), line.to_string()));
            }
        }
    }
    Ok(hits)
}

/// Run a command guardrail where `place` says. A test guardrail (`tests`)
/// must show that tests ran: exit 0 with no test run is an errored FAIL.
pub async fn run_command(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    config_digest: &str,
    tests: bool,
    cancel: &CancellationToken,
) -> Report {
    let GuardrailKind::Command {
        command,
        timeout,
        env,
        network,
        ..
    } = &g.kind
    else {
        return Report::new(Layer::Guardrails, &g.name)
            .errored("not a command guardrail")
            .finish();
    };
    let mut r = base_report(g, changes, config_digest).input("command", command);
    let spec = CommandSpec::shell(command, place.files().to_path_buf(), timeout.get());
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    // The tests it says ran, and its output (bounded) to find its errors in.
    let counter = tokio::spawn(async move {
        let mut n = 0u64;
        let mut seen = Captured::default();
        while let Some(batch) = rx.recv().await {
            for l in batch {
                n += crate::layers::criteria::tests_ran_in(&l.text);
                seen.push(&l.text);
            }
        }
        (n, seen)
    });
    let result = place.run(spec, env, *network, Some(tx), cancel).await;
    let (ran, seen) = counter.await.unwrap_or_default();
    if tests {
        r = r.input("tests", "true");
    }
    match result {
        Ok(out) => {
            r.duration_ms = out.exit.duration_ms;
            r.exit_code = out.exit.code;
            r.output = if out.exit.success() {
                seen.last(&out.tail, TAIL_LINES)
            } else {
                seen.kept(&out.tail, TAIL_LINES)
            };
            if let Some(problem) = out.exit.problem(timeout.get()) {
                r = r.errored(format!("`{command}` {problem}"));
            } else if tests && out.exit.success() && ran == 0 {
                r = r.errored(format!(
                    "`{command}` is the test run, but 0 tests ran: a test run that runs no test proves nothing"
                ));
            } else if !out.exit.success() {
                r.issues = failure_issues(&g.name, command, out.exit.code, place, &seen);
            }
        }
        Err(e) => r = r.errored(format!("could not run `{command}`: {e}")),
    }
    r.finish()
}

/// The issues of a command guardrail that failed: its errors, each with
/// its place in the change (the first one is the failure's message), or,
/// when none is recognised in its output, its exit code.
pub fn failure_issues(
    name: &str,
    command: &str,
    code: Option<i32>,
    place: &Place,
    output: &Captured,
) -> Vec<Issue> {
    let rule = format!("guardrails/{name}");
    let found = diagnostics::place::issues(&rule, command, place, output);
    if !found.is_empty() {
        return found;
    }
    vec![Issue::new(
        rule,
        Severity::Error,
        format!(
            "`{command}` exited with code {}",
            code.map(|c| c.to_string()).unwrap_or("?".into())
        ),
    )]
}

//! Built-in secret scanner (guardrails layer; docs/architecture.md, "Security invariants", 7).
//!
//! Looks for credentials that an agent added to a change. The rules are
//! data: rascal's own (`crates/scan/rules/secrets.toml`, compiled in: provider tokens
//! by their documented prefixes, private key blocks, JWTs, URLs with
//! passwords, and `password/secret/token = "…"` assignments whose value
//! looks like a secret), a repository's `.rascal/secrets.toml` and its
//! `.gitleaks.toml` (gitleaks' format), both read from the base commit so a
//! change cannot allow itself (see [`rules`]).
//!
//! How a change is scanned — every byte, and never a silent skip:
//!
//! * In a text file, the *added* lines (`FileChange::added_lines`), whole:
//!   nothing is cut before a rule sees it. In a binary file, every byte of
//!   the new content (`FileChange::content`): its runs of printable ASCII
//!   and UTF-16 text are scanned like lines, and a finding names its byte
//!   offset. A file's path and a symlink's target are scanned too. Deleted
//!   files are ignored; files matching an `allow_paths` glob (or a global
//!   allowlist's `paths`) are skipped silently.
//! * Up to `max_file_bytes` of each file is scanned. What lies beyond (or
//!   what the ChangeSet could not read) is named in a `secrets/unscanned`
//!   warning — an error with `on_unscanned: fail`.
//! * Each text gets one case-insensitive Aho-Corasick pass over the keywords
//!   of all rules; only the rules whose keywords occur run their regex.
//! * Obvious disguises are undone and the result scanned again: base64
//!   (standard and url-safe, [`MIN_BASE64`] chars or more) and hex
//!   ([`MIN_HEX`] or more) blobs are decoded, twice over at most; string
//!   literals joined by `+`, `.`, `..`, `&`, `~`, `||`, juxtaposition (on one
//!   line or continued on the next) or the commas of a `concat`/`join` are
//!   joined and unescaped (`\x41`, `\u0041`); consecutive lines that are
//!   each one bare token (a wrapped base64 block, a folded value) are joined.
//!   Such a finding says how it was hidden ("base64-encoded") and is
//!   reported at its original line; a secret already reported is not
//!   reported again.
//! * A line containing the marker `rascal:allow` (or gitleaks'
//!   `gitleaks:allow`, when the repository has a `.gitleaks.toml`) is never
//!   reported as an error: its findings leave an `Info` trace.
//! * A match equal to one of its rule's `published` values (sample keys a
//!   provider published in its documentation or SDK tests, listed by
//!   sha256) is not a leak: it leaves an `Info` trace. Only that exact
//!   value is let through.
//! * A match is reported only if it passes its rule's entropy threshold,
//!   check and value filters (`drop`: placeholders judged on the whole
//!   value, UUIDs, code, paths… — per rule) and no allowlist lets it
//!   through. In lock files (`Cargo.lock`, `package-lock.json`, `go.sum`, …)
//!   the assignment rule is off.
//! * Long lines are scanned whole: the `regex` crate runs in time linear in
//!   the input. At most [`MAX_FINDINGS_PER_FILE`] findings are reported per
//!   file; the rest are summarised in one `Info` issue.
//! * An issue never contains a secret: the message shows only [`redact`]ed
//!   text (the first four characters, then `…`), never the line itself.
//! * What a rule file holds but rascal does not apply (a gitleaks field it
//!   does not support) is a `secrets/config` warning at its line; a change
//!   to `.gitleaks.toml` is a `secrets/config-edited` warning (it was not
//!   used for this check, but would weaken later ones).
//!
//! Not seen: compressed content (a zip, a PNG's `zTXt`), encodings other
//! than base64 and hex (rot13, XOR, percent-encoding), strings computed at
//! run time, and pieces farther apart than adjacent lines.

mod content;
mod decode;
mod findings;
mod join;
pub(crate) mod rules;
pub(crate) mod values;
mod windows;

use globset::GlobSet;

use crate::Error;
use rascal_core::config::secrets::GITLEAKS_FILE;
use rascal_core::model::changeset::{ChangeSet, FileChange, Operation};
use rascal_core::model::verdict::{Issue, Severity};
use rules::RuleSet;

/// Default for [`SecretsOptions::max_file_bytes`]: the hard cap, 1 GiB
/// (files are streamed through the scan, so its size costs time, not
/// memory).
pub const DEFAULT_MAX_FILE_BYTES: u64 = HARD_MAX_FILE_BYTES;

/// At most this many findings are reported for one file.
pub const MAX_FINDINGS_PER_FILE: usize = 50;

/// The inline marker that suppresses findings on its line.
pub const ALLOW_MARKER: &str = "rascal:allow";

/// gitleaks' inline marker, honoured when a `.gitleaks.toml` is in use.
pub const GITLEAKS_MARKER: &str = "gitleaks:allow";

/// Decoded text is decoded again at most this many times over in all
/// (base64 inside base64).
pub const MAX_DECODE_DEPTH: usize = 2;

/// How many following lines a rule may look at (a private key's body
/// after its armor headers and a blank line).
const LOOKAHEAD: usize = 8;

pub use decode::{MIN_BASE64, MIN_HEX};
pub use rascal_core::config::guardrails::{OnUnscanned, SecretsOptions};
pub use rules::{builtin, expand_example, BUILTIN_FILE};
pub use values::shannon_entropy;
pub use windows::FileScan;

/// `secret` with everything after the first four characters replaced by
/// `…`. Secrets of fewer than eight characters show only their first half.
pub fn redact(secret: &str) -> String {
    let n = secret.chars().count();
    let keep = if n >= 8 { 4 } else { n / 2 };
    let mut out: String = secret.chars().take(keep).collect();
    out.push('…');
    out
}

/// Lock files hold hashes, not hand-written config: the generic rule is off.
fn is_lock_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "Cargo.lock"
            | "package-lock.json"
            | "npm-shrinkwrap.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "go.sum"
            | "poetry.lock"
            | "Pipfile.lock"
            | "Gemfile.lock"
            | "composer.lock"
            | "flake.lock"
            | "uv.lock"
            | "bun.lock"
            | "mix.lock"
            | "pubspec.lock"
            | "packages.lock.json"
            | "gradle.lockfile"
    ) || name.ends_with(".lock")
}

/// The compiled scanner: build once with [`SecretScanner::new`], then call
/// [`SecretScanner::scan`] for each change set.
pub struct SecretScanner {
    set: RuleSet,
    allow: GlobSet,
    /// Files whose unscanned part is a warning, not an error
    /// (`unscanned_allowed`).
    unscanned_allowed: GlobSet,
    max_file_bytes: u64,
    on_unscanned: OnUnscanned,
}

/// At most this many secrets are remembered per file to report each once.
const MAX_SEEN: usize = 4096;

/// The hard cap of `max_file_bytes`: a file's first 1 GiB is scanned at
/// most; what lies beyond is unscanned (an error unless allowed by path).
pub const HARD_MAX_FILE_BYTES: u64 = rascal_core::config::guardrails::MAX_SCAN_FILE_BYTES;

impl std::fmt::Debug for SecretScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretScanner")
            .field("rules", &self.set.rules.len())
            .field("max_file_bytes", &self.max_file_bytes)
            .field("on_unscanned", &self.on_unscanned)
            .finish()
    }
}

impl SecretScanner {
    /// Compile the rules and the `allow_paths` globs. The error names the
    /// glob that does not parse.
    pub fn new(opts: &SecretsOptions) -> Result<Self, Error> {
        let set = RuleSet::new(&opts.rule_files)?;
        let allow = rascal_core::config::guardrails::secrets_allow_set(&opts.allow_paths)
            .map_err(|e| Error::Rules(e.to_string()))?;
        let unscanned_allowed = rascal_core::config::guardrails::secrets_allow_set(
            &opts.unscanned_allowed,
        )
        .map_err(|e| Error::Rules(e.to_string().replace("allow_paths", "unscanned_allowed")))?;
        Ok(SecretScanner {
            set,
            allow,
            unscanned_allowed,
            max_file_bytes: opts
                .max_file_bytes
                .unwrap_or(DEFAULT_MAX_FILE_BYTES)
                .min(HARD_MAX_FILE_BYTES),
            on_unscanned: opts.on_unscanned,
        })
    }

    /// Where the rules in force come from, in one line
    /// (`171 secret rules: 169 built-in, 2 from .gitleaks.toml`).
    pub fn summary(&self) -> &str {
        &self.set.summary
    }

    /// The rules in force.
    pub fn rules(&self) -> &[rules::Rule] {
        &self.set.rules
    }

    /// Does `text` carry an inline allow marker?
    fn marked(&self, text: &str) -> bool {
        text.contains(ALLOW_MARKER) || (self.set.gitleaks_marker && text.contains(GITLEAKS_MARKER))
    }

    /// Scan every changed file; returns one issue per finding (plus issues
    /// for what could not be scanned). Never panics on odd input and never
    /// puts a secret in an issue.
    pub fn scan(&self, changes: &ChangeSet) -> Vec<Issue> {
        let mut issues = self.scan_change(changes);
        for file in &changes.files {
            self.scan_file(file, &mut issues);
        }
        issues
    }

    /// What is said of the change as a whole, before any file's findings:
    /// notes on the rule files, an edit of `.gitleaks.toml`. [`Self::scan`]
    /// is this, then [`Self::scan_file`] for each file (which is how a
    /// streamed ChangeSet is scanned, file by file, as it is read).
    pub fn scan_change(&self, changes: &ChangeSet) -> Vec<Issue> {
        let mut issues = Vec::new();
        for (file, note) in &self.set.notes {
            issues.push(
                Issue::new(
                    "secrets/config",
                    Severity::Warning,
                    format!("{file}:{}:{}: {}", note.line, note.column, note.message),
                )
                .at(file.clone(), Some(note.line as u32)),
            );
        }
        for file in &changes.files {
            if file.path == GITLEAKS_FILE && file.op != Operation::Delete {
                issues.push(
                    Issue::new(
                        "secrets/config-edited",
                        Severity::Warning,
                        format!(
                            "the change edits {GITLEAKS_FILE}, the secret scan's own rules; this check read the base commit's, so the edit does not apply to it — review it: it changes what later checks allow"
                        ),
                    )
                    .at(file.path.clone(), None),
                );
            }
        }
        issues
    }

    /// Scan one changed file, adding its findings to `issues`.
    pub fn scan_file(&self, file: &FileChange, issues: &mut Vec<Issue>) {
        let mut state = None;
        self.scan_part(file, &mut state, issues);
        if !file.last_part() {
            // Handed one window of a file and no more: say so at once.
            self.end_file(&mut state, issues);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_rule_has_keywords_and_names_its_secret() {
        let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
        assert_eq!(s.rules().len(), builtin().rules.len());
        for r in s.rules() {
            assert!(!r.keywords.is_empty(), "{}", r.id);
            let rx = r.regex().map(|x| x.as_str()).unwrap_or_default();
            assert!(rx.contains("?P<secret>"), "{}", r.id);
        }
    }

    #[test]
    fn entropy_and_redaction() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("ab") - 1.0).abs() < 1e-9);
        assert_eq!(redact("abcdefghij"), "abcd…");
        assert_eq!(redact("abc"), "a…");
        assert_eq!(redact(""), "…");
        assert_eq!(redact("ééééééééé"), "éééé…");
    }

    #[test]
    fn bad_glob_is_named() {
        let e = SecretScanner::new(&SecretsOptions {
            allow_paths: vec!["a/[".into()],
            max_file_bytes: None,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("a/["), "{e}");
    }
}

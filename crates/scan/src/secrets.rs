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

mod decode;
mod join;
pub(crate) mod rules;
pub(crate) mod values;

use std::collections::HashSet;

use globset::GlobSet;

use crate::config::secrets::{Check, GITLEAKS_FILE};
use crate::model::changeset::{ChangeSet, EntryKind, FileChange, Operation};
use crate::model::verdict::{Issue, Severity};
use rules::{Candidate, RuleSet};

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

pub use crate::config::guardrails::{OnUnscanned, SecretsOptions};
pub use decode::{MIN_BASE64, MIN_HEX};
pub use rules::{builtin, expand_example, BUILTIN_FILE};
pub use values::shannon_entropy;

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

/// What the scan keeps of one file while its windows are read
/// (`FileChange::part`): the findings' bookkeeping, the last lines of the
/// window before (rules look ahead, and pieces of a secret may sit on
/// adjacent lines across the cut) and the bytes scanned so far. Bounded:
/// at most [`CARRY_LINES`] lines and [`MAX_SEEN`] remembered secrets.
#[derive(Default)]
pub struct FileScan {
    path: String,
    /// Nothing to scan in this file (deleted, a gitlink, an allowed path).
    skip: bool,
    reported: usize,
    suppressed: usize,
    seen: HashSet<String>,
    published: HashSet<String>,
    /// The last lines of the window before, and how many of them had
    /// their own findings scanned already.
    carry: Vec<(u32, String)>,
    carry_done: usize,
    /// Bytes of the file scanned, and seen in all.
    scanned: u64,
    total: u64,
    /// The file's content never reached the scan (binary content the
    /// ChangeSet could not read).
    unread: bool,
}

/// How many lines of a window the scan of the next one keeps: twice the
/// look-ahead, so that every line is scanned with the lines after it.
const CARRY_LINES: usize = 2 * LOOKAHEAD;

/// At most this many secrets are remembered per file to report each once.
const MAX_SEEN: usize = 4096;

/// The hard cap of `max_file_bytes`: a file's first 1 GiB is scanned at
/// most; what lies beyond is unscanned (an error unless allowed by path).
pub const HARD_MAX_FILE_BYTES: u64 = crate::config::guardrails::MAX_SCAN_FILE_BYTES;

impl std::fmt::Debug for SecretScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretScanner")
            .field("rules", &self.set.rules.len())
            .field("max_file_bytes", &self.max_file_bytes)
            .field("on_unscanned", &self.on_unscanned)
            .finish()
    }
}

struct Finding {
    rule: usize,
    start: usize,
    end: usize,
    secret: String,
    /// One of the rule's published sample values: a trace, not a leak.
    published: bool,
}

/// What a text being scanned belongs to: its file, and whether that is a
/// lock file (where the assignment rule is off).
#[derive(Debug, Clone, Copy)]
struct Ctx<'a> {
    path: &'a str,
    lock: bool,
}

/// Where in a file a text that is scanned comes from.
#[derive(Debug, Clone, Copy)]
struct At {
    /// The (new) line number, in a text file.
    line: Option<u32>,
    place: Place,
    /// The text, or the line it was derived from, carries an allow marker.
    allowed: bool,
}

#[derive(Debug, Clone, Copy)]
enum Place {
    /// An added line.
    Added,
    /// Binary content: the byte offset of the text's first character and
    /// the bytes per character (0: every finding is at that offset).
    Binary { base: u64, stride: u64 },
    /// The file's path.
    Name,
    /// Where a symlink points.
    Target,
}

impl At {
    fn line(line: u32, allowed: bool) -> At {
        At {
            line: Some(line),
            place: Place::Added,
            allowed,
        }
    }

    /// The same place, for a text derived from the part of this text that
    /// starts at `start` (a decoded token).
    fn within(self, start: usize) -> At {
        let place = match self.place {
            Place::Binary { base, stride } => Place::Binary {
                base: base + start as u64 * stride,
                stride: 0,
            },
            other => other,
        };
        At { place, ..self }
    }

    /// How a finding at byte `start` of the text is placed, for its message.
    fn describe(&self, start: usize) -> String {
        match self.place {
            Place::Added => " added".to_string(),
            Place::Binary { base, stride } => {
                format!(
                    " in binary content at byte {}",
                    base + start as u64 * stride
                )
            }
            Place::Name => " in the file's name".to_string(),
            Place::Target => " as a symlink's target".to_string(),
        }
    }
}

/// The findings of one file, turned into issues: capped, deduplicated
/// across the ways a secret can be reached.
struct FileIssues<'a> {
    path: &'a str,
    issues: &'a mut Vec<Issue>,
    reported: usize,
    suppressed: usize,
    /// Secrets already reported (or allowed) in this file.
    seen: HashSet<String>,
    /// Published sample values already traced in this file.
    published: HashSet<String>,
}

impl SecretScanner {
    /// Compile the rules and the `allow_paths` globs. The error names the
    /// glob that does not parse.
    pub fn new(opts: &SecretsOptions) -> Result<Self, String> {
        let set = RuleSet::new(&opts.rule_files)?;
        let allow = crate::config::guardrails::secrets_allow_set(&opts.allow_paths)?;
        let unscanned_allowed =
            crate::config::guardrails::secrets_allow_set(&opts.unscanned_allowed)
                .map_err(|e| e.replace("allow_paths", "unscanned_allowed"))?;
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

    /// Scan one window of a changed file (`file.part`; a file not read in
    /// windows is its own only window), keeping in `state` what the next
    /// window of the same file needs; the file's closing issues come with
    /// its last window.
    pub fn scan_part(
        &self,
        file: &FileChange,
        state: &mut Option<FileScan>,
        issues: &mut Vec<Issue>,
    ) {
        if file.first_part() || state.as_ref().is_none_or(|s| s.path != file.path) {
            if state.is_some() {
                self.end_file(state, issues);
            }
            *state = Some(self.start_file(file, issues));
        }
        let Some(st) = state.as_mut() else {
            return;
        };
        if !st.skip {
            let mut out = FileIssues {
                path: &file.path,
                issues: &mut *issues,
                reported: st.reported,
                suppressed: st.suppressed,
                seen: std::mem::take(&mut st.seen),
                published: std::mem::take(&mut st.published),
            };
            let ctx = Ctx {
                path: &file.path,
                lock: is_lock_file(&file.path),
            };
            if file.new_kind == Some(EntryKind::Symlink) {
                // Scanned whole with its name, when the file was started.
            } else if file.binary {
                self.scan_binary(file, st, ctx, &mut out);
            } else {
                self.scan_text(file, st, ctx, &mut out);
            }
            st.reported = out.reported;
            st.suppressed = out.suppressed;
            st.seen = out.seen;
            st.published = out.published;
        }
        if file.last_part() {
            self.end_file(state, issues);
        }
    }

    /// The first window of a file: what is said of the file as a whole
    /// (its path, a link's target), and whether it is scanned at all.
    fn start_file(&self, file: &FileChange, issues: &mut Vec<Issue>) -> FileScan {
        let mut st = FileScan {
            path: file.path.clone(),
            ..Default::default()
        };
        if file.op == Operation::Delete
            || matches!(file.new_kind, None | Some(EntryKind::Submodule))
            || self.allow.is_match(&file.path)
            || self.set.path_allowed(&file.path)
        {
            st.skip = true;
            return st;
        }
        if file.is_streamed() && file.part.is_none() {
            // Its content was read and let go before it reached this scan.
            issues.push(
                Issue::new(
                    "secrets/unscanned",
                    Severity::Error,
                    format!(
                        "{} not scanned: its content was streamed to the checks without this scan (a bug in rascal; run it again)",
                        file.path
                    ),
                )
                .at(file.path.clone(), None),
            );
            st.skip = true;
            return st;
        }
        let mut out = FileIssues {
            path: &file.path,
            issues,
            reported: 0,
            suppressed: 0,
            seen: HashSet::new(),
            published: HashSet::new(),
        };
        let ctx = Ctx {
            path: &file.path,
            lock: is_lock_file(&file.path),
        };
        self.path_rules(ctx, &mut out);
        // A name and a link target are bytes of the change too.
        self.scan_short(&file.path, Place::Name, ctx, &mut out);
        if file.new_kind == Some(EntryKind::Symlink) {
            if let Some(target) = &file.symlink_target {
                self.scan_short(target, Place::Target, ctx, &mut out);
            }
        }
        st.reported = out.reported;
        st.suppressed = out.suppressed;
        st.seen = out.seen;
        st.published = out.published;
        st
    }

    /// The file's last window was scanned: what is left in `state` is
    /// scanned, and what could not be is said.
    pub fn end_file(&self, state: &mut Option<FileScan>, issues: &mut Vec<Issue>) {
        let Some(mut st) = state.take() else {
            return;
        };
        if st.skip {
            return;
        }
        let path = st.path.clone();
        if !st.carry.is_empty() && st.carry_done < st.carry.len() {
            // Lines held back for their look-ahead, when the file ended
            // without a last window saying so.
            let mut out = FileIssues {
                path: &path,
                issues: &mut *issues,
                reported: st.reported,
                suppressed: st.suppressed,
                seen: std::mem::take(&mut st.seen),
                published: std::mem::take(&mut st.published),
            };
            let ctx = Ctx {
                path: &path,
                lock: is_lock_file(&path),
            };
            self.scan_lines(&[], true, &mut st, ctx, &mut out);
            st.reported = out.reported;
            st.suppressed = out.suppressed;
        }
        if st.unread || st.total > st.scanned {
            self.unscanned(&path, st.scanned, st.total, st.unread, issues);
        }
        if st.suppressed > 0 {
            let n = st.suppressed;
            issues.push(
                Issue::new(
                    "secrets/too-many-findings",
                    Severity::Info,
                    format!("{n} more possible secrets in this file not listed"),
                )
                .at(path, None),
            );
        }
    }

    /// Rules with only a `path`: the file is a secret by its name.
    fn path_rules(&self, ctx: Ctx, out: &mut FileIssues) {
        for rule in self.set.rules.iter().filter(|r| r.path_only()) {
            let c = Candidate {
                secret: ctx.path,
                matched: ctx.path,
                line: ctx.path,
                path: ctx.path,
            };
            if !rule.applies_to(ctx.path) || self.set.allowed(rule, &c) {
                continue;
            }
            out.issues.push(
                Issue::new(
                    format!("secrets/{}", rule.id),
                    rule.severity,
                    format!(
                        "possible {}: the file's path matches the rule ({}); remove the file, rotate what it holds, and keep it out of the repository",
                        rule.description, rule.origin
                    ),
                )
                .confidence(rule.confidence)
                .at(ctx.path, None),
            );
        }
    }

    /// A path or a symlink target, as written and decoded.
    fn scan_short(&self, text: &str, place: Place, ctx: Ctx, out: &mut FileIssues) {
        let at = At {
            line: None,
            place,
            allowed: self.marked(text),
        };
        let ctx = Ctx { lock: false, ..ctx };
        let mut findings = Vec::new();
        self.scan_line(text, &[], ctx, &mut findings);
        out.add(self, &mut findings, at, "", false);
        self.decode(text, ctx, 0, "", at, out);
    }

    /// The added lines of one window of a text file, up to
    /// `max_file_bytes` of the file.
    fn scan_text(&self, file: &FileChange, st: &mut FileScan, ctx: Ctx, out: &mut FileIssues) {
        let mut fresh: Vec<(u32, &str)> = Vec::with_capacity(file.added_lines.len());
        for added in &file.added_lines {
            st.total += added.text.len() as u64 + 1;
            if st.scanned >= self.max_file_bytes {
                continue;
            }
            let budget = self.max_file_bytes - st.scanned;
            let mut text = added.text.as_str();
            if text.len() as u64 >= budget {
                let mut cut = budget as usize;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text = &text[..cut];
                st.scanned = self.max_file_bytes;
            } else {
                st.scanned += text.len() as u64 + 1;
            }
            fresh.push((added.line, text.strip_suffix('\r').unwrap_or(text)));
        }
        self.scan_lines(&fresh, file.last_part(), st, ctx, out);
    }

    /// Scan `fresh` lines after the lines carried from the window before:
    /// each line's own findings once (the last [`LOOKAHEAD`] held back for
    /// the next window, unless `last`), decoded blobs, and what is split
    /// across adjacent lines (found again across windows, reported once).
    fn scan_lines(
        &self,
        fresh: &[(u32, &str)],
        last: bool,
        st: &mut FileScan,
        ctx: Ctx,
        out: &mut FileIssues,
    ) {
        let carry = std::mem::take(&mut st.carry);
        let lines: Vec<(u32, &str)> = carry
            .iter()
            .map(|(n, t)| (*n, t.as_str()))
            .chain(fresh.iter().copied())
            .collect();
        let done = st.carry_done.min(lines.len());
        let end = if last {
            lines.len()
        } else {
            lines.len().saturating_sub(LOOKAHEAD).max(done)
        };
        let texts: Vec<&str> = lines.iter().map(|l| l.1).collect();
        // Where each line's run of adjacent lines ends.
        let mut run_end = vec![lines.len(); lines.len()];
        for i in (0..lines.len().saturating_sub(1)).rev() {
            run_end[i] = if lines[i + 1].0 == lines[i].0.wrapping_add(1) {
                run_end[i + 1]
            } else {
                i + 1
            };
        }
        let next = |i: usize| &texts[(i + 1).min(run_end[i])..run_end[i].min(i + 1 + LOOKAHEAD)];
        let ats: Vec<At> = lines
            .iter()
            .map(|&(l, text)| At::line(l, self.marked(text)))
            .collect();
        let mut findings = Vec::new();
        for i in done..end {
            self.scan_line(texts[i], next(i), ctx, &mut findings);
            if !findings.is_empty() {
                out.add(self, &mut findings, ats[i], "", false);
            }
        }
        for i in done..end {
            self.decode(texts[i], ctx, 0, "", ats[i], out);
        }
        // Runs of adjacent lines, for what is split across them.
        let mut start = 0;
        while start < lines.len() {
            let mut stop = start + 1;
            while stop < lines.len() && lines[stop].0 == lines[stop - 1].0.wrapping_add(1) {
                stop += 1;
            }
            // A run wholly among the lines scanned in the window before
            // was joined then.
            if stop > done {
                let run: Vec<&str> = lines[start..stop].iter().map(|l| l.1).collect();
                for joined in join::literal_chains(&run)
                    .into_iter()
                    .chain(join::token_blocks(&run))
                {
                    let at = ats[start + joined.line];
                    let how = joined.how;
                    self.derived(&joined.text, &[], joined.body.clone(), ctx, how, at, out);
                    self.decode(&joined.text[joined.body], ctx, 0, how, at, out);
                }
            }
            start = stop;
        }
        let keep = lines.len().saturating_sub(CARRY_LINES);
        st.carry = lines[keep..]
            .iter()
            .map(|&(n, t)| (n, t.to_string()))
            .collect();
        st.carry_done = end.saturating_sub(keep).min(st.carry.len());
    }

    /// One window of a binary file's new content (the whole of it when
    /// not read in windows), up to `max_file_bytes` of the file.
    fn scan_binary(&self, file: &FileChange, st: &mut FileScan, ctx: Ctx, out: &mut FileIssues) {
        let Some(bytes) = file.content.as_deref() else {
            st.unread = true;
            st.total = st.total.max(file.size);
            return;
        };
        let offset = file.part.map_or(0, |p| p.offset);
        let end = offset + bytes.len() as u64;
        st.total = st.total.max(end);
        if file.part.is_none() {
            st.total = st.total.max(file.size);
        }
        let n = (bytes.len() as u64).min(self.max_file_bytes.saturating_sub(offset)) as usize;
        st.scanned = st.scanned.max(offset + n as u64);
        let runs = decode::text_runs(&bytes[..n]);
        let mut findings = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            // A private key's body follows its header after a line break.
            let next: Vec<&str> = runs
                .get(i + 1)
                .filter(|r| r.stride == run.stride && r.offset <= run.end() + 2 * run.stride)
                .map(|r| r.text.as_str())
                .into_iter()
                .collect();
            let at = At {
                line: None,
                place: Place::Binary {
                    base: offset + run.offset as u64,
                    stride: run.stride as u64,
                },
                allowed: self.marked(&run.text),
            };
            let ctx = Ctx { lock: false, ..ctx };
            self.scan_line(&run.text, &next, ctx, &mut findings);
            out.add(self, &mut findings, at, "", true);
            self.decode(&run.text, ctx, 0, "", at, out);
        }
        if file.last_part() {
            out.issues.push(
                Issue::new(
                    "secrets/binary",
                    Severity::Info,
                    "binary file: its text (ASCII and UTF-16 runs, base64 and hex decoded) was \
                     scanned for secrets; compressed or otherwise encoded content cannot be",
                )
                .at(file.path.clone(), None),
            );
        }
    }

    /// Name the part of the file at `path` that was not scanned: an error
    /// (the check fails), or a warning for a path `unscanned_allowed`
    /// names (or with `on_unscanned: warn`).
    fn unscanned(
        &self,
        path: &str,
        scanned: u64,
        total: u64,
        unread: bool,
        issues: &mut Vec<Issue>,
    ) {
        let allowed = self.unscanned_allowed.is_match(path);
        let severity = match (allowed, self.on_unscanned) {
            (false, OnUnscanned::Fail) => Severity::Error,
            _ => Severity::Warning,
        };
        let what = if unread {
            format!("only {scanned} of its {total} bytes could be read to scan for secrets")
        } else if self.max_file_bytes >= HARD_MAX_FILE_BYTES {
            format!(
                "only the first {scanned} of its {total} bytes were scanned for secrets \
                 (the scan's cap is {HARD_MAX_FILE_BYTES} bytes a file)"
            )
        } else {
            format!(
                "only the first {scanned} of its {total} bytes were scanned for secrets \
                 (max_file_bytes: {}): raise max_file_bytes to scan it whole",
                self.max_file_bytes
            )
        };
        let hint = match (allowed, self.on_unscanned) {
            (true, _) => "; let through as a warning by `unscanned_allowed`".to_string(),
            (false, OnUnscanned::Warn) => {
                "; let through as a warning by `on_unscanned: warn`".to_string()
            }
            (false, OnUnscanned::Fail) => format!(
                "; a file the scan cannot read whole fails the check: keep it out of the \
                 change, or list it in the secrets guardrail's `unscanned_allowed` \
                 (e.g. `unscanned_allowed: [\"{path}\"]`)"
            ),
        };
        issues.push(
            Issue::new(
                "secrets/unscanned",
                severity,
                format!("{path} not fully scanned: {what}{hint}"),
            )
            .at(path.to_string(), None),
        );
    }

    /// Scan `text` derived from a line or run (decoded, joined): report the
    /// findings that overlap `region` (the derived part) and were not
    /// reported already.
    #[allow(clippy::too_many_arguments)]
    fn derived(
        &self,
        text: &str,
        next: &[&str],
        region: std::ops::Range<usize>,
        ctx: Ctx,
        how: &str,
        at: At,
        out: &mut FileIssues,
    ) {
        let mut findings = Vec::new();
        self.scan_line(text, next, ctx, &mut findings);
        findings.retain(|f| f.start < region.end && region.start < f.end);
        out.add(self, &mut findings, at, how, true);
    }

    /// Decode the base64 and hex blobs in `text` and scan what they hold.
    /// `how` says how `text` itself was reached ("" for a line as added).
    fn decode(&self, text: &str, ctx: Ctx, depth: usize, how: &str, at: At, out: &mut FileIssues) {
        if depth >= MAX_DECODE_DEPTH {
            return;
        }
        for token in decode::tokens(text) {
            let how = if how.is_empty() {
                format!(", {}-encoded", token.encoding)
            } else {
                format!(", {}-encoded{how}", token.encoding)
            };
            let at = at.within(token.start);
            for bytes in decode::decodings(&text[token.start..token.end], token.encoding) {
                match decode::as_text(&bytes) {
                    Some(s) if !s.contains('\n') => {
                        // On its own, and in place of the blob, so that
                        // `password: <base64>` is still an assignment.
                        self.derived(s, &[], 0..s.len(), ctx, &how, at, out);
                        let head = decode::before(text, token.start);
                        let line = format!("{head}{s}{}", decode::after(text, token.end));
                        let region = head.len()..head.len() + s.len();
                        self.derived(&line, &[], region, ctx, &how, at, out);
                        self.decode(s, ctx, depth + 1, &how, at, out);
                    }
                    Some(s) => {
                        let lines: Vec<&str> = s.lines().collect();
                        for (i, l) in lines.iter().enumerate() {
                            let next = &lines[i + 1..(i + 1 + LOOKAHEAD).min(lines.len())];
                            self.derived(l, next, 0..l.len(), ctx, &how, at, out);
                            self.decode(l, ctx, depth + 1, &how, at, out);
                        }
                    }
                    None => {
                        let runs = decode::text_runs(&bytes);
                        for (i, run) in runs.iter().enumerate() {
                            let next: Vec<&str> = runs
                                .get(i + 1)
                                .map(|r| r.text.as_str())
                                .into_iter()
                                .collect();
                            let t = run.text.as_str();
                            self.derived(t, &next, 0..t.len(), ctx, &how, at, out);
                            self.decode(t, ctx, depth + 1, &how, at, out);
                        }
                    }
                }
            }
        }
    }

    /// Find secrets in one text (a line already stripped of `\r`);
    /// `next`: the lines that follow it, for rules that look ahead.
    fn scan_line(&self, text: &str, next: &[&str], ctx: Ctx, out: &mut Vec<Finding>) {
        let mut candidates = Vec::new();
        self.set.candidates(text, &mut candidates);
        for &i in &candidates {
            let rule = &self.set.rules[i as usize];
            let Some(regex) = rule.regex() else {
                continue;
            };
            if (ctx.lock && rule.check == Some(Check::Assignment)) || !rule.applies_to(ctx.path) {
                continue;
            }
            for caps in regex.captures_iter(text) {
                let Some(parts) = rule.parts(&caps) else {
                    continue;
                };
                let secret = &text[parts.secret.clone()];
                if secret.is_empty() || !self.reportable(rule, text, &parts, next, ctx) {
                    continue;
                }
                let (start, end) = (parts.secret.start, parts.secret.end);
                if out.iter().any(|f| f.start < end && start < f.end) {
                    continue;
                }
                out.push(Finding {
                    rule: i as usize,
                    start,
                    end,
                    secret: secret.to_string(),
                    published: rule.published(secret),
                });
            }
        }
    }

    /// Does a match of `rule` pass its checks, value filters and entropy
    /// threshold, and no allowlist?
    fn reportable(
        &self,
        rule: &rules::Rule,
        text: &str,
        parts: &rules::Parts,
        next: &[&str],
        ctx: Ctx,
    ) -> bool {
        let secret = &text[parts.secret.clone()];
        let body = &text[parts.body.clone()];
        let quoted = parts.secret.start > 0
            && matches!(text.as_bytes()[parts.secret.start - 1], b'"' | b'\'' | b'`');
        let checked = match rule.check {
            None => true,
            Some(Check::PrivateKey) => values::key_body_follows(&text[parts.matched.end..], next),
            Some(Check::UrlPassword) => {
                let user = parts.user.clone().map_or("", |u| &text[u]);
                let host = parts.host.clone().map_or("", |h| &text[h]);
                values::url_password_ok(user, secret, host)
            }
            Some(Check::Assignment) => {
                let key = parts.key.clone().map_or("", |k| &text[k]);
                values::name_says_secret(key)
                    && !body.contains(['(', ')', '[', ']', '{', '}', '<', '>', '\\'])
                    && (quoted
                        || !values::in_code_position(
                            secret,
                            &text[..parts.secret.start],
                            &text[parts.secret.end..],
                            ctx.path,
                        ))
            }
            Some(Check::Jwt) => values::jwt_ok(secret),
        };
        checked
            && values::entropy_ok(body, rule.entropy)
            && !values::dropped(&rule.drop, body, quoted)
            && !self.set.allowed(
                rule,
                &Candidate {
                    secret,
                    matched: &text[parts.matched.clone()],
                    line: text,
                    path: ctx.path,
                },
            )
    }
}

impl FileIssues<'_> {
    /// Turn `findings` (drained) into issues. `derived`: reached by
    /// decoding, joining or reading binary bytes, so a secret already
    /// reported in this file is not reported again.
    fn add(
        &mut self,
        scanner: &SecretScanner,
        findings: &mut Vec<Finding>,
        at: At,
        how: &str,
        derived: bool,
    ) {
        for f in findings.drain(..) {
            let rule = &scanner.set.rules[f.rule];
            let place = at.describe(f.start);
            if f.published {
                // Known to all already, so not a leak — but said, never
                // silently dropped. Kept out of `seen`: a longer secret
                // that holds it is still reported.
                if self.published.insert(f.secret.clone()) {
                    self.issues.push(
                        Issue::new(
                            "secrets/published-sample",
                            Severity::Info,
                            format!(
                                "{}{place}{how} ({}) is a sample value its provider published (listed in the rule's `published`, {}); not reported as a leak",
                                rule.description,
                                redact(&f.secret),
                                rule.origin
                            ),
                        )
                        .at(self.path, at.line),
                    );
                }
                continue;
            }
            // Reached again by decoding or joining — the same secret, or
            // one that holds it or is held by it (a token joined with the
            // next line): reported once.
            let again = derived
                && self
                    .seen
                    .iter()
                    .any(|s| s.contains(f.secret.as_str()) || f.secret.contains(s.as_str()));
            if self.seen.len() < MAX_SEEN {
                self.seen.insert(f.secret.clone());
            }
            if again {
                continue;
            }
            if at.allowed {
                // Allowed, but never silently: an agent could mark its own
                // leak. The trace is info, so it does not fail.
                self.issues.push(
                    Issue::new(
                        "secrets/allowed-by-marker",
                        Severity::Info,
                        format!(
                            "possible {}{place}{how} ({}) allowed by an inline `{ALLOW_MARKER}` marker; confirm it is not a real secret",
                            rule.description,
                            redact(&f.secret)
                        ),
                    )
                    .at(self.path, at.line),
                );
                continue;
            }
            if self.reported >= MAX_FINDINGS_PER_FILE {
                self.suppressed += 1;
                continue;
            }
            self.reported += 1;
            self.issues.push(
                Issue::new(
                    format!("secrets/{}", rule.id),
                    rule.severity,
                    format!(
                        "possible {}{place}{how} ({}); remove it, rotate it, and load it from the environment",
                        rule.description,
                        redact(&f.secret)
                    ),
                )
                .confidence(rule.confidence)
                .at(self.path, at.line),
            );
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
        assert!(e.contains("a/["), "{e}");
    }
}

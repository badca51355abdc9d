//! A file read in windows (`FileChange::part`): what the scan keeps of it
//! from one window to the next, how each window is scanned, and what is
//! said when the file ends — its unscanned part above all.

use std::collections::HashSet;

use super::findings::{Ctx, FileIssues, Place};
use super::{is_lock_file, OnUnscanned, SecretScanner, HARD_MAX_FILE_BYTES, LOOKAHEAD};
use rascal_core::model::changeset::{EntryKind, FileChange, Operation};
use rascal_core::model::verdict::{Issue, Severity};

/// What the scan keeps of one file while its windows are read
/// (`FileChange::part`): the findings' bookkeeping, the last lines of the
/// window before (rules look ahead, and pieces of a secret may sit on
/// adjacent lines across the cut) and the bytes scanned so far. Bounded:
/// at most [`CARRY_LINES`] lines and [`MAX_SEEN`](super::MAX_SEEN) remembered secrets.
#[derive(Default)]
pub struct FileScan {
    pub(super) path: String,
    /// Nothing to scan in this file (deleted, a gitlink, an allowed path).
    pub(super) skip: bool,
    pub(super) reported: usize,
    pub(super) suppressed: usize,
    pub(super) seen: HashSet<String>,
    pub(super) published: HashSet<String>,
    /// The last lines of the window before, and how many of them had
    /// their own findings scanned already.
    pub(super) carry: Vec<(u32, String)>,
    pub(super) carry_done: usize,
    /// Bytes of the file scanned, and seen in all.
    pub(super) scanned: u64,
    pub(super) total: u64,
    /// The file's content never reached the scan (binary content the
    /// ChangeSet could not read).
    pub(super) unread: bool,
}

/// How many lines of a window the scan of the next one keeps: twice the
/// look-ahead, so that every line is scanned with the lines after it.
pub(super) const CARRY_LINES: usize = 2 * LOOKAHEAD;

impl SecretScanner {
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
    pub(super) fn start_file(&self, file: &FileChange, issues: &mut Vec<Issue>) -> FileScan {
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

    /// Name the part of the file at `path` that was not scanned: an error
    /// (the check fails), or a warning for a path `unscanned_allowed`
    /// names (or with `on_unscanned: warn`).
    pub(super) fn unscanned(
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
}

//! A finding and where it is (a line, binary bytes, the file's name, a
//! link's target), and how the findings of a file become issues: capped,
//! each secret once, published samples and marked lines as traces.

use std::collections::HashSet;

use super::{redact, SecretScanner, ALLOW_MARKER, MAX_FINDINGS_PER_FILE, MAX_SEEN};
use rascal_core::model::verdict::{Issue, Severity};

pub(super) struct Finding {
    pub(super) rule: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) secret: String,
    /// One of the rule's published sample values: a trace, not a leak.
    pub(super) published: bool,
}

/// What a text being scanned belongs to: its file, and whether that is a
/// lock file (where the assignment rule is off).
#[derive(Debug, Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) path: &'a str,
    pub(super) lock: bool,
}

/// Where in a file a text that is scanned comes from.
#[derive(Debug, Clone, Copy)]
pub(super) struct At {
    /// The (new) line number, in a text file.
    pub(super) line: Option<u32>,
    pub(super) place: Place,
    /// The text, or the line it was derived from, carries an allow marker.
    pub(super) allowed: bool,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Place {
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
    pub(super) fn line(line: u32, allowed: bool) -> At {
        At {
            line: Some(line),
            place: Place::Added,
            allowed,
        }
    }

    /// The same place, for a text derived from the part of this text that
    /// starts at `start` (a decoded token).
    pub(super) fn within(self, start: usize) -> At {
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
    pub(super) fn describe(&self, start: usize) -> String {
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
pub(super) struct FileIssues<'a> {
    pub(super) path: &'a str,
    pub(super) issues: &'a mut Vec<Issue>,
    pub(super) reported: usize,
    pub(super) suppressed: usize,
    /// Secrets already reported (or allowed) in this file.
    pub(super) seen: HashSet<String>,
    /// Published sample values already traced in this file.
    pub(super) published: HashSet<String>,
}

impl FileIssues<'_> {
    /// Turn `findings` (drained) into issues. `derived`: reached by
    /// decoding, joining or reading binary bytes, so a secret already
    /// reported in this file is not reported again.
    pub(super) fn add(
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

//! Finding secrets in a file's content: the rules on its path, its added
//! lines (with the lines after them, joined across adjacent lines), the
//! text runs of binary content, and the base64 and hex blobs decoded.

use super::findings::{At, Ctx, FileIssues, Finding, Place};
use super::windows::{FileScan, CARRY_LINES};
use super::{decode, join, rules, values, SecretScanner, LOOKAHEAD, MAX_DECODE_DEPTH};
use rascal_core::config::secrets::Check;
use rascal_core::model::changeset::FileChange;
use rascal_core::model::verdict::{Issue, Severity};
use rules::Candidate;

impl SecretScanner {
    /// Rules with only a `path`: the file is a secret by its name.
    pub(super) fn path_rules(&self, ctx: Ctx, out: &mut FileIssues) {
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
    pub(super) fn scan_short(&self, text: &str, place: Place, ctx: Ctx, out: &mut FileIssues) {
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
    pub(super) fn scan_text(
        &self,
        file: &FileChange,
        st: &mut FileScan,
        ctx: Ctx,
        out: &mut FileIssues,
    ) {
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
    pub(super) fn scan_lines(
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
    pub(super) fn scan_binary(
        &self,
        file: &FileChange,
        st: &mut FileScan,
        ctx: Ctx,
        out: &mut FileIssues,
    ) {
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

    /// Scan `text` derived from a line or run (decoded, joined): report the
    /// findings that overlap `region` (the derived part) and were not
    /// reported already.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn derived(
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
    pub(super) fn decode(
        &self,
        text: &str,
        ctx: Ctx,
        depth: usize,
        how: &str,
        at: At,
        out: &mut FileIssues,
    ) {
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
    pub(super) fn scan_line(&self, text: &str, next: &[&str], ctx: Ctx, out: &mut Vec<Finding>) {
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
    pub(super) fn reportable(
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

//! Errors with their place: compiler and test-runner output (rustc/cargo,
//! go, tsc, eslint, pytest and Python tracebacks) read into diagnostics
//! with `path:line:col`, those paths made relative to the repository (or
//! dropped when they lie outside it), and the output a report keeps cut to
//! the first error's block plus the tail. Pure, text in and values out,
//! but for `place`, which looks the files up in a candidate's change.

mod eslint;
mod go;
pub(crate) mod place;
mod python;
mod rust;
mod typescript;

use rascal_core::model::verdict::{Issue, Report, Severity, Status};
use std::ops::Range;

/// At most this many diagnostics of one command become issues.
pub const MAX_ISSUES: usize = 20;
/// At most this many lines of the first error's block are kept before the
/// tail of a report's output.
pub const BLOCK_LINES: usize = 12;
/// At most this much of a command's output is kept for finding its errors;
/// past it only the lines are counted (the tail is the runner's).
pub const MAX_CAPTURE_BYTES: usize = 4 << 20;

/// One error a tool printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where it points, best first (a panic lists its stack, innermost
    /// first): the first that lies in the repository is the issue's.
    pub at: Vec<Location>,
    /// One line, as the tool says it: `error[E0308]: mismatched types`.
    pub message: String,
    /// The output lines (0-based, end excluded) that hold it.
    pub lines: Range<usize>,
}

/// A place as a tool printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Relative to where the command ran, or absolute.
    pub path: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// A Go test's package import path: `path` is then relative to that
    /// package's directory (`go test` prints `x_test.go:12`).
    pub package: Option<String>,
}

impl Location {
    pub(crate) fn new(path: &str, line: Option<u32>, column: Option<u32>) -> Location {
        Location {
            path: path.to_string(),
            line,
            column,
            package: None,
        }
    }
}

/// Every error in `output`, in the order printed. Warnings are left out:
/// they did not fail the command.
pub fn parse(output: &str) -> Vec<Diagnostic> {
    let owned: Vec<String> = output.lines().map(strip_ansi).collect();
    let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut all = Vec::new();
    all.extend(rust::parse(&lines));
    all.extend(go::parse(&lines));
    all.extend(typescript::parse(&lines));
    all.extend(eslint::parse(&lines));
    all.extend(python::parse(&lines));
    // A block never runs past a line that stands for lines cut out.
    for d in &mut all {
        if let Some(cut) = (d.lines.start + 1..d.lines.end.min(lines.len()))
            .find(|&i| cut_count(lines[i]).is_some())
        {
            d.lines.end = cut;
        }
    }
    all.sort_by_key(|d| (d.lines.start, d.lines.end));
    // Two readers claiming the same line: the first (longest block) wins.
    let mut seen = std::collections::BTreeSet::new();
    all.retain(|d| seen.insert(d.lines.start));
    all
}

/// `s` without ANSI escape sequences (a tool forced to colour its output).
fn strip_ansi(s: &str) -> String {
    if !s.contains('\u{1b}') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // CSI: parameters, then one final byte in @..~
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // OSC: up to BEL or ESC \
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {
                chars.next();
            }
        }
    }
    out
}

/// A number as tools print it (no sign, no overflow).
pub(crate) fn number(s: &str) -> Option<u32> {
    (!s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Where to look for the files a tool names, and how to tell whether one is
/// in the repository.
pub struct Locator<'a> {
    /// The directory the command changes into first (`cd DIR && …`),
    /// relative to the repository.
    pub dir: Option<String>,
    /// The Go module (`module` of go.mod) and the directory of its go.mod,
    /// relative to the repository: a test's file is found by its package.
    pub go_module: Option<(String, String)>,
    /// Absolute directories that are the repository's root where the
    /// command ran (the user's working tree for `rascal check`). Copies
    /// made for a check (`…/checks/check-…/`) and a container's
    /// `/workspace/` are known without being listed.
    pub roots: Vec<String>,
    /// Whether a path relative to the repository is a file of the change.
    pub exists: &'a dyn Fn(&str) -> bool,
}

/// The copy's directory in a path: `…/checks/check-…/`.
const COPY_MARK: &str = "/checks/check-";
/// Where a container's check sees the copy.
const CONTAINER_ROOT: &str = "/workspace/";

/// What follows the copy a check ran in (`…/checks/check-…/`, or a
/// container's `/workspace/`) in absolute `path`: the path in the
/// repository. None when `path` is not in such a copy.
pub fn in_copy(path: &str) -> Option<String> {
    if let Some(i) = path.find(COPY_MARK) {
        let after = &path[i + COPY_MARK.len()..];
        return after.find('/').map(|j| after[j + 1..].to_string());
    }
    path.strip_prefix(CONTAINER_ROOT).map(str::to_string)
}

impl Locator<'_> {
    /// `loc`'s file relative to the repository, when it is one of its
    /// files: absolute paths only under the copy (or a root), relative ones
    /// from where the command ran; `..` may not leave the repository.
    pub fn resolve(&self, loc: &Location) -> Option<String> {
        let path = loc.path.trim();
        if path.is_empty() || path.len() > 4096 {
            return None;
        }
        let mut tries: Vec<String> = Vec::new();
        if path.starts_with('/') {
            tries.push(self.strip_root(path)?);
        } else {
            let p = path.trim_start_matches("./");
            if let (Some(pkg), Some((module, mdir))) = (&loc.package, &self.go_module) {
                let sub = if pkg == module {
                    Some(String::new())
                } else {
                    pkg.strip_prefix(&format!("{module}/")).map(str::to_string)
                };
                if let Some(sub) = sub {
                    tries.push(join(&join(mdir, &sub), p));
                }
            }
            if let Some(d) = &self.dir {
                tries.push(join(d, p));
            }
            tries.push(p.to_string());
        }
        tries
            .into_iter()
            .filter_map(|t| normalise(&t))
            .find(|t| (self.exists)(t))
    }

    /// What follows the repository's root in absolute `path`, if it is
    /// under one.
    fn strip_root(&self, path: &str) -> Option<String> {
        if let Some(rest) = in_copy(path) {
            return Some(rest);
        }
        self.roots.iter().find_map(|r| {
            let r = r.trim_end_matches('/');
            (!r.is_empty())
                .then(|| path.strip_prefix(&format!("{r}/")))
                .flatten()
                .map(str::to_string)
        })
    }

    /// `text` with the copies' and roots' directories taken out of the
    /// paths it mentions (`/…/checks/check-Ab12/src/a.rs` → `src/a.rs`).
    pub fn tidy(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for (i, word) in text.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let lead = word.len() - word.trim_start_matches(['(', '\'', '"', '`']).len();
            let (pre, w) = word.split_at(lead);
            out.push_str(pre);
            match w.starts_with('/').then(|| self.strip_root(w)).flatten() {
                Some(rest) if !rest.is_empty() => out.push_str(&rest),
                _ => out.push_str(w),
            }
        }
        out
    }

    /// The issues for `diags` of the check `rule`: each error's message
    /// with its place (`src/lib.rs:11:5: error[E0308]: mismatched types`),
    /// path and line set when the place is a file of the repository; the
    /// same error twice counts once; at most `MAX_ISSUES`, then one line
    /// saying how many more.
    pub fn issues(&self, rule: &str, diags: &[Diagnostic]) -> Vec<Issue> {
        let mut out: Vec<Issue> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut more = 0usize;
        for d in diags {
            let message = rascal_core::text::cut(&self.tidy(&d.message), 400);
            let found =
                d.at.iter()
                    .find_map(|l| self.resolve(l).map(|p| (p, l.line, l.column)));
            let key = (found.clone(), message.clone());
            if !seen.insert(key) {
                continue;
            }
            if out.len() == MAX_ISSUES {
                more += 1;
                continue;
            }
            let issue = match found {
                Some((path, line, column)) => {
                    let place = match (line, column) {
                        (Some(l), Some(c)) => format!("{path}:{l}:{c}"),
                        (Some(l), None) => format!("{path}:{l}"),
                        _ => path.clone(),
                    };
                    Issue::new(rule, Severity::Error, format!("{place}: {message}")).at(path, line)
                }
                None => Issue::new(rule, Severity::Error, message),
            };
            out.push(issue);
        }
        if more > 0 {
            out.push(Issue::new(
                rule,
                Severity::Info,
                format!(
                    "{more} more error{} not listed (see the output)",
                    if more == 1 { "" } else { "s" }
                ),
            ));
        }
        out
    }
}

/// `dir/path` (just `path` when `dir` is empty).
fn join(dir: &str, path: &str) -> String {
    let d = dir.trim_matches('/');
    if d.is_empty() || d == "." {
        path.to_string()
    } else {
        format!("{d}/{path}")
    }
}

/// `path` with `.` and inner `..` resolved; None when it is empty,
/// absolute or leaves the repository.
fn normalise(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\0') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The directory a command changes into before anything else
/// (`cd web && npx tsc`), relative and inside the repository.
pub fn leading_dir(command: &str) -> Option<String> {
    let rest = command.trim_start().strip_prefix("cd")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest.find(['&', ';', '|', '\n']).unwrap_or(rest.len());
    let dir = rest[..end].trim().trim_matches(['"', '\'']);
    if dir.is_empty() || dir.contains(char::is_whitespace) || dir.contains('$') {
        return None;
    }
    normalise(dir)
}

/// The module path declared by a go.mod.
pub fn go_module_path(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        rest.starts_with([' ', '\t'])
            .then(|| rest.trim().trim_matches('"').to_string())
            .filter(|m| !m.is_empty())
    })
}

/// A command's output as it arrives: the first `MAX_CAPTURE_BYTES` of it
/// (with `go test -json` events unwrapped into the lines they carry) and
/// how many lines there were in all.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    text: String,
    lines: usize,
    overflowed: bool,
}

impl Captured {
    /// The whole output at once.
    pub fn from_text(output: &str) -> Captured {
        let mut c = Captured::default();
        for l in output.lines() {
            c.push(l);
        }
        c
    }

    /// One more line of output.
    pub fn push(&mut self, line: &str) {
        if let Some(carried) = go::unwrap_json(line) {
            for l in carried.split('\n') {
                self.push_one(l);
            }
        }
    }

    fn push_one(&mut self, line: &str) {
        self.lines += 1;
        if self.overflowed || self.text.len() + line.len() + 1 > MAX_CAPTURE_BYTES {
            self.overflowed = true;
            return;
        }
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// The errors in what was captured.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        parse(&self.text)
    }

    /// The last `tail_lines` lines (the runner's `tail` when the output was
    /// too big to capture whole): what a report keeps of a command that
    /// did not fail.
    pub fn last(&self, tail: &str, tail_lines: usize) -> String {
        let text = if self.overflowed { tail } else { &self.text };
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(tail_lines)..]
            .iter()
            .map(|l| rascal_core::text::cut(l, rascal_exec::exec::runner::TAIL_LINE_BYTES))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The output a report keeps: the first error's block (when it comes
    /// before the tail), then `… N lines cut …`, then the last `tail_lines`
    /// lines. `tail` is the runner's own tail, used only when the output
    /// was too big to capture whole.
    pub fn kept(&self, tail: &str, tail_lines: usize) -> String {
        let whole: Vec<&str> = self.text.lines().collect();
        let tail: Vec<&str> = if self.overflowed {
            let t: Vec<&str> = tail.lines().collect();
            t[t.len().saturating_sub(tail_lines)..].to_vec()
        } else {
            whole[whole.len().saturating_sub(tail_lines)..].to_vec()
        };
        let block = parse(&self.text).first().map(|d| d.lines.clone());
        head_and_tail(&whole, block, self.lines, &tail)
            .into_iter()
            .map(|l| rascal_core::text::cut(&l, rascal_exec::exec::runner::TAIL_LINE_BYTES))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The line that stands for `n` lines left out.
pub fn cut_line(n: usize) -> String {
    format!("… {n} line{} cut …", if n == 1 { "" } else { "s" })
}

/// How many lines a cut line stands for.
fn cut_count(line: &str) -> Option<usize> {
    let mid = line.trim().strip_prefix("… ")?.strip_suffix(" cut …")?;
    let n = mid
        .strip_suffix(" lines")
        .or_else(|| mid.strip_suffix(" line"))?;
    n.parse().ok()
}

/// `head` (the first lines of an output of `total` lines) and `tail` (its
/// last lines) as the lines to keep: the first error's `block` of `head`
/// when it starts before the tail (at most `BLOCK_LINES`), a cut line for
/// what lies between, then the tail.
fn head_and_tail(
    head: &[&str],
    block: Option<Range<usize>>,
    total: usize,
    tail: &[&str],
) -> Vec<String> {
    let tail_start = total.saturating_sub(tail.len());
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let Some(b) = block.filter(|b| b.start < tail_start && b.start < head.len()) else {
        return own(tail);
    };
    let mut end = b
        .end
        .min(b.start + BLOCK_LINES)
        .min(tail_start)
        .min(head.len());
    // A cut line for one line would hide nothing.
    if end + 1 == tail_start && end < head.len() {
        end += 1;
    }
    let mut out = own(&head[b.start..end]);
    if end < tail_start {
        out.push(cut_line(tail_start - end));
    }
    out.extend(own(tail));
    out
}

/// The lines of a report's `output` worth showing in `tail_lines` plus the
/// first error: its block when it starts before the last `tail_lines`, a
/// cut line counting what is left out (cut lines already in `output`
/// included), then the last `tail_lines` lines.
pub fn shown(output: &str, tail_lines: usize) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let tail_start = lines.len().saturating_sub(tail_lines);
    let block = parse(output)
        .into_iter()
        .next()
        .map(|d| d.lines)
        .filter(|b| b.start < tail_start);
    let Some(b) = block else {
        return lines[tail_start..].iter().map(|s| s.to_string()).collect();
    };
    let mut end = b.end.min(b.start + BLOCK_LINES).min(tail_start);
    if end + 1 == tail_start && cut_count(lines[end]).is_none() {
        end += 1;
    }
    let mut out: Vec<String> = lines[b.start..end].iter().map(|s| s.to_string()).collect();
    if end < tail_start {
        let hidden: usize = lines[end..tail_start]
            .iter()
            .map(|l| cut_count(l).unwrap_or(1))
            .sum();
        out.push(cut_line(hidden));
    }
    out.extend(lines[tail_start..].iter().map(|s| s.to_string()));
    out
}

/// The first error's block in a report's `output` (at most `max_lines`),
/// for feedback and the PR body; None when no error is recognised.
pub fn first_block(output: &str, max_lines: usize) -> Option<String> {
    let d = parse(output).into_iter().next()?;
    let lines: Vec<&str> = output.lines().collect();
    let end = d.lines.end.min(d.lines.start + max_lines).min(lines.len());
    let block: Vec<&str> = lines[d.lines.start..end]
        .iter()
        .copied()
        .take_while(|l| cut_count(l).is_none())
        .collect();
    (!block.is_empty()).then(|| block.join("\n"))
}

/// The first error's block of a failed (or warning) command check —
/// a guardrail command, a `test` or `command` criterion — as a fenced
/// Markdown block of at most `max_lines` lines, for the feedback to an
/// author and the PR body. None for other checks, or when no error is
/// recognised in the output.
pub fn fenced_first_error(r: &Report, max_lines: usize) -> Option<String> {
    if !matches!(r.status, Status::Fail | Status::Warn) || !r.receipt.inputs.contains_key("command")
    {
        return None;
    }
    // A fence longer than any run of backticks inside (the output policy).
    Some(rascal_core::text::inert::markdown_fence(&first_block(
        &r.output, max_lines,
    )?))
}

#[cfg(test)]
mod tests;

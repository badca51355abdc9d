//! What leaves rascal is inert: the one output policy. Text an agent, a
//! reviewer, a check or an issue made is data everywhere it goes out — the
//! terminal, git commit messages, Markdown (PR bodies, reports), SARIF, the
//! `notify:` command's environment, the clipboard, and the OSC strings and
//! links rascal writes itself. Each boundary calls one function here; none
//! lets an escape or control sequence, a C1 control, or a character that
//! reorders or hides text through as itself. `docs/security.md ("What leaves rascal")` says
//! what each boundary does.

use std::fmt::Write;

// ------------------------------------------------------------ terminal

/// One line for a terminal: every control character except tab becomes a
/// visible caret form (`ESC` → `^[`, NUL → `^@`, CR → `^M`, DEL → `^?`);
/// C1 controls become `�`; the invisible characters that reorder or hide
/// text ([`is_hidden`]) are shown as their code point, `<U+202E>`.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push(c),
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push((c as u8 + b'@') as char);
            }
            '\u{7f}' => out.push_str("^?"),
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            c if is_hidden(c) => {
                let _ = write!(out, "<U+{:04X}>", c as u32);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Bidirectional overrides, embeddings and isolates, zero-width characters,
/// the word joiner and the byte order mark: they take no column but can
/// make text read differently from what it is ("Trojan Source"), so they
/// are shown escaped wherever untrusted text is shown.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2060}'
        | '\u{FEFF}'
        | '\u{061C}')
}

/// Whether `c` may never leave rascal as itself: a control character (C0,
/// DEL, C1) or a hidden one. Tab and line feed are judged by each boundary.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_hidden(c)
}

/// Lines for a terminal (what the CLI prints): line feeds are kept, every
/// line is [`sanitize`]d (a CR shows as `^M`).
pub fn terminal(s: &str) -> String {
    if !s.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c)) {
        return s.to_string();
    }
    s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n")
}

/// JSON text for a terminal or a file: serde escapes C0 controls inside
/// strings but writes C1 controls, DEL and hidden characters raw; here they
/// become `\uXXXX` escapes. Lossless: such characters can only stand inside
/// JSON strings, where the escape means the same character.
pub fn json(s: &str) -> String {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c != '\n' && is_unsafe(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

// ------------------------------------------------------------ git

/// The most columns a commit title takes (longer ones end in `…`).
pub const TITLE_COLUMNS: usize = 100;
/// The most bytes of a commit body written (the rest is cut, with a note).
pub const BODY_BYTES: usize = 16 * 1024;

/// A commit title: the first line only, [`sanitize`]d, tabs as spaces,
/// trimmed, at most [`TITLE_COLUMNS`] columns.
pub fn commit_title(s: &str) -> String {
    let first = s.split(['\n', '\r']).next().unwrap_or("");
    let one = sanitize(first).replace('\t', " ");
    super::ellipsis(one.trim(), TITLE_COLUMNS)
}

/// A commit body: every line [`sanitize`]d (tabs kept), trailing blanks
/// trimmed, at most [`BODY_BYTES`]. A line that would read as one of
/// rascal's own trailers (`Rascal-Run: …`) is quoted (`> Rascal-Run: …`),
/// so only rascal writes those.
pub fn commit_body(s: &str) -> String {
    let lines: Vec<String> = s
        .lines()
        .map(|l| {
            let l = sanitize(l);
            let l = l.trim_end();
            if is_rascal_trailer(l) {
                format!("> {l}")
            } else {
                l.to_string()
            }
        })
        .collect();
    let body = lines.join("\n");
    let body = body.trim_matches('\n');
    super::cut(body, BODY_BYTES)
}

/// `Rascal-Anything: …`, as git's trailer parser would read it.
fn is_rascal_trailer(line: &str) -> bool {
    let t = line.trim_start();
    let Some(rest) = t.get(..7) else { return false };
    if !rest.eq_ignore_ascii_case("rascal-") {
        return false;
    }
    match t.find(':') {
        Some(i) => t[..i]
            .trim_end()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-'),
        None => false,
    }
}

/// A trailer's value: held to the title's rules (one clean line of at
/// most [`TITLE_COLUMNS`] columns).
pub fn commit_trailer(s: &str) -> String {
    commit_title(s)
}

// ------------------------------------------------------------ Markdown

/// Text inside a Markdown line (a table cell, a checklist item, a heading):
/// one line, [`sanitize`]d; `<`, `>` and `&` as entities (no raw HTML, no
/// comment, no image tag, no entity that makes a hidden character); an `@`
/// that would start a mention, and an issue reference's `#` (or `GH-`),
/// followed by a zero-width space entity; `]`
/// before `(` or `[` escaped (no link, no image); `|` (a table cell), `$`
/// (math) and `\` backslash-escaped.
pub fn markdown_inline(s: &str) -> String {
    let one = sanitize(&s.replace("\r\n", " ").replace(['\n', '\r'], " "));
    let mut out = String::with_capacity(one.len() + 8);
    let mut prev: Option<char> = None;
    let mut chars = one.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' if !prev.is_some_and(|p| p.is_alphanumeric() || p == '_') => {
                out.push_str("@&#8203;")
            }
            // An issue or pull-request reference (`#123`, `owner/repo#123`,
            // `GH-123`) links and notifies on GitHub: a zero-width space
            // entity after the `#` or the `GH-` breaks it.
            '#' if chars.peek().is_some_and(char::is_ascii_digit) => out.push_str("#&#8203;"),
            '-' if chars.peek().is_some_and(char::is_ascii_digit)
                && out.to_ascii_lowercase().ends_with("gh") =>
            {
                out.push_str("-&#8203;")
            }
            ']' if matches!(chars.peek(), Some('(' | '[')) => out.push_str("\\]"),
            '\\' | '|' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        prev = Some(c);
    }
    out
}

/// Paragraphs of untrusted text (a task that came from an issue, say):
/// every line [`markdown_inline`], and what would start a block at the
/// start of a line (a heading, a list, a quote, a rule, indented code)
/// escaped or trimmed.
pub fn markdown_lines(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.trim_start();
            let mut line = markdown_inline(l);
            let first = line.chars().next();
            if matches!(first, Some('#' | '-' | '+' | '=' | '*' | '_' | '`' | '~')) {
                line.insert(0, '\\');
            } else if let Some(n) = line.find(|c: char| !c.is_ascii_digit()) {
                if n > 0 && line[n..].starts_with(['.', ')']) {
                    line.insert(n, '\\');
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `block` as a fenced code block: a fence of backticks longer than any run
/// of them inside (so nothing inside can close it), every line
/// [`sanitize`]d. Markdown shows it as text: no HTML, comment, image,
/// heading or mention inside is live.
pub fn markdown_fence(block: &str) -> String {
    fence_lines(block.lines())
}

/// [`markdown_fence`] of these lines (empty ones kept, the last included).
fn fence_lines<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let body = lines.map(sanitize).collect::<Vec<_>>().join("\n");
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{body}\n{fence}")
}

/// Text another party wrote, quoted in a Markdown document as exactly what
/// it is: at most `max_lines` lines in a [`markdown_fence`] of type `text`,
/// with a line saying how many were left out and the sha256 of the text as
/// read, so a reader can check the quote against the file.
pub fn markdown_quote(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let fenced = fence_lines(lines.iter().take(max_lines).copied());
    let (fence, rest) = fenced.split_once('\n').unwrap_or((&fenced, ""));
    let mut out = format!("{fence}text\n{rest}\n");
    if lines.len() > max_lines {
        let more = super::plural((lines.len() - max_lines) as u64, "more line");
        let _ = writeln!(out, "_{more} not shown._");
    }
    let _ = writeln!(
        out,
        "_Quoted as text; sha256 of the original: `{}`._",
        crate::digest::digest(text)
    );
    out
}

/// The last line of a Markdown document rascal wrote: the sha256 of every
/// line before it, so a reader can check that nothing above was changed
/// (`head -n -1 FILE | sha256sum`). `body` must end in a line feed.
pub fn markdown_seal(body: &str) -> String {
    let mut out = body.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let sum = crate::digest::digest(&out);
    let _ = writeln!(
        out,
        "<sub>Written by rascal; sha256 of the lines above: `{sum}` (check: `head -n -1 FILE | sha256sum`).</sub>"
    );
    out
}

// ------------------------------------------------------------ shell

/// One word of a command rascal prints for the user to paste into a POSIX
/// shell: as itself when it holds only characters no shell treats
/// specially (letters, digits, `_@%+=:,./-`), else in single quotes with
/// each `'` written `'\''`. Inside single quotes nothing is special — no
/// `$( )`, backtick, `\`, `"` or history `!` — so pasting it runs no
/// substitution. Never double quotes. A line feed stays itself inside the
/// quotes (the shell keeps it); other control and hidden characters are
/// [`sanitize`]d first (a pasted line holds what the terminal showed).
pub fn shell_word(s: &str) -> String {
    let s = s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n");
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    {
        return s;
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A whole command line of [`shell_word`]s.
pub fn shell_line<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| shell_word(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

// ------------------------------------------------------------ SARIF

/// A repository-relative path as a SARIF `artifactLocation.uri` (RFC 3986):
/// each `/`-separated segment percent-encoded (everything but the
/// unreserved characters), so `%2e%2e` stays a folder name, `#` and `?`
/// stay in the name. None for a path that names no file beneath the root
/// (absolute, empty, or with an empty, `.` or `..` segment).
pub fn sarif_uri(path: &str) -> Option<String> {
    if path.is_empty() || path.starts_with('/') {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    for (i, seg) in path.split('/').enumerate() {
        if seg.is_empty() || seg == "." || seg == ".." {
            return None;
        }
        if i > 0 {
            out.push('/');
        }
        for b in seg.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(b as char);
            } else {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    Some(out)
}

/// A SARIF `message.text`: plain text. Lines [`sanitize`]d (line feeds
/// kept) and `[`, `]` and `\` backslash-escaped, so nothing reads as one of
/// SARIF's embedded links (`[text](id)`).
pub fn sarif_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in terminal(s).chars() {
        if matches!(c, '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ------------------------------------------------------------ notifications

/// A value given to the `notify:` command in its environment: one line,
/// [`sanitize`]d, tabs as spaces, at most 1000 columns.
pub fn env_value(s: &str) -> String {
    let one = sanitize(&s.replace(['\n', '\r'], " ")).replace('\t', " ");
    super::ellipsis(one.trim(), 1000)
}

/// What may go inside an OSC string rascal writes (a desktop notification,
/// a link's text): no control characters (an ESC or BEL would end it early,
/// or start another sequence), no hidden ones, no `;` (OSC 777 splits its
/// fields on it), at most `max` columns.
pub fn osc_text(s: &str, max: usize) -> String {
    let clean: String = s
        .chars()
        .map(|c| match c {
            ';' => ',',
            c if is_unsafe(c) => ' ',
            c => c,
        })
        .collect();
    super::ellipsis(clean.trim(), max)
}

// ------------------------------------------------------------ clipboard

/// What `y` puts on the clipboard: lines [`sanitize`]d (line feeds and
/// tabs kept), so no ESC, C0 or C1 control reaches it: a paste can hold no
/// bracketed-paste terminator (`ESC [201~`) and no other sequence.
pub fn clipboard(s: &str) -> String {
    terminal(s)
}

// ------------------------------------------------------------ links

/// An OSC 8 hyperlink rascal draws: `uri` keeps only the characters a URI
/// may hold (others are percent-encoded), `text` is [`osc_text`]. Nothing
/// in either can end the sequence or start another.
pub fn osc8_link(uri: &str, text: &str) -> String {
    let mut u = String::with_capacity(uri.len());
    for b in uri.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,=%".contains(&b);
        if keep {
            u.push(b as char);
        } else {
            let _ = write!(u, "%{b:02X}");
        }
    }
    let text = osc_text(text, 200);
    format!("\u{1b}]8;;{u}\u{1b}\\{text}\u{1b}]8;;\u{1b}\\")
}

#[cfg(test)]
mod tests;

//! Just enough of the POSIX shell's grammar to find the test command in a
//! guardrail (`cd web && CI=1 npm test -- --coverage 2>&1`) and to add flags
//! to it in place: words keep their byte spans in the original, so the rest
//! of the command is never re-quoted. Not a shell: no expansion, no
//! here-documents, no control flow beyond `&&`, `||`, `;`, `|` and subshells.

/// One word as the shell would pass it (quotes removed), and where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub text: String,
    pub start: usize,
    pub end: usize,
    /// No `$…` or backquote expansion inside: the text is what the program gets.
    pub literal: bool,
    /// Written as `NAME=value` with a bare name: a variable assignment when
    /// it comes before the command.
    pub assignment: bool,
}

/// What ends a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    And,
    Or,
    /// `;` or a newline.
    Seq,
    Pipe,
    Background,
    /// `(` or `)`.
    Group,
    End,
}

/// A simple command: its words (redirections left out) and its extent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub words: Vec<Word>,
    /// Byte offset of the first token, and just after the last (words and
    /// redirections alike).
    pub start: usize,
    pub end: usize,
    /// What follows it.
    pub sep: Sep,
}

/// The simple commands of `command` in order, or `None` when a quote or a
/// `$(` is left open.
pub(super) fn segments(command: &str) -> Option<Vec<Segment>> {
    let b = command.as_bytes();
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut i = 0;
    let flush = |words: &mut Vec<Word>,
                 start: &mut Option<usize>,
                 end: usize,
                 sep,
                 out: &mut Vec<Segment>| {
        if let Some(s) = start.take() {
            out.push(Segment {
                words: std::mem::take(words),
                start: s,
                end,
                sep,
            });
        } else if let Some(last) = out.last_mut() {
            // `a && (b)`: the separator that matters is the one after `b`.
            if last.sep == Sep::Group {
                last.sep = sep;
            }
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\n' | b';' => {
                flush(&mut words, &mut start, end, Sep::Seq, &mut out);
                i += if b.get(i + 1) == Some(&b';') { 2 } else { 1 };
            }
            b'&' if b.get(i + 1) == Some(&b'&') => {
                flush(&mut words, &mut start, end, Sep::And, &mut out);
                i += 2;
            }
            b'|' if b.get(i + 1) == Some(&b'|') => {
                flush(&mut words, &mut start, end, Sep::Or, &mut out);
                i += 2;
            }
            b'|' => {
                flush(&mut words, &mut start, end, Sep::Pipe, &mut out);
                i += if b.get(i + 1) == Some(&b'&') { 2 } else { 1 };
            }
            b'&' if b.get(i + 1) != Some(&b'>') => {
                flush(&mut words, &mut start, end, Sep::Background, &mut out);
                i += 1;
            }
            b'(' | b')' => {
                flush(&mut words, &mut start, end, Sep::Group, &mut out);
                i += 1;
            }
            _ => {
                if let Some(after) = redirection(b, i) {
                    start.get_or_insert(i);
                    i = after;
                    // The target: attached (`>&2`, `2>&1`) or the next word.
                    if !matches!(b[i - 1], b'&')
                        || !b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'-')
                    {
                        while i < b.len() && matches!(b[i], b' ' | b'\t') {
                            i += 1;
                        }
                    }
                    if i < b.len() && !is_operator(b[i]) {
                        let (_, next) = word(command, i)?;
                        i = next;
                    }
                    end = i;
                    continue;
                }
                let (w, next) = word(command, i)?;
                // `{ … ; }` groups: the braces are not commands.
                if !(w.literal && (w.text == "{" || w.text == "}") && w.end - w.start == 1) {
                    start.get_or_insert(i);
                    words.push(w);
                    end = next;
                }
                i = next;
            }
        }
    }
    flush(&mut words, &mut start, end, Sep::End, &mut out);
    Some(out)
}

fn is_operator(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// If a redirection operator starts at `i` (`>`, `2>>`, `&>`, `<&`, `2>&1`…),
/// the offset just after the operator itself.
fn redirection(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b[j] == b'&' {
        j += 1;
        if b.get(j) != Some(&b'>') {
            return None;
        }
    } else {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
    }
    match b.get(j) {
        Some(b'>') | Some(b'<') => {}
        _ => return None,
    }
    j += 1;
    while j < b.len() && matches!(b[j], b'>' | b'<' | b'&' | b'|') {
        j += 1;
    }
    Some(j)
}

/// One word starting at `i`: its text with quotes removed and the offset
/// after it. `None` when a quote or substitution is left open.
fn word(s: &str, i: usize) -> Option<(Word, usize)> {
    let b = s.as_bytes();
    let mut text = String::new();
    let mut literal = true;
    let name = b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let assignment = name > 0 && !b[i].is_ascii_digit() && b.get(i + name) == Some(&b'=');
    let mut j = i;
    while j < b.len() && !is_operator(b[j]) {
        match b[j] {
            b'\'' => {
                let close = s[j + 1..].find('\'')? + j + 1;
                text.push_str(&s[j + 1..close]);
                j = close + 1;
            }
            b'"' => {
                j += 1;
                loop {
                    match *b.get(j)? {
                        b'"' => break,
                        b'\\' if matches!(b.get(j + 1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                            text.push(b[j + 1] as char);
                            j += 2;
                        }
                        b'\\' if b.get(j + 1) == Some(&b'\n') => j += 2,
                        b'$' | b'`' => {
                            literal = false;
                            let next = substitution(s, j)?;
                            text.push_str(&s[j..next]);
                            j = next;
                        }
                        _ => {
                            let ch = s[j..].chars().next()?;
                            text.push(ch);
                            j += ch.len_utf8();
                        }
                    }
                }
                j += 1;
            }
            b'\\' => {
                let ch = s.get(j + 1..)?.chars().next()?;
                if ch != '\n' {
                    text.push(ch);
                }
                j += 1 + ch.len_utf8();
            }
            b'$' | b'`' => {
                literal = false;
                let next = substitution(s, j)?;
                text.push_str(&s[j..next]);
                j = next;
            }
            _ => {
                let ch = s[j..].chars().next()?;
                text.push(ch);
                j += ch.len_utf8();
            }
        }
    }
    Some((
        Word {
            text,
            start: i,
            end: j,
            literal,
            assignment,
        },
        j,
    ))
}

/// The end of a `$…`, `$(…)`, `${…}` or backquoted expansion starting at `i`.
fn substitution(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    match (b[i], b.get(i + 1)) {
        (b'`', _) => Some(s[i + 1..].find('`')? + i + 2),
        (b'$', Some(b'(')) | (b'$', Some(b'{')) => {
            let (open, close) = if b[i + 1] == b'(' {
                (b'(', b')')
            } else {
                (b'{', b'}')
            };
            let mut depth = 0usize;
            let mut j = i + 1;
            let mut quote: Option<u8> = None;
            while j < b.len() {
                let c = b[j];
                match quote {
                    Some(q) if c == q => quote = None,
                    Some(_) => {}
                    None if c == b'\'' || c == b'"' => quote = Some(c),
                    None if c == open => depth += 1,
                    None if c == close => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    None => {}
                }
                j += 1;
            }
            None
        }
        (b'$', _) => {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            Some(j.max(i + 1))
        }
        _ => Some(i + 1),
    }
}

/// A word as the shell should read it back: bare when that is safe, quoted
/// otherwise.
pub(super) fn quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_./:=+,@%^".contains(&c));
    if safe {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// An assignment as the shell should read it back: `NAME=` then the value quoted.
pub(super) fn quote_assignment(assignment: &str) -> String {
    match assignment.split_once('=') {
        Some((name, value)) => format!(
            "{name}={}",
            if value.is_empty() {
                String::new()
            } else {
                quote(value)
            }
        ),
        None => quote(assignment),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<(Vec<String>, Sep)> {
        segments(command)
            .unwrap()
            .into_iter()
            .map(|s| (s.words.into_iter().map(|w| w.text).collect(), s.sep))
            .collect()
    }

    fn owned(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_chains_pipes_and_groups() {
        assert_eq!(
            texts("cd sub && cargo test || true; echo done | tee log"),
            vec![
                (owned(&["cd", "sub"]), Sep::And),
                (owned(&["cargo", "test"]), Sep::Or),
                (owned(&["true"]), Sep::Seq),
                (owned(&["echo", "done"]), Sep::Pipe),
                (owned(&["tee", "log"]), Sep::End),
            ]
        );
        assert_eq!(
            texts("(cd a && go test ./...) && echo ok"),
            vec![
                (owned(&["cd", "a"]), Sep::And),
                (owned(&["go", "test", "./..."]), Sep::And),
                (owned(&["echo", "ok"]), Sep::End),
            ]
        );
        // The braces of a group are not words; its redirection stays with it.
        assert_eq!(
            texts("{ cargo test; } 2>&1"),
            vec![(owned(&["cargo", "test"]), Sep::Seq), (vec![], Sep::End)]
        );
    }

    #[test]
    fn quotes_are_removed_and_redirections_left_out() {
        let segs =
            segments(r#"A='x y' cargo test "a b" c\ d 2>&1 > out.txt -- --nocapture"#).unwrap();
        let words: Vec<&str> = segs[0].words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            words,
            ["A=x y", "cargo", "test", "a b", "c d", "--", "--nocapture"]
        );
        assert_eq!(
            segs[0].end,
            r#"A='x y' cargo test "a b" c\ d 2>&1 > out.txt -- --nocapture"#.len()
        );
        // A redirection at the very end still belongs to the segment.
        let s = "cargo test 2>/dev/null";
        assert_eq!(segments(s).unwrap()[0].end, s.len());
    }

    #[test]
    fn spans_point_into_the_original() {
        let s = "cd web &&  npx  jest --ci";
        let segs = segments(s).unwrap();
        let jest = &segs[1].words[1];
        assert_eq!(&s[jest.start..jest.end], "jest");
        assert_eq!(&s[segs[1].start..segs[1].end], "npx  jest --ci");
    }

    #[test]
    fn expansions_are_marked_not_literal() {
        let segs = segments(r#"cd "$ROOT/x" && pytest $(cat args) `echo a`"#).unwrap();
        assert!(!segs[0].words[1].literal);
        assert_eq!(segs[1].words[1].text, "$(cat args)");
        assert!(!segs[1].words[1].literal);
        assert!(segs[1].words[0].literal);
    }

    #[test]
    fn open_quotes_give_none() {
        assert_eq!(segments("cargo test 'oops"), None);
        assert_eq!(segments("pytest \"oops"), None);
        assert_eq!(segments("pytest $(oops"), None);
        assert_eq!(segments("pytest \\"), None);
    }

    #[test]
    fn assignments_and_quoting() {
        let segs = segments("RUST_BACKTRACE=1 'A=b' x=").unwrap();
        let w = &segs[0].words;
        assert!(w[0].assignment);
        assert!(!w[1].assignment);
        assert!(w[2].assignment);
        assert_eq!(
            quote("tests/test_x.py::test_a[1]"),
            "'tests/test_x.py::test_a[1]'"
        );
        assert_eq!(quote("--list"), "--list");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(
            quote_assignment("PYTHONPATH=src lib"),
            "PYTHONPATH='src lib'"
        );
    }

    #[test]
    fn comments_and_continuations() {
        assert_eq!(
            texts("cargo test \\\n  --workspace # all of it\necho hi"),
            vec![
                (owned(&["cargo", "test", "--workspace"]), Sep::Seq),
                (owned(&["echo", "hi"]), Sep::End)
            ]
        );
    }
}

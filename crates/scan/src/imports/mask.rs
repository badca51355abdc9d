//! Masking a line: each byte classified as code, string or comment,
//! following strings and comments across the lines of a hunk, so a
//! pattern matches code only.

use super::Lang;

/// What a byte of a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Code,
    Str,
    Comment,
}

/// An open construct of the lexer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ctx {
    /// A string literal (or JS regex) closed by `close`. `subst` opens code
    /// inside it (`${` in a JS template, `{` in a Python f-string);
    /// a string that is not `multiline` ends at the end of its line
    /// unless the line ends with a backslash.
    Str {
        close: String,
        escapes: bool,
        multiline: bool,
        subst: Option<&'static str>,
    },
    /// A `/* … */` comment.
    Block,
    /// Code inside a string's substitution, `depth` braces deep.
    Subst { depth: u32 },
}

impl Ctx {
    fn string(close: &str, escapes: bool, multiline: bool, subst: Option<&'static str>) -> Ctx {
        Ctx::Str {
            close: close.to_string(),
            escapes,
            multiline,
            subst,
        }
    }
}

/// The lexer's state between lines.
#[derive(Debug, Clone, Default)]
pub(super) struct MaskState {
    stack: Vec<Ctx>,
    /// JS: the last code character and word, to tell a regex from a division.
    prev: Option<char>,
    prev_word: String,
    /// JS: a `/` whose meaning depends on what came before (after `)`,
    /// `]`, `}` or at the start of a hunk) starts a regex.
    slash_after_close_is_regex: bool,
    /// JS: such a `/` was met.
    pub(super) ambiguous_slash: bool,
}

impl MaskState {
    /// The same state, reading a `/` whose meaning depends on what came
    /// before as the start of a regex.
    pub(super) fn slash_after_close_as_regex(self) -> MaskState {
        MaskState {
            slash_after_close_is_regex: true,
            ..self
        }
    }
}

/// The states a hunk may start in. A hunk at line 1 starts in code; any
/// other may continue a string or comment of the unchanged lines above.
pub(super) fn start_states(lang: Lang, known: bool) -> Vec<MaskState> {
    let code = MaskState::default();
    let mut out = vec![code.clone()];
    if known {
        return out;
    }
    let ctxs: Vec<Ctx> = match lang {
        Lang::Rust => vec![
            Ctx::string("\"", true, true, None),
            Ctx::string("\"", false, true, None),
            Ctx::string("\"#", false, true, None),
            Ctx::string("\"##", false, true, None),
            Ctx::Block,
        ],
        Lang::Python => vec![
            Ctx::string("\"\"\"", true, true, None),
            Ctx::string("'''", true, true, None),
            Ctx::string("\"\"\"", true, true, Some("{")),
            Ctx::string("'''", true, true, Some("{")),
            Ctx::string("\"", true, false, None),
            Ctx::string("'", true, false, None),
        ],
        Lang::JavaScript => vec![
            Ctx::string("`", true, true, Some("${")),
            Ctx::string("\"", true, false, None),
            Ctx::string("'", true, false, None),
            Ctx::Block,
        ],
        Lang::Go => vec![],
    };
    out.extend(ctxs.into_iter().map(|c| MaskState {
        stack: vec![c],
        ..code.clone()
    }));
    out
}

/// One line, classified byte by byte: `code` has everything but code
/// blanked, `scan` only the comments; both keep the line's byte offsets.
pub(super) struct Masked {
    pub(super) code: String,
    pub(super) scan: String,
    pub(super) class: Vec<Class>,
}

impl Masked {
    #[cfg(test)]
    pub(super) fn code_at(&self, byte: usize) -> bool {
        self.class.get(byte) == Some(&Class::Code)
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Words after which a JS `/` starts a regular expression.
const JS_REGEX_AFTER: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
];

/// Mask one line from a fresh state (tests).
#[cfg(test)]
pub(super) fn mask(text: &str, lang: Lang) -> Masked {
    mask_line(text, lang, &mut MaskState::default())
}

/// Classify one line, continuing (and updating) `st`. Go is never masked.
pub(super) fn mask_line(text: &str, lang: Lang, st: &mut MaskState) -> Masked {
    let mut line = LineMask::new(text, lang);
    let mut i = 0;
    while i < line.chars.len() {
        if let Some(next) = line.step_inside(st, i) {
            i = next;
            continue;
        }
        match line.step_code(st, i) {
            Some(next) => i = next,
            None => break,
        }
    }
    end_one_line_strings(text, st);
    line.render(text)
}

/// A one-line string still open at the end of its line ends there,
/// unless a backslash continues it.
fn end_one_line_strings(text: &str, st: &mut MaskState) {
    if text.ends_with('\\') {
        return;
    }
    if let Some(k) = st.stack.iter().position(|c| {
        matches!(
            c,
            Ctx::Str {
                multiline: false,
                ..
            }
        )
    }) {
        st.stack.truncate(k);
    }
}

/// One line being classified: its characters and each byte's class.
struct LineMask {
    chars: Vec<(usize, char)>,
    class: Vec<Class>,
    lang: Lang,
}

impl LineMask {
    /// A line of `lang`, every byte code until classified otherwise.
    fn new(text: &str, lang: Lang) -> LineMask {
        LineMask {
            chars: text.char_indices().collect(),
            class: vec![Class::Code; text.len()],
            lang,
        }
    }

    /// The character at index `i`, if any.
    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|&(_, c)| c)
    }

    /// The characters from index `i` on start with `pat`.
    fn starts(&self, i: usize, pat: &str) -> bool {
        pat.chars()
            .enumerate()
            .all(|(k, p)| self.at(i + k) == Some(p))
    }

    /// Mark chars[from..to) as `k`.
    fn mark(&mut self, from: usize, to: usize, k: Class) {
        let n = self.chars.len();
        for &(b, c) in &self.chars[from.min(n)..to.min(n)] {
            for x in &mut self.class[b..b + c.len_utf8()] {
                *x = k;
            }
        }
    }

    /// Inside a block comment, a string or a substitution's braces: one
    /// step, to the next index; None when the character is code.
    fn step_inside(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let c = self.chars[i].1;
        match st.stack.last().cloned() {
            Some(Ctx::Block) => {
                if self.starts(i, "*/") {
                    self.mark(i, i + 2, Class::Comment);
                    st.stack.pop();
                    Some(i + 2)
                } else {
                    self.mark(i, i + 1, Class::Comment);
                    Some(i + 1)
                }
            }
            Some(Ctx::Str {
                close,
                escapes,
                subst,
                ..
            }) => {
                // An escape, or `{{` in an f-string: two characters of text.
                if (escapes && c == '\\') || (subst == Some("{") && self.starts(i, "{{")) {
                    self.mark(i, i + 2, Class::Str);
                    Some(i + 2)
                } else if let Some(open) = subst.filter(|o| self.starts(i, o)) {
                    let n = open.chars().count();
                    self.mark(i, i + n, Class::Str);
                    st.stack.push(Ctx::Subst { depth: 0 });
                    Some(i + n)
                } else if self.starts(i, &close) {
                    let n = close.chars().count();
                    self.mark(i, i + n, Class::Str);
                    st.stack.pop();
                    Some(i + n)
                } else {
                    self.mark(i, i + 1, Class::Str);
                    Some(i + 1)
                }
            }
            Some(Ctx::Subst { depth }) if c == '{' || c == '}' => {
                let top = st.stack.len() - 1;
                match (c, depth) {
                    ('}', 0) => {
                        st.stack.pop();
                        self.mark(i, i + 1, Class::Str);
                    }
                    ('}', d) => st.stack[top] = Ctx::Subst { depth: d - 1 },
                    (_, d) => st.stack[top] = Ctx::Subst { depth: d + 1 },
                }
                Some(i + 1)
            }
            _ => None,
        }
    }

    /// One step of code: a comment, regex, string or character literal
    /// opens, or the character is code. The next index; None at a line
    /// comment (the rest of the line).
    fn step_code(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let c = self.chars[i].1;
        let lang = self.lang;
        let c_like = matches!(lang, Lang::Rust | Lang::JavaScript);
        let prev_ident = i > 0 && is_ident(self.chars[i - 1].1);
        if (c_like && self.starts(i, "//")) || (lang == Lang::Python && c == '#') {
            self.mark(i, self.chars.len(), Class::Comment);
            return None;
        }
        if c_like && self.starts(i, "/*") {
            self.mark(i, i + 2, Class::Comment);
            st.stack.push(Ctx::Block);
            return Some(i + 2);
        }
        if lang == Lang::JavaScript && c == '/' {
            if let Some(end) = js_regex_end(&self.chars, i, st) {
                self.mark(i, end, Class::Str);
                st.prev = Some('/');
                st.prev_word.clear();
                return Some(end);
            }
        }
        if lang == Lang::Rust && c == 'r' {
            if let Some(next) = self.rust_raw_string(st, i) {
                return Some(next);
            }
        }
        if lang == Lang::Rust && c == '\'' {
            return Some(self.rust_char(i));
        }
        if let Some(ctx) = self.opened_string(i) {
            let n = match &ctx {
                Ctx::Str { close, .. } if close.len() == 3 => 3,
                _ => 1,
            };
            self.mark(i, i + n, Class::Str);
            st.stack.push(ctx);
            return Some(i + n);
        }
        if !c.is_whitespace() {
            if is_ident(c) {
                if !prev_ident {
                    st.prev_word.clear();
                }
                st.prev_word.push(c);
            } else {
                st.prev_word.clear();
            }
            st.prev = Some(c);
        }
        Some(i + 1)
    }

    /// Rust raw strings: r"…", r#"…"#, br"…", cr"…" — at the `r` (not
    /// inside an identifier, unless a `b`/`c` prefix): the opening marked,
    /// the string pushed, the index after it.
    fn rust_raw_string(&mut self, st: &mut MaskState, i: usize) -> Option<usize> {
        let chars = &self.chars;
        let prev_ident = i > 0 && is_ident(chars[i - 1].1);
        let prefixed =
            i > 0 && matches!(chars[i - 1].1, 'b' | 'c') && !(i >= 2 && is_ident(chars[i - 2].1));
        if prev_ident && !prefixed {
            return None;
        }
        let mut j = i + 1;
        while self.at(j) == Some('#') {
            j += 1;
        }
        if self.at(j) != Some('"') {
            return None;
        }
        let close: String = std::iter::once('"')
            .chain(std::iter::repeat_n('#', j - i - 1))
            .collect();
        self.mark(i, j + 1, Class::Str);
        st.stack.push(Ctx::string(&close, false, true, None));
        Some(j + 1)
    }

    /// Rust char literals ('x', '\n', '\u{1F600}'), marked; anything else
    /// is a lifetime. The index after it.
    fn rust_char(&mut self, i: usize) -> usize {
        let end = if self.at(i + 1) == Some('\\') {
            (i + 2..(i + 12).min(self.chars.len()))
                .find(|&k| self.at(k) == Some('\''))
                .map(|k| k + 1)
        } else if self.at(i + 2) == Some('\'') && self.at(i + 1).is_some() {
            Some(i + 3)
        } else {
            None
        };
        match end {
            Some(end) => {
                self.mark(i, end, Class::Str);
                end
            }
            None => i + 1,
        }
    }

    /// The string a quote at `i` opens, in this language (Python: with
    /// its triple quotes and f-string substitutions).
    fn opened_string(&self, i: usize) -> Option<Ctx> {
        let chars = &self.chars;
        let c = chars[i].1;
        match (self.lang, c) {
            (Lang::Rust, '"') => Some(Ctx::string("\"", true, true, None)),
            (Lang::JavaScript, '"' | '\'') => Some(Ctx::string(&c.to_string(), true, false, None)),
            (Lang::JavaScript, '`') => Some(Ctx::string("`", true, true, Some("${"))),
            (Lang::Python, '"' | '\'') => {
                let triple: String = std::iter::repeat_n(c, 3).collect();
                // The prefix letters just before the quote: f"…", rf'…'.
                let mut k = i;
                while k > 0 && chars[k - 1].1.is_ascii_alphabetic() && i - k < 2 {
                    k -= 1;
                }
                let f_string = (k == 0 || !is_ident(chars[k - 1].1))
                    && chars[k..i].iter().any(|&(_, p)| p == 'f' || p == 'F');
                let subst = f_string.then_some("{");
                Some(if self.starts(i, &triple) {
                    Ctx::string(&triple, true, true, subst)
                } else {
                    Ctx::string(&c.to_string(), true, false, subst)
                })
            }
            _ => None,
        }
    }

    /// The line with everything but code blanked, and with only its
    /// comments blanked (byte offsets kept).
    fn render(self, text: &str) -> Masked {
        let mut code = String::with_capacity(text.len());
        let mut scan = String::with_capacity(text.len());
        for (b, ch) in text.char_indices() {
            let n = ch.len_utf8();
            match self.class[b] {
                Class::Code => {
                    code.push(ch);
                    scan.push(ch);
                }
                Class::Str => {
                    code.extend(std::iter::repeat_n(' ', n));
                    scan.push(ch);
                }
                Class::Comment => {
                    code.extend(std::iter::repeat_n(' ', n));
                    scan.extend(std::iter::repeat_n(' ', n));
                }
            }
        }
        Masked {
            code,
            scan,
            class: self.class,
        }
    }
}

/// Where a JS regular expression literal starting at `chars[i]` (a `/`)
/// ends, if it is one: a `/` where an expression may start, closed on the
/// same line by a `/` outside a `[…]` class (then its flags).
fn js_regex_end(chars: &[(usize, char)], i: usize, st: &mut MaskState) -> Option<usize> {
    let regex = match st.prev {
        None | Some(')' | ']' | '}') => {
            st.ambiguous_slash = true;
            st.slash_after_close_is_regex
        }
        Some(p) if is_ident(p) => JS_REGEX_AFTER.contains(&st.prev_word.as_str()),
        Some(_) => true,
    };
    if !regex {
        return None;
    }
    let mut j = i + 1;
    let mut class = false;
    while j < chars.len() {
        match chars[j].1 {
            '\\' => j += 1,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => {
                j += 1;
                while j < chars.len() && chars[j].1.is_ascii_alphabetic() {
                    j += 1;
                }
                return Some(j);
            }
            _ => {}
        }
        j += 1;
    }
    None
}

//! Unit tests for `lex.rs`.

use super::*;

fn code(text: &str, syntax: Syntax) -> String {
    String::from_utf8(Source::new(text, syntax).code).unwrap()
}

#[test]
fn rust_comments_strings_and_raw_strings_are_blanked() {
    let src = "a /* b /* c */ d */ e \"{\\\"}\" r#\"x\"}\"# f // g\n'{' 'a h";
    let c = code(src, Syntax::Rust);
    assert_eq!(c.len(), src.len());
    assert!(!c.contains('{'), "{c}");
    assert!(
        c.contains(" e ") && c.contains(" f ") && c.contains("'a h"),
        "{c}"
    );
    assert!(!c.contains('g') && !c.contains('x'), "{c}");
}

#[test]
fn python_triple_quotes_and_prefixes() {
    let c = code("x = rb'''a\n}'''\ny = f\"{z}\" # c\n", Syntax::Python);
    let blank = |n| " ".repeat(n);
    assert_eq!(
        c,
        format!("x ={}\n{}\ny ={}\n", blank(7), blank(4), blank(11))
    );
}

#[test]
fn js_templates_nest_and_regexes_are_literals() {
    let c = code("a(`x${b ? `}` : '{'}y`, /[/{]/g, c / d)", Syntax::Js);
    assert!(!c.contains('{') && c.contains("c / d"), "{c}");
}

#[test]
fn tokens_tell_literals_and_keep_negative_numbers() {
    let s = Source::new("f(x, -1, \"s\", a - 2, true)", Syntax::Rust);
    let mut t = Vec::new();
    s.tokens(0, s.len(), &mut t);
    let lits: Vec<&str> = t
        .iter()
        .filter(|t| t.lit)
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(lits, ["-1", "\"s\"", "2", "true"]);
}

#[test]
fn hostile_text_does_not_panic() {
    for src in [
        "'",
        "\"",
        "r#",
        "r#\"",
        "'\\",
        "b'",
        "/*",
        "`${",
        "`${`",
        "é'é",
        "'é",
        "(((",
        ")))",
        "'\\u{",
        "#[",
        "\u{feff}'x",
    ] {
        for syntax in [
            Syntax::Rust,
            Syntax::Python,
            Syntax::Go,
            Syntax::Js,
            Syntax::Jvm,
        ] {
            let s = Source::new(src, syntax);
            let mut t = Vec::new();
            s.tokens(0, s.len(), &mut t);
            let _ = s.args(0);
            let _ = s.chain_end(0);
            let _ = s.line(s.len());
        }
    }
}

#[test]
fn a_last_argument_that_is_a_literal_alone_is_an_argument() {
    let parts = |text: &str, syntax: Syntax| {
        let s = Source::new(text, syntax);
        let open = text.find('(').unwrap();
        s.args(open)
            .into_iter()
            .map(|(a, b)| text[a..b].trim().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(parts("f(x, 'abc')", Syntax::Python), ["x", "'abc'"]);
    assert_eq!(parts("f(\"abc\")", Syntax::Rust), ["\"abc\""]);
    assert_eq!(
        parts("f(x, \"a\" /* c */)", Syntax::Rust),
        ["x", "\"a\" /* c */"]
    );
    assert_eq!(parts("f(x, /* c */)", Syntax::Rust), ["x"]);
    assert_eq!(parts("f(x,)", Syntax::Rust), ["x"]);
    assert_eq!(parts("f()", Syntax::Rust), Vec::<String>::new());
}

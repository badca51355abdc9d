//! Go's dependency declarations: go.mod (`require` and `replace`, single
//! lines and blocks; a replacement is a local directory or another
//! module), go.work (`use` and `replace`) and go.sum (every module with a
//! checksum). A small reader of Go's line grammar: tokens, quoted strings,
//! `//` comments, `verb ( … )` blocks. A directive it does not know is an
//! error, as it may declare what this reader cannot see.

use super::dep::{norm_path, Dep, Source};
use crate::Error;

/// Directives that say nothing about where code comes from.
const INERT: &[&str] = &[
    "module",
    "go",
    "toolchain",
    "godebug",
    "exclude",
    "retract",
    "tool",
    "ignore",
];

/// One line's tokens: words, parentheses and quoted strings (unquoted),
/// up to a `//` comment. Errors on an unterminated quote.
fn tokens(line: &str) -> Result<Vec<String>, Error> {
    let chars: Vec<char> = line.chars().collect();
    let comment = |i: usize| chars[i] == '/' && chars.get(i + 1) == Some(&'/');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if comment(i) {
            break;
        } else if c == '(' || c == ')' {
            out.push(c.to_string());
            i += 1;
        } else if c == '"' || c == '`' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        return Err(Error::Manifest(format!("unterminated {c}quoted{c} string")))
                    }
                    Some('\\') if c == '"' => {
                        s.extend(chars.get(i + 1));
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            out.push(s);
        } else {
            let start = i;
            while i < chars.len()
                && !chars[i].is_whitespace()
                && !matches!(chars[i], '(' | ')' | '"' | '`')
                && !comment(i)
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        }
    }
    Ok(out)
}

/// The statements of a go.mod or go.work: (line number, verb, arguments),
/// with blocks expanded to one statement per line.
fn statements(text: &str) -> Result<Vec<(usize, String, Vec<String>)>, Error> {
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let toks = tokens(raw).map_err(|e| Error::Manifest(format!("line {n}: {e}")))?;
        if toks.is_empty() {
            continue;
        }
        if let Some((_, verb)) = &block {
            if toks[0] == ")" {
                if toks.len() > 1 {
                    return Err(Error::Manifest(format!(
                        "line {n}: unexpected text after `)`"
                    )));
                }
                block = None;
            } else if toks.iter().any(|t| t == "(" || t == ")") {
                return Err(Error::Manifest(format!(
                    "line {n}: unexpected parenthesis in a `{verb}` block"
                )));
            } else {
                out.push((n, verb.clone(), toks));
            }
            continue;
        }
        let verb = toks[0].clone();
        if toks.get(1).map(String::as_str) == Some("(") {
            if toks.len() > 2 {
                return Err(Error::Manifest(format!(
                    "line {n}: unexpected text after `{verb} (`"
                )));
            }
            block = Some((n, verb));
        } else {
            out.push((n, verb, toks[1..].to_vec()));
        }
    }
    if let Some((n, verb)) = block {
        return Err(Error::Manifest(format!(
            "line {n}: `{verb} (` block is never closed"
        )));
    }
    Ok(out)
}

/// A replacement target: a directory when it starts like a path (as Go
/// decides), else another module.
fn replacement(target: &str) -> Source {
    let is_path = target.starts_with("./")
        || target.starts_with("../")
        || target.starts_with('/')
        || target.starts_with(".\\")
        || target.starts_with("..\\")
        || target.as_bytes().get(1) == Some(&b':')
        || target == "."
        || target == "..";
    if is_path {
        Source::Path(norm_path(target))
    } else {
        Source::Package(target.to_string())
    }
}

fn replace(n: usize, args: &[String], out: &mut Vec<Dep>) -> Result<(), Error> {
    let arrow = args
        .iter()
        .position(|a| a == "=>")
        .ok_or_else(|| Error::Manifest(format!("line {n}: `replace` without `=>`")))?;
    let (Some(old), Some(new)) = (args.first(), args.get(arrow + 1)) else {
        return Err(Error::Manifest(format!("line {n}: incomplete `replace`")));
    };
    out.push(Dep::package(old, replacement(new), "replace"));
    Ok(())
}

/// The modules a go.mod requires, and what `replace` substitutes for them.
pub fn gomod(text: &str) -> Result<Vec<Dep>, Error> {
    let mut out = Vec::new();
    for (n, verb, args) in statements(text)? {
        match verb.as_str() {
            "require" => {
                let m = args.first().ok_or_else(|| {
                    Error::Manifest(format!("line {n}: `require` without a module"))
                })?;
                out.push(Dep::package(m, Source::Registry(None), "require"));
            }
            "replace" => replace(n, &args, &mut out)?,
            v if INERT.contains(&v) => {}
            v => {
                return Err(Error::Manifest(format!(
                    "line {n}: unknown directive `{v}`"
                )))
            }
        }
    }
    Ok(out)
}

/// A go.work: the module directories it `use`s and its `replace`s.
pub fn gowork(text: &str) -> Result<Vec<Dep>, Error> {
    let mut out = Vec::new();
    for (n, verb, args) in statements(text)? {
        match verb.as_str() {
            "use" => {
                let dir = args.first().ok_or_else(|| {
                    Error::Manifest(format!("line {n}: `use` without a directory"))
                })?;
                out.push(Dep::package(
                    norm_path(dir),
                    Source::Path(norm_path(dir)),
                    "use",
                ));
            }
            "replace" => replace(n, &args, &mut out)?,
            "go" | "toolchain" | "godebug" => {}
            v => {
                return Err(Error::Manifest(format!(
                    "line {n}: unknown directive `{v}`"
                )))
            }
        }
    }
    Ok(out)
}

/// Every module go.sum has a checksum for (`module version[/go.mod] hash`).
pub fn gosum(text: &str) -> Vec<Dep> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|m| Dep::package(m, Source::Registry(None), "go.sum"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(deps: Vec<Dep>) -> Vec<(String, Source)> {
        deps.into_iter().map(|d| (d.name, d.source)).collect()
    }

    fn reg(n: &str) -> (String, Source) {
        (n.to_string(), Source::Registry(None))
    }

    #[test]
    fn require_and_replace_single_and_blocks() {
        let t = "module m // the module\n\ngo 1.22\n\nrequire github.com/a/b v1.0.0\nrequire (\n\tgithub.com/c/d v0.1.0 // indirect\n\t\"golang.org/x/e\" v0.2.0\n)\nrequire(\n  f.example/g v1\n)\n\
                 replace github.com/a/b => ./vendor/b\nreplace (\n\tgithub.com/c/d v0.1.0 => evil.example/d v0.0.1\n\tgolang.org/x/e => ../e/\n)\nexclude x.example/y v1\ntool x.example/y/cmd\n";
        assert_eq!(
            pairs(gomod(t).unwrap()),
            [
                reg("github.com/a/b"),
                reg("github.com/c/d"),
                reg("golang.org/x/e"),
                reg("f.example/g"),
                ("github.com/a/b".into(), Source::Path("vendor/b".into())),
                (
                    "github.com/c/d".into(),
                    Source::Package("evil.example/d".into())
                ),
                ("golang.org/x/e".into(), Source::Path("../e".into())),
            ]
        );
    }

    #[test]
    fn what_go_would_reject_is_an_error() {
        for (t, want) in [
            ("require (\n a.example/b v1\n", "never closed"),
            ("replace a.example/b ./b\n", "without `=>`"),
            ("requires a.example/b v1\n", "unknown directive `requires`"),
            ("require \"a.example/b v1\n", "unterminated"),
        ] {
            let e = gomod(t).unwrap_err();
            assert!(e.to_string().contains(want), "{t:?}: {e}");
        }
    }

    #[test]
    fn workspaces_and_sums() {
        let t = "go 1.22\nuse (\n\t./a\n\t./evil\n)\nreplace x.example/y => ./y\n";
        assert_eq!(
            pairs(gowork(t).unwrap()),
            [
                ("a".into(), Source::Path("a".into())),
                ("evil".into(), Source::Path("evil".into())),
                ("x.example/y".into(), Source::Path("y".into())),
            ]
        );
        let s = "github.com/a/b v1.0.0 h1:abc=\ngithub.com/a/b v1.0.0/go.mod h1:def=\n";
        assert_eq!(
            pairs(gosum(s)),
            [reg("github.com/a/b"), reg("github.com/a/b")]
        );
    }
}
